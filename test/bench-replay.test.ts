// A verified replay (`bench --replay-from`, issue 31 §6): a finished run again from its recorded model replies, with no
// model at all, every trajectory checked against its record; a tampered record is a divergence.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runBenchSettings } from "../bench/app.ts"
import { silentProgress } from "../bench/progress.ts"
import { REPLAY_REPORT_FILE, ReplayReport, runReplay } from "../bench/replay.ts"
import { type TaskRecord, taskRecordPath } from "../bench/run-format.ts"
import { benchSettings } from "../bench/settings.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import { MINI_DATA } from "./data.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-replay-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const GROUP = "G1_instruction"
const source = join(scratch, "source")

/** A model layer that fails the test if anything calls it: a replay must make no model call. */
const forbidden: { calls: number } = { calls: 0 }
const noModel = Layer.succeed(
  LanguageModel,
  LanguageModel.of({
    info: { spec: "none", provider: "none", model: "none", contextTokens: 8192, supportsTools: true },
    generate: () => Effect.sync(() => forbidden.calls++).pipe(Effect.andThen(Effect.die("a replay called the model")))
  })
)

const replay = (out: string, from = source) =>
  Effect.runPromise(runReplay(benchSettings({ out, replayFrom: from }), silentProgress, noModel))

beforeAll(async () => {
  const settings = benchSettings({
    out: source,
    data: MINI_DATA.path,
    model: "sim",
    groups: [GROUP],
    limit: 3,
    methods: ["smurfs", "react", "dfsdt"],
    runs: 2
  })
  const outcome = await Effect.runPromise(runBenchSettings(settings, silentProgress))
  expect(outcome.kind).toBe("ran")
})

describe("a verified replay", () => {
  it("reproduces every trajectory of a recorded run with zero model calls and zero divergences", async () => {
    const { report, summary } = await replay(join(scratch, "replay"))
    expect(forbidden.calls).toBe(0)
    expect(summary).toMatchObject({ total: 18, recorded: 18, errors: 0 })
    expect(report).toMatchObject({ checked: 18, identical: 18, divergences: [], skipped: 0, modelCalls: 0 })
    // the report is kept in the replay's run directory
    const stored = ReplayReport.parse(JSON.parse(readFileSync(join(scratch, "replay", REPLAY_REPORT_FILE), "utf8")))
    expect(stored.identical).toBe(18)
  })

  it("reports a tampered record as a divergence, naming the task, its run and the first differing event", async () => {
    const tampered = join(scratch, "tampered")
    // a copy of the run whose react run 1 of one task had another tool response recorded
    await Effect.runPromise(
      runBenchSettings(
        benchSettings({
          out: tampered,
          data: MINI_DATA.path,
          model: "sim",
          groups: [GROUP],
          limit: 3,
          methods: ["react"],
          runs: 2
        }),
        silentProgress
      )
    )
    const path = taskRecordPath(tampered, "react", GROUP, "588", 1)
    const record = JSON.parse(readFileSync(path, "utf8")) as TaskRecord
    const index = record.events.findIndex((e) => e.type.endsWith("tool_call"))
    expect(index).toBeGreaterThanOrEqual(0)
    record.events[index]!.data["content"] = "a response the tool never gave"
    writeFileSync(path, JSON.stringify(record))
    // and another task's final answer was edited
    const answerPath = taskRecordPath(tampered, "react", GROUP, "608")
    const answered = JSON.parse(readFileSync(answerPath, "utf8")) as TaskRecord
    answered.finalAnswer = `(edited) ${answered.finalAnswer}`
    writeFileSync(answerPath, JSON.stringify(answered))

    const { report } = await replay(join(scratch, "tampered-replay"), tampered)
    expect(forbidden.calls).toBe(0)
    expect(report).toMatchObject({ checked: 6, identical: 4, modelCalls: 0 })
    expect(report.divergences).toEqual([
      expect.objectContaining({
        method: "react",
        taskId: "608",
        where: expect.stringMatching(/^final answer: recorded "\(edited\) /)
      }),
      expect.objectContaining({
        method: "react",
        taskId: "588",
        run: 1,
        event: index + 1,
        where: expect.stringMatching(/^tool_call content: recorded "a response the tool never gave", replayed /)
      })
    ])
  })

  it("refuses a directory that is not a run", async () => {
    await expect(replay(join(scratch, "x"), join(scratch, "nothing-here"))).rejects.toThrow(/no run.json/)
  })
})
