// The pipeline on real MCP servers, as a user runs it: `smurfs run` / `smurfs tools` child processes with
// a scripted model answering the default loop (the fused executor's JSON, short responses as the steps' answers), the
// filesystem server from npm and the scripted MCP server; no process outlives a run.
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { isKind } from "../src/trace/events.ts"

const repo = fileURLToPath(new URL("..", import.meta.url))
const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
const nodeOk = major > 22 || (major === 22 && minor >= 18)

const smurfs = (...args: string[]) =>
  promisify(execFile)(process.execPath, ["bin/smurfs.js", ...args], {
    cwd: repo,
    env: { ...process.env, NO_COLOR: "1" }
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr })
  )

const tmp = () => mkdtempSync(join(tmpdir(), "smurfs-mcp-run-"))

const script = (dir: string, replies: Record<string, unknown>) => {
  const path = join(dir, "script.json")
  writeFileSync(path, JSON.stringify(replies))
  return path
}

/**
 * Pids of live (not zombie) fake MCP servers started with this tool count: their argv holds the script
 * and then the count as separate words (the smurfs process has them inside one --tools word).
 */
const fakeServersWith = (count: string): Array<number> =>
  readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return []
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return []
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
      return argv.some((word, i) => word.endsWith("test/fake-servers/mcp.ts") && argv[i + 1] === count)
        ? [Number(entry)]
        : []
    } catch {
      return []
    }
  })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe.skipIf(!nodeOk)(`the pipeline on MCP servers (needs Node 22.18+, found ${process.versions.node})`, () => {
  it("answers from a file read through @modelcontextprotocol/server-filesystem", async () => {
    const dir = tmp()
    writeFileSync(join(dir, "note.txt"), "The meeting moved to Thursday 3 pm.\n")
    const path = join(dir, "note.txt")
    const model = script(dir, {
      planner: [{ subtasks: ["Read note.txt"] }],
      "executor.fused": [{ thought: "Read the note with the file tool.", tool: "read_text_file", arguments: { path } }],
      verifier: [{ status: "solved", reason: "The note was read." }],
      "answerer.final": [{ answer: "The note says the meeting moved to Thursday 3 pm." }]
    })
    const r = await smurfs(
      "run",
      `What does ${path} say?`,
      "--model",
      `scripted:${model}`,
      "--tools",
      `mcp:node_modules/.bin/mcp-server-filesystem ${dir}`,
      "--json"
    )
    expect(r.code).toBe(0)
    const trajectory = JSON.parse(r.stdout)
    expect(trajectory.finishType).toBe("give_answer")
    const call = trajectory.events.find((e: { type: string }) => isKind(e, "tool_call"))
    expect(call.data).toMatchObject({
      tool: "read_text_file",
      ok: true,
      content: "The meeting moved to Thursday 3 pm.\n"
    })
    expect(trajectory.events[0].data.tools).toContain("list_directory")
    // the default loop: one request for the call, the short file content is the step's answer (no Answer agent call)
    expect(
      trajectory.events
        .filter((e: { type: string }) => isKind(e, "model_call"))
        .map((e: { data: { role: string } }) => e.data.role)
    ).toEqual(["planner", "executor.fused", "verifier", "answerer.final"])
  }, 300_000)

  it("a failing MCP tool is excluded and the next one answers; the run goes on", async () => {
    const dir = tmp()
    const model = script(dir, {
      planner: [{ subtasks: ["Add 2 and 3"] }],
      // the default loop: after the failed call the same exchange asks for another tool and its arguments
      "executor.fused": [
        { thought: "Try the broken tool first.", tool: "broken", arguments: {} },
        { tool: "add", arguments: { a: 2, b: 3 } }
      ],
      verifier: [{ status: "solved", reason: "The sum is given." }],
      "answerer.final": [{ answer: "5" }]
    })
    const r = await smurfs(
      "run",
      "What is 2 + 3?",
      "--model",
      `scripted:${model}`,
      "--tools",
      `mcp:${process.execPath} test/fake-servers/mcp.ts`,
      "--json"
    )
    expect(r.code).toBe(0)
    const trajectory = JSON.parse(r.stdout)
    const calls = trajectory.events
      .filter((e: { type: string }) => isKind(e, "tool_call"))
      .map((e: { data: unknown }) => e.data)
    expect(calls).toMatchObject([
      { tool: "broken", ok: false, error: expect.stringContaining("the widget is broken") },
      { tool: "add", ok: true, content: "5" }
    ])
    expect(trajectory.finalAnswer).toBe("5")
  }, 300_000)

  it("smurfs tools lists an MCP server's tools", async () => {
    const r = await smurfs("tools", "--tools", `mcp:${process.execPath} test/fake-servers/mcp.ts 20`, "--json")
    expect(r.code).toBe(0)
    const listed = JSON.parse(r.stdout)
    expect(listed.tools).toHaveLength(20)
    expect(listed.tools[0]).toMatchObject({ name: "add", parameters: { type: "object", required: ["a", "b"] } })
    const bad = await smurfs("tools", "--tools", "mcp:no-such-mcp-server")
    expect(bad.code).toBe(3)
    expect(bad.stderr).toContain("was not found")
  }, 300_000)

  it("smurfs doctor --tools checks each source and says what to fix", async () => {
    const r = await smurfs(
      "doctor",
      "--tools",
      `mcp:${process.execPath} test/fake-servers/mcp.ts`,
      "--tools",
      "mcp:no-such-mcp-server",
      "--tools",
      "demo"
    )
    expect(r.code).toBe(3)
    expect(r.stdout).toMatch(
      /✓ mcp:.*fake-servers\/mcp\.ts\n {4}fake-mcp 1\.0\.0: 20 tools listed in \d+ ms, ping \d+ ms/
    )
    expect(r.stdout).toContain("✗ mcp:no-such-mcp-server")
    expect(r.stdout).toContain("demo: 5 tools")
    const good = await smurfs("doctor", "--tools", "demo")
    expect(good.code).toBe(0)
    expect(good.stdout).toContain("All tool sources answer.")
  }, 300_000)

  for (const signal of ["SIGTERM", "SIGINT"] as const)
    it(`${signal} during a tool call leaves no MCP server process behind`, async () => {
      const dir = tmp()
      const marker = String(30 + (signal === "SIGTERM" ? 1 : 2)) // a tool count no other test uses, to find this server's process
      const model = script(dir, {
        planner: [{ subtasks: ["Wait"] }],
        "executor.fused": [{ thought: "Wait a minute.", tool: "sleep", arguments: { ms: 60_000 } }]
      })
      const child = spawn(
        process.execPath,
        [
          "bin/smurfs.js",
          "run",
          "Wait a minute",
          "--model",
          `scripted:${model}`,
          "--tools",
          `mcp:${process.execPath} test/fake-servers/mcp.ts ${marker}`
        ],
        {
          cwd: repo,
          env: { ...process.env, NO_COLOR: "1" },
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      // the live view shows the thought; the scripted model answers at once, so the call is in flight right after
      for (let i = 0; i < 200 && !stderr.includes("Wait a minute."); i++) await sleep(50)
      await sleep(500)
      expect(fakeServersWith(marker)).toHaveLength(1)
      child.kill(signal)
      const code = await exited
      expect(code).toBe(130)
      // the run closes its sources before it exits: the server must already be gone (a moment for the kernel)
      let left = fakeServersWith(marker)
      for (let i = 0; i < 10 && left.length > 0; i++) {
        await sleep(50)
        left = fakeServersWith(marker)
      }
      expect(left).toEqual([])
    }, 300_000)
})
