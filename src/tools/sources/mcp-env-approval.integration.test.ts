// A stdio MCP server's environment (--mcp-env), the npx start-up timeout's message, and the approval of side-effecting tools, with the real servers from npm.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import type { ApprovalPolicy, AskApproval } from "../approval.ts"
import { findTool } from "../library.ts"
import { loadTools } from "../load.ts"
import type { ToolLibrary } from "../tool.ts"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const bin = (name: string) => join(repo, "node_modules/.bin", name)
const temp: Array<string> = []
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  temp.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true })
})

const open = async (sources: ReadonlyArray<string>, options: Parameters<typeof loadTools>[1] = {}) => {
  const scope = await Effect.runPromise(Scope.make())
  const library = await Effect.runPromise(Scope.provide(loadTools(sources, options), scope))
  return { library, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
const call = (library: ToolLibrary, name: string, args: Record<string, unknown> = {}) =>
  Effect.runPromise(findTool(library, name)!.call(args))

describe("the environment of a stdio MCP server", () => {
  it("gets the SDK's safe set only, plus the variables named with mcpEnv (NAME passes ours, NAME=value sets one)", async () => {
    const env = { ...process.env, SMURFS_TEST_CA: "/etc/ssl/extra.pem", SMURFS_TEST_UNNAMED: "kept-here" }
    const server = `mcp:${bin("mcp-server-everything")}`
    const plain = await open([server], { env })
    try {
      const seen = JSON.parse((await call(plain.library, "get-env")).content) as Record<string, string>
      expect(seen["PATH"]).toBe(process.env["PATH"])
      expect(seen["SMURFS_TEST_CA"]).toBeUndefined()
    } finally {
      await plain.close()
    }
    const named = await open([server], { env, mcpEnv: ["SMURFS_TEST_CA", "SMURFS_TEST_SET=a,b", "SMURFS_TEST_ABSENT"] })
    try {
      const seen = JSON.parse((await call(named.library, "get-env")).content) as Record<string, string>
      expect(seen["SMURFS_TEST_CA"]).toBe("/etc/ssl/extra.pem")
      expect(seen["SMURFS_TEST_SET"]).toBe("a,b")
      expect(seen).not.toHaveProperty("SMURFS_TEST_ABSENT")
      expect(seen).not.toHaveProperty("SMURFS_TEST_UNNAMED")
    } finally {
      await named.close()
    }
  }, 300_000)

  it("a malformed name is refused with what to write", async () => {
    const error = await Effect.runPromise(
      Effect.flip(Effect.scoped(loadTools([`mcp:${bin("mcp-server-everything")}`], { mcpEnv: ["1BAD NAME"] })))
    )
    expect(error.message).toMatch(/--mcp-env "1BAD NAME": give a variable name/)
  })

  it("npx that never starts the server times out saying which of our proxy variables it did not get", async () => {
    // a stand-in for npx stuck on the registry behind a proxy: it never answers
    const dir = tempDir("smurfs-npx-")
    const npx = join(dir, "npx")
    writeFileSync(npx, "#!/bin/sh\nexec sleep 30\n")
    chmodSync(npx, 0o755)
    const started = Date.now()
    const error = await Effect.runPromise(
      Effect.flip(
        Effect.scoped(
          loadTools([`mcp:${npx} -y @example/server`], {
            connectTimeoutMs: 800,
            env: { HTTPS_PROXY: "http://proxy:3128", NODE_EXTRA_CA_CERTS: "/ca.pem", PATH: process.env["PATH"] },
            mcpEnv: ["NODE_EXTRA_CA_CERTS"]
          })
        )
      )
    )
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(error.message).toMatch(/did not start the server within 1 s: it may still be installing the package/)
    expect(error.message).toContain("Your environment sets HTTPS_PROXY, which the server does not get")
    expect(error.message).toContain("--mcp-env HTTPS_PROXY")
    expect(error.message).not.toContain("--mcp-env NODE_EXTRA_CA_CERTS")
  }, 60_000)
})

describe("approval of server-filesystem's tools (write_file is destructive, read_text_file read-only)", () => {
  const withPolicy = async (
    policy: ApprovalPolicy,
    ask: AskApproval | undefined,
    test: (library: ToolLibrary, root: string) => Promise<void>
  ) => {
    const root = tempDir("smurfs-approve-")
    writeFileSync(join(root, "note.txt"), "the answer is 42\n")
    const { library, close } = await open([`mcp:${bin("mcp-server-filesystem")} ${root}`], {
      approval: { policy, ask }
    })
    try {
      await test(library, root)
    } finally {
      await close()
    }
  }
  const write = (library: ToolLibrary, root: string) =>
    call(library, "write_file", { path: join(root, "out.txt"), content: "written" })

  it("none: a write is a failed result the model sees and nothing is written; reads still run", async () => {
    await withPolicy({ kind: "none" }, undefined, async (library, root) => {
      const refused = await write(library, root)
      expect(refused.ok).toBe(false)
      expect(refused.error).toMatch(/"write_file" was not approved \(--approve none; its server marks it destructive\)/)
      expect(existsSync(join(root, "out.txt"))).toBe(false)
      expect(await call(library, "read_text_file", { path: join(root, "note.txt") })).toMatchObject({ ok: true })
    })
  }, 300_000)

  it("ask: the asker sees the call; no refuses it, yes makes it", async () => {
    const asked: Array<string> = []
    let answer = false
    const ask: AskApproval = async (r) => (asked.push(`${r.tool} ${JSON.stringify(r.args)} ${r.reason}`), answer)
    await withPolicy({ kind: "ask" }, ask, async (library, root) => {
      const no = await write(library, root)
      expect(no.error).toMatch(/the user said no/)
      expect(existsSync(join(root, "out.txt"))).toBe(false)
      answer = true
      expect((await write(library, root)).ok).toBe(true)
      expect(readFileSync(join(root, "out.txt"), "utf8")).toBe("written")
      // a read-only tool is never asked about
      await call(library, "read_text_file", { path: join(root, "note.txt") })
      expect(asked).toHaveLength(2)
      expect(asked[0]).toContain('write_file {"path":')
      expect(asked[0]).toContain("its server marks it destructive")
    })
  }, 300_000)

  it("ask with nobody to ask (no terminal): refused, saying why", async () => {
    const ask: AskApproval = () => Promise.reject(new Error("stdin is not a terminal"))
    await withPolicy({ kind: "ask" }, ask, async (library, root) => {
      expect((await write(library, root)).error).toMatch(/nobody to ask: stdin is not a terminal/)
      expect(existsSync(join(root, "out.txt"))).toBe(false)
    })
  }, 300_000)

  it("globs: the named tools run, other side-effecting ones are refused", async () => {
    await withPolicy({ kind: "globs", globs: ["write_*"] }, undefined, async (library, root) => {
      expect((await write(library, root)).ok).toBe(true)
      const moved = await call(library, "move_file", {
        source: join(root, "note.txt"),
        destination: join(root, "moved.txt")
      })
      expect(moved.error).toMatch(/--approve write_\* does not name it/)
      expect(existsSync(join(root, "note.txt"))).toBe(true)
    })
  }, 300_000)
})
