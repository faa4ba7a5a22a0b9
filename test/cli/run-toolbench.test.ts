// `smurfs run` and `smurfs tools` on one ToolBench task (issue 12 point 3): --data, --env and --query-id.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { MINI_DATA } from "../data.ts"
import { type CliOptions, smurfs as spawnSmurfs } from "./spawn.ts"

/** The CLI with the fixture as its default data (SMURFS_DATA), where a fresh clone has no ../shared/toolbench. */
const smurfs = (args: ReadonlyArray<string>, options: CliOptions = {}) =>
  spawnSmurfs(args, { ...options, env: { SMURFS_DATA: MINI_DATA.path, ...options.env } })

vi.setConfig({ testTimeout: 300_000 })

describe("one ToolBench task from the command line", () => {
  it("smurfs run --query-id runs the task's query on its api_list, its calls replayed from the recorded responses", async () => {
    const r = await smurfs(["run", "--query-id", "588", "--model", "sim", "--env", "replay,offline", "--json"])
    expect(r.code, r.stderr).toBe(0)
    const t = JSON.parse(r.stdout)
    expect(t.taskId).toBe("588")
    expect(t.finishType).toBe("give_answer")
    expect(t.query).toContain("Messi")
    const calls = t.events
      .filter((e: { type: string }) => e.type.endsWith("tool_call"))
      .map((e: { data: { tool: string; ok: boolean; content: string } }) => e.data)
    const search = calls.find((c: { tool: string }) => c.tool === "transfermarkt_search_for_theclique")
    expect(search?.ok).toBe(true)
    // the recorded response of the data's responses.jsonl, not an offline error
    expect(search?.content).toContain("Rosario, Argentina")

    const offline = await smurfs(["run", "--query-id", "588", "--model", "sim", "--env", "offline", "--json"])
    expect(offline.code, offline.stderr).toBe(0)
    const offlineCalls = JSON.parse(offline.stdout).events.filter((e: { type: string }) => e.type.endsWith("tool_call"))
    expect(offlineCalls.length).toBeGreaterThan(0)
    expect(offlineCalls.every((e: { data: { ok: boolean } }) => e.data.ok === false)).toBe(true)
  })

  it("smurfs run --simulator answers calls with a separate simulator model and stores them in StableToolBench's cache layout", async () => {
    const dir = mkdtempSync(join(tmpdir(), "smurfs-run-sim-"))
    const script = join(dir, "simulator.json")
    writeFileSync(
      script,
      JSON.stringify({ $cycle: true, "tool.simulate": [{ error: "", response: "SIMULATED by the simulator" }] })
    )
    // query 588 alone, without recorded responses: every call is a miss the simulator answers
    const data = join(dir, "data")
    const shared = MINI_DATA.path
    mkdirSync(join(data, "queries"), { recursive: true })
    mkdirSync(join(data, "query_ids"), { recursive: true })
    const queries = JSON.parse(readFileSync(join(shared, "queries", "G1_instruction.json"), "utf8")) as Array<{
      query_id: unknown
    }>
    writeFileSync(
      join(data, "queries", "G1_instruction.json"),
      JSON.stringify(queries.filter((q) => String(q.query_id) === "588"))
    )
    writeFileSync(
      join(data, "query_ids", "G1_instruction.json"),
      JSON.stringify({
        "588": JSON.parse(readFileSync(join(shared, "query_ids", "G1_instruction.json"), "utf8"))["588"]
      })
    )
    const store = join(dir, "store")
    // (no --env: with a simulator the default is replay,simulated)
    const r = await smurfs([
      "run",
      "--query-id",
      "588",
      "--data",
      data,
      "--model",
      "sim",
      "--simulator",
      `scripted:${script}`,
      "--store-dir",
      store,
      "--json"
    ])
    expect(r.code, r.stderr).toBe(0)
    const calls = JSON.parse(r.stdout)
      .events.filter((e: { type: string }) => e.type.endsWith("tool_call"))
      .map((e: { data: { ok: boolean; content: string } }) => e.data)
    expect(calls.length).toBeGreaterThan(0)
    expect(
      calls.every((c: { ok: boolean; content: string }) => c.ok && c.content.includes("SIMULATED by the simulator"))
    ).toBe(true)
    expect(readdirSync(join(store, "tool_response_cache", "Data", "theclique_for_Data")).sort()).toEqual([
      "transfermarkt_details.json",
      "transfermarkt_search.json"
    ])
  })

  it("smurfs tools --query-id lists the task's tools; --data without --query-id is bad usage; an unknown id is bad input", async () => {
    const listed = await smurfs(["tools", "--query-id", "588", "--json"])
    expect(listed.code, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout).tools.map((t: { name: string }) => t.name)).toContain(
      "transfermarkt_details_for_theclique"
    )
    const usage = await smurfs(["run", "a query", "--data", "../shared/toolbench"])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain("add --query-id <id>")
    const unknown = await smurfs(["run", "--query-id", "no-such-task", "--model", "sim"])
    expect(unknown.code).toBe(3)
    expect(unknown.stderr).toContain("no-such-task")
  })
})
