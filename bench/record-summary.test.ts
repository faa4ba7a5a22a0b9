// run.json's misses and ledger from the records this invocation wrote (kept as written) and from those on disk alike.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeEvent } from "../src/trace/events.ts"
import { runMissCounts } from "./eval/sources.ts"
import { runLedger } from "./ledger.ts"
import { makeRecordSummaries } from "./record-summary.ts"
import { RUN_FORMAT_VERSION, type TaskRecord, taskRecordPath } from "./run-format.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-record-summary-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const call = (served: string, extra: Record<string, unknown> = {}) =>
  makeEvent("t", "tool_call", { tool: "f", args: {}, ok: served !== "missed", served, ...extra })

const record = (
  method: string,
  taskId: string,
  finishType: TaskRecord["finishType"],
  events: ReadonlyArray<ReturnType<typeof call>>
): TaskRecord => ({
  formatVersion: RUN_FORMAT_VERSION,
  taskId,
  group: "G1_instruction",
  method,
  model: "m",
  query: "q",
  availableTools: ["f"],
  finalAnswer: "a",
  finishType,
  totals: {
    modelCalls: 1,
    promptTokens: 1,
    completionTokens: 1,
    toolCalls: events.length,
    backtracks: 0,
    wallMs: 1,
    guardrails: {},
    missedToolCalls: events.filter((e) => e.data["served"] === "missed").length
  },
  events: [...events],
  startedAt: "2026-11-27T00:00:00.000Z",
  finishedAt: "2026-11-27T00:00:01.000Z"
})

const RECORDS: ReadonlyArray<TaskRecord> = [
  record("react", "1", "give_answer", [
    call("replayed", { match: "exact" }),
    call("simulated", { simulator: "b" }),
    call("missed")
  ]),
  record("react", "2", "give_up", [call("replayed", { match: "lenient" }), call("simulated", { simulator: "a" })]),
  record("react", "3", "error", [call("replayed", { match: "exact" })]),
  record("smurfs", "1", "give_answer", [call("missed"), call("missed"), call("simulated", { simulator: "a" })])
]

/** A run directory holding RECORDS; the summaries of those of `written` kept as a run writing them keeps them. */
const runDir = (name: string, written: (r: TaskRecord) => boolean) => {
  const run = join(scratch, name)
  const summaries = makeRecordSummaries()
  for (const r of RECORDS) {
    const path = taskRecordPath(run, r.method, r.group, r.taskId)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, JSON.stringify(r))
    if (written(r)) summaries.add(path, r)
  }
  return { run, summaries }
}

describe("record summaries", () => {
  it("give the misses and the ledger that reading every record gives, simulators in the same order", () => {
    const { run, summaries } = runDir("some-known", (r) => r.taskId !== "2")
    const ledger = runLedger(run, summaries.get)
    expect(ledger).toEqual(runLedger(run))
    expect(JSON.stringify(ledger)).toBe(JSON.stringify(runLedger(run)))
    expect(runMissCounts(run, summaries.get)).toEqual(runMissCounts(run))
    // and those are the records' own figures: error records left out
    expect(ledger["react"]).toMatchObject({ toolCalls: 5, replayed: 1, replayedLenient: 1, simulated: 2, missed: 1 })
    expect(Object.keys(ledger["react"]!.simulators)).toEqual(["b", "a"])
    expect(runMissCounts(run)).toEqual({ missedToolCalls: 3, toolCalls: 8, tasksWithMisses: 2, tasks: 3 })
  })

  it("a record this process wrote is not read back", () => {
    const { run, summaries } = runDir("all-known", () => true)
    // the files are no longer records: only what was kept as they were written counts
    for (const r of RECORDS) writeFileSync(taskRecordPath(run, r.method, r.group, r.taskId), "not a record")
    expect(runLedger(run)).toEqual({})
    expect(runLedger(run, summaries.get)["smurfs"]).toMatchObject({ toolCalls: 3, missed: 2, simulated: 1 })
    expect(runMissCounts(run, summaries.get)).toEqual({
      missedToolCalls: 3,
      toolCalls: 8,
      tasksWithMisses: 2,
      tasks: 3
    })
  })
})
