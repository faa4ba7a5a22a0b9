// `smurfs run` as a user runs it: a child process with the scripted demo model and the demo tools.
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { formatEvent } from "../../src/cli/live-view.ts"
import { makeEvent } from "../../src/trace/events.ts"

const repo = fileURLToPath(new URL("../../", import.meta.url))
const query = "What is 12% of the height of Mount Everest in feet?"
const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
const nodeOk = major > 22 || (major === 22 && minor >= 18)

const smurfsIn = (env: Record<string, string>, command: ReadonlyArray<string>, ...args: string[]) =>
  promisify(execFile)(process.execPath, ["bin/smurfs.js", ...command, ...args], {
    cwd: repo,
    env: { ...process.env, NO_COLOR: "1", ...env }
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr })
  )
const smurfs = (...args: string[]) => smurfsIn({}, ["run"], ...args)

describe.skipIf(!nodeOk)(`smurfs run (needs Node 22.18+, found ${process.versions.node})`, () => {
  it("answers the demo query through real demo tool calls and streams each step", async () => {
    const r = await smurfs(query, "--model", "scripted:examples/demo-script.json", "--tools", "demo")
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toContain("3483.86 feet")
    expect(r.stderr).toContain("Plan:")
    expect(r.stderr).toContain("Subtask 2: Calculate 12% of the height of Mount Everest in feet")
    // the tool results are the demo tools' own, not the script's
    expect(r.stderr).toContain('call convert_units {"value":8849,"from":"m","to":"ft"}')
    expect(r.stderr).toContain('"result":29032.152231')
    expect(r.stderr).toContain('"result":3483.85826772')
    expect(r.stderr).toContain("verifier: pending")
  }, 300_000)

  it("prints only the trajectory with --json", async () => {
    const r = await smurfs(query, "--model", "scripted:examples/demo-script.json", "--json")
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    const t = JSON.parse(r.stdout)
    expect(t.finishType).toBe("give_answer")
    expect(t.taskId).toMatch(/^[0-9a-f]{12}$/)
    expect(t.totals.toolCalls).toBe(3)
  }, 300_000)

  it("takes SMURFS_DATA as a default for --query-id, never as a request without one (run and tools)", async () => {
    const env = { SMURFS_DATA: "/nonexistent/toolbench" }
    const run = await smurfsIn(env, ["run"], query, "--model", "scripted:examples/demo-script.json", "--json")
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const tools = await smurfsIn(env, ["tools"], "--tools", "demo")
    expect(tools.code).toBe(0)
    expect(tools.stdout).toContain("convert_units")
    // the flag itself, without a task to find, is still a mistake
    const given = await smurfsIn({}, ["run"], query, "--data", "/nonexistent/toolbench")
    expect(given.code).toBe(2)
    expect(given.stderr).toContain("add --query-id <id>")
    const givenTools = await smurfsIn({}, ["tools"], "--data", "/nonexistent/toolbench")
    expect(givenTools.code).toBe(2)
  }, 300_000)

  it("exits with BadInput on a bad model spec and Usage without a query", async () => {
    const bad = await smurfs(query, "--model", "scripted:examples/missing.json")
    expect(bad.code).toBe(3)
    expect(bad.stderr).toContain("cannot read the script file")
    const usage = await smurfs()
    expect(usage.code).toBe(2)
  }, 300_000)
})

describe("live view", () => {
  it("shows a backtrack and a guardrail readably", () => {
    const lines = [
      ...formatEvent(makeEvent("t", "backtrack", { subtask: 0, fromDepth: 1, toDepth: 0, tool: "tool_a" })),
      ...formatEvent(
        makeEvent("t", "guardrail", { guardrail: "unknown_tool", role: "executor.choose", error: "no tool named x" })
      ),
      ...formatEvent(makeEvent("t", "model_call", { role: "planner" }))
    ]
    expect(lines).toEqual([
      "  backtrack from depth 1 to 0; tool_a excluded there",
      "  guardrail unknown_tool (executor.choose): no tool named x"
    ])
  })

  it("shows a failed model call of every method: Smurfs names the role, ReAct and DFSDT give the message", () => {
    expect(
      formatEvent(makeEvent("t", "error", { role: "verifier", tag: "MalformedOutput", error: "bad JSON" }))
    ).toEqual(["  verifier failed: bad JSON"])
    expect(formatEvent(makeEvent("t", "error", { tag: "Timeout", message: "no reply in 60 s" }))).toEqual([
      "  model call failed: no reply in 60 s"
    ])
  })
})
