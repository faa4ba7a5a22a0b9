// MCP servers that misbehave on purpose (real SDK servers over stdio): a `tools/list` that never ends is
// stopped with a message, and a result larger than the transport accepts costs one call, not the server.
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Cause, Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { findTool } from "../../src/tools/library.ts"
import { loadTools } from "../../src/tools/load.ts"
import type { ToolLibrary } from "../../src/tools/tool.ts"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const fake = (mode: string) => `mcp:${process.execPath} ${join(repo, "test/fake-servers/mcp.ts")} 20 ${mode}`

/** Load a server's tools; `timeoutMs` bounds the start and each call (12 MB through a pipe is slow on a loaded machine). */
const open = async (source: string, timeoutMs = 10_000) => {
  const scope = await Effect.runPromise(Scope.make())
  const exit = await Effect.runPromiseExit(
    Scope.provide(loadTools([source], { connectTimeoutMs: timeoutMs, callTimeoutMs: timeoutMs }), scope)
  )
  return { exit, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const failureText = (exit: Exit.Exit<unknown, unknown>): string =>
  Exit.isFailure(exit) ? String((Cause.squash(exit.cause) as Error).message) : ""

const call = (library: ToolLibrary, name: string, args: Record<string, unknown> = {}) =>
  Effect.runPromise(findTool(library, name)!.call(args))

describe("an MCP server whose tools/list never ends", () => {
  it.each([
    ["the same cursor again and again", "cursor-loop", /repeated the cursor "again"/],
    ["a new cursor on every empty page", "endless-cursors", /more than \d+ pages/]
  ])(
    "%s: loading stops within seconds with a message naming the problem",
    async (_label, mode, reason) => {
      const started = Date.now()
      const { exit, close } = await open(fake(mode))
      await close()
      expect(Exit.isFailure(exit)).toBe(true)
      const text = failureText(exit)
      expect(text).toMatch(reason)
      expect(text).toMatch(/tools\/list/)
      expect(Date.now() - started).toBeLessThan(15_000)
    },
    30_000
  )
})

describe("an MCP tool result larger than the stdio transport accepts", () => {
  it("fails that call saying what happened, restarts the server once, and its other tools keep working", async () => {
    // (a start or call that times out instead would say "did not answer", not what this test is about)
    const { exit, close } = await open(fake("huge"), 60_000)
    try {
      expect(Exit.isSuccess(exit)).toBe(true)
      const library = (exit as Exit.Success<ToolLibrary>).value
      expect(await call(library, "add", { a: 2, b: 3 })).toMatchObject({ ok: true, content: "5" })
      const huge = await call(library, "huge", { mb: 12 })
      expect(huge.ok).toBe(false)
      expect(huge.error).toMatch(/larger than/)
      expect(huge.error).toMatch(/restarted/)
      expect(huge.error).not.toMatch(/has stopped/)
      expect(await call(library, "add", { a: 4, b: 5 })).toMatchObject({ ok: true, content: "9" })
      // a second one: the server was restarted once already, and the message says so
      const again = await call(library, "huge", { mb: 12 })
      expect(again.ok).toBe(false)
      expect(again.error).toMatch(/larger than/)
      const after = await call(library, "add", { a: 1, b: 1 })
      expect(after.ok).toBe(false)
      expect(after.error).toMatch(/larger than .* once already/)
    } finally {
      await close()
    }
  }, 300_000)
})
