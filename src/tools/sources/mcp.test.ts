import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeMcpHttp, startFakeMcpHttp } from "../../../test/fake-servers/mcp.ts"
import { childProcesses } from "../../../test/processes.ts"
import { checkArgs } from "../../agents/guardrails.ts"
import { guardrailDefaults } from "../../agents/smurfs-options.ts"
import { findTool } from "../library.ts"
import { loadTools } from "../load.ts"
import type { ToolLibrary } from "../tool.ts"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const fake = `mcp:${process.execPath} ${join(repo, "test/fake-servers/mcp.ts")}`
const bin = (name: string) => join(repo, "node_modules/.bin", name)

/** Open the sources in a scope the test closes itself, to look at what closing does. */
const open = async (sources: ReadonlyArray<string>, options: Parameters<typeof loadTools>[1] = {}) => {
  const scope = await Effect.runPromise(Scope.make())
  const library = await Effect.runPromise(Scope.provide(loadTools(sources, options), scope))
  return { library, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const call = (library: ToolLibrary, name: string, args: Record<string, unknown> = {}) =>
  Effect.runPromise(findTool(library, name)!.call(args))

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Child pids of this process whose command line contains `marker`. */
const childrenMatching = async (marker: string): Promise<Array<number>> =>
  childProcesses()
    .filter((c) => c.command.includes(marker))
    .map((c) => c.pid)

/** Poll until `check` holds (a killed process takes a moment to be reaped); false if it never does within 2 s. */
const eventually = async (check: () => boolean | Promise<boolean>): Promise<boolean> => {
  for (let i = 0; i < 40; i++) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return false
}

describe("MCP over stdio (the scripted server)", () => {
  it("lists the tools with model-safe names and JSON Schema parameters that the guardrails check", async () => {
    const { library, close } = await open([fake])
    try {
      expect(library.tools).toHaveLength(20)
      expect(library.tools.map((t) => t.name)).toContain("files_search")
      const add = findTool(library, "add")!
      expect(add.description).toBe("Add two numbers and return the sum.")
      expect(add.meta).toMatchObject({ server: "fake-mcp", mcpTool: "add" })
      expect(checkArgs(add, { a: 1 }, guardrailDefaults, "")).toMatchObject({ guardrail: "missing_params" })
      expect(checkArgs(add, { a: 1, b: "two" }, guardrailDefaults, "")).toMatchObject({ guardrail: "param_rules" })
      expect(checkArgs(add, { a: 1, b: 2 }, guardrailDefaults, "")).toBeUndefined()
      expect(checkArgs(findTool(library, "weather")!, { city: "Rome" }, guardrailDefaults, "")).toMatchObject({
        guardrail: "param_rules"
      })
    } finally {
      await close()
    }
  }, 300_000)

  it("turns text, structured content, isError and protocol errors into results", async () => {
    const { library, close } = await open([fake])
    try {
      expect(await call(library, "add", { a: 2, b: 3 })).toEqual({ ok: true, content: "5" })
      expect(await call(library, "files_search", { pattern: "*.md" })).toEqual({
        ok: true,
        content: "no file matches *.md"
      })
      expect(JSON.parse((await call(library, "weather", { city: "Oslo" })).content)).toEqual({
        temperature: 4,
        conditions: "snow"
      })
      const broken = await call(library, "broken")
      expect(broken).toMatchObject({ ok: false, content: "the widget is broken" })
      expect(broken.error).toContain("the widget is broken")
      const protocol = await call(library, "protocol_error")
      expect(protocol.ok).toBe(false)
      expect(protocol.error).toContain("the fake server rejects this request")
    } finally {
      await close()
    }
  }, 300_000)

  it("times a silent call out, and the server still answers the next one", async () => {
    const { library, close } = await open([fake], { callTimeoutMs: 300 })
    try {
      const slow = await call(library, "sleep", { ms: 10_000 })
      expect(slow.ok).toBe(false)
      expect(slow.error).toContain("within 300 ms")
      expect(await call(library, "add", { a: 1, b: 1 })).toEqual({ ok: true, content: "2" })
    } finally {
      await close()
    }
  }, 300_000)

  it("after a crash, every tool of that server fails with the reason and the process is gone", async () => {
    const { library, close } = await open([fake])
    try {
      const [pid] = await childrenMatching("fake-servers/mcp.ts")
      expect(pid).toBeDefined()
      const crash = await call(library, "crash")
      expect(crash.ok).toBe(false)
      const after = await call(library, "add", { a: 1, b: 2 })
      expect(after.ok).toBe(false)
      expect(after.error).toContain("has stopped")
      expect(after.error).toContain("crashed on purpose")
      expect(
        await eventually(() => !alive(pid!) || childrenMatching("fake-servers/mcp.ts").then((p) => p.length === 0))
      ).toBe(true)
    } finally {
      await close()
    }
  }, 300_000)

  it("stops the server process when the scope closes", async () => {
    const { library, close } = await open([fake])
    expect(library.tools.length).toBe(20)
    const pids = await childrenMatching("fake-servers/mcp.ts")
    expect(pids).toHaveLength(1)
    await close()
    expect(await eventually(async () => (await childrenMatching("fake-servers/mcp.ts")).length === 0)).toBe(true)
  }, 300_000)

  it("says what to do when the command does not exist or is not an MCP server", async () => {
    const missing = await Effect.runPromise(Effect.flip(Effect.scoped(loadTools(["mcp:no-such-mcp-server --flag"]))))
    expect(missing.message).toContain('the command "no-such-mcp-server" was not found')
    const notMcp = await Effect.runPromise(
      Effect.flip(
        Effect.scoped(
          loadTools([`mcp:${process.execPath} -e "console.error('not a server'); setTimeout(() => {}, 60000)"`], {
            connectTimeoutMs: 500
          })
        )
      )
    )
    expect(notMcp.message).toContain("did not answer within 500 ms")
    expect(await eventually(async () => (await childrenMatching("not a server")).length === 0)).toBe(true)
    const empty = await Effect.runPromise(Effect.flip(Effect.scoped(loadTools(["mcp:"]))))
    expect(empty.message).toContain("needs the command")
  }, 300_000)

  it("combines sources; names that clash are prefixed with their server's name", async () => {
    const { library, close } = await open([fake, fake, "demo"])
    try {
      const names = library.tools.map((t) => t.name)
      expect(names).toContain("fake-mcp_add")
      expect(names).toContain("fake-mcp_2_add")
      expect(names).toContain("calculator")
      expect(new Set(names).size).toBe(names.length)
      expect(await call(library, "fake-mcp_2_add", { a: 4, b: 5 })).toEqual({ ok: true, content: "9" })
    } finally {
      await close()
    }
  }, 300_000)
})

describe("MCP over Streamable HTTP (loopback)", () => {
  let server: FakeMcpHttp
  beforeAll(async () => {
    server = await startFakeMcpHttp({ requiredAuthorization: "Bearer s3cret-t0ken-value" })
  })
  afterAll(() => server.close())

  it("sends the Authorization header from the named environment variable and calls tools", async () => {
    const { library, close } = await open([`mcp+${server.url}#auth=MY_MCP_AUTH`], {
      env: { MY_MCP_AUTH: "Bearer s3cret-t0ken-value" }
    })
    try {
      expect(library.tools).toHaveLength(20)
      expect(await call(library, "echo", { text: "over http" })).toEqual({ ok: true, content: "over http" })
      expect(server.authorizations.at(-1)).toBe("Bearer s3cret-t0ken-value")
    } finally {
      await close()
    }
  }, 300_000)

  it("without the header, says which variable to set and never shows a secret", async () => {
    const error = await Effect.runPromise(Effect.flip(Effect.scoped(loadTools([`mcp+${server.url}`], { env: {} }))))
    expect(error.message).toContain("SMURFS_MCP_AUTHORIZATION")
    const wrong = await Effect.runPromise(
      Effect.flip(
        Effect.scoped(
          loadTools([`mcp+${server.url}`], { env: { SMURFS_MCP_AUTHORIZATION: "Bearer wrong-t0ken-value" } })
        )
      )
    )
    expect(wrong.message).toContain("401")
    expect(wrong.message).not.toContain("wrong-t0ken-value")
  }, 300_000)

  it("says so when nothing listens at the URL", async () => {
    const error = await Effect.runPromise(
      Effect.flip(Effect.scoped(loadTools(["mcp+http://127.0.0.1:9/mcp"], { env: {} })))
    )
    expect(error.message).toContain("cannot reach http://127.0.0.1:9/mcp")
  }, 300_000)
})

describe("MCP servers from npm", () => {
  it("server-everything: its tools are listed and called", async () => {
    const { library, close } = await open([`mcp:${bin("mcp-server-everything")}`])
    try {
      expect(library.tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(["echo", "get-sum", "get-structured-content"])
      )
      expect(await call(library, "get-sum", { a: 2, b: 40 })).toMatchObject({
        ok: true,
        content: expect.stringContaining("42")
      })
      const structured = await call(library, "get-structured-content", { location: "Chicago" })
      expect(structured.ok).toBe(true)
      expect(structured.content).toMatch(/temperature/i)
    } finally {
      await close()
    }
  }, 300_000)

  it("server-filesystem: reads a file inside its root and refuses one outside", async () => {
    const root = mkdtempSync(join(tmpdir(), "smurfs-mcp-fs-"))
    writeFileSync(join(root, "note.txt"), "the answer is 42\n")
    const { library, close } = await open([`mcp:${bin("mcp-server-filesystem")} ${root}`])
    try {
      expect(await call(library, "read_text_file", { path: join(root, "note.txt") })).toMatchObject({
        ok: true,
        content: "the answer is 42\n"
      })
      const outside = await call(library, "read_text_file", { path: "/etc/hostname" })
      expect(outside.ok).toBe(false)
      expect(outside.error).toMatch(/access denied|outside/i)
    } finally {
      await close()
    }
  }, 300_000)
})
