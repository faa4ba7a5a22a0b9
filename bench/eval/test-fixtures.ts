// Test helper: synthetic run directories whose task records are validated against the run format's zod schema.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { writeJsonAtomic } from "../../src/trace/atomic-write.ts"
import { RUN_FORMAT_VERSION, RunConfig, runConfigPath, TaskRecord, taskRecordPath } from "../run-format.ts"

/** Atomic JSON write, as a run writes its files, for fixtures. */
export const writeJson = (file: string, value: unknown): Promise<void> =>
  Effect.runPromise(writeJsonAtomic(file, value))

export interface FakeTask {
  readonly taskId: string
  readonly method?: string
  readonly group?: string
  readonly model?: string
  readonly query?: string
  readonly finalAnswer?: string
  readonly finishType?: "give_answer" | "give_up"
  /** Tool calls as (tool, ok, content). */
  readonly calls?: ReadonlyArray<{ tool: string; ok: boolean; content: string; args?: Record<string, unknown> }>
  readonly modelCalls?: number
  readonly promptTokens?: number
  readonly completionTokens?: number
  readonly wallMs?: number
  /** Guards of ours that ended the task (model-call-budget, planner-attempts). */
  readonly guards?: ReadonlyArray<"model-call-budget" | "planner-attempts">
}

/** A TaskRecord for a fake task; parsing it through the schema fails the test on any drift from the format. */
export const fakeRecord = (t: FakeTask): TaskRecord => {
  const time = "2026-01-01T00:00:00.000Z"
  const events = (t.calls ?? []).map((c, i) => ({
    specversion: "1.0" as const,
    id: `e${i}`,
    source: "smurfs",
    type: "dev.smurfs.tool_call",
    time,
    subject: t.taskId,
    data: {
      tool: c.tool,
      args: c.args ?? {},
      ok: c.ok,
      content: c.content,
      ...(c.ok ? {} : { error: "tool failed" }),
      durationMs: 1
    }
  }))
  return TaskRecord.parse({
    formatVersion: RUN_FORMAT_VERSION,
    taskId: t.taskId,
    group: t.group ?? "G1_instruction",
    method: t.method ?? "smurfs",
    model: t.model ?? "scripted:test",
    query: t.query ?? `query of task ${t.taskId}`,
    availableTools: (t.calls ?? []).map((c) => c.tool),
    finalAnswer: t.finalAnswer ?? `answer of task ${t.taskId}`,
    finishType: t.finishType ?? "give_answer",
    ...(t.guards === undefined ? {} : { guards: t.guards }),
    totals: {
      modelCalls: t.modelCalls ?? 4,
      promptTokens: t.promptTokens ?? 1000,
      completionTokens: t.completionTokens ?? 100,
      toolCalls: (t.calls ?? []).length,
      backtracks: 0,
      wallMs: t.wallMs ?? 2000,
      guardrails: {}
    },
    events,
    startedAt: time,
    finishedAt: time
  })
}

/** A fresh run directory under the OS temp folder with run.json and one record per task. */
export const writeFakeRun = async (
  tasks: ReadonlyArray<FakeTask>,
  dir = mkdtempSync(join(tmpdir(), "smurfs-run-"))
): Promise<string> => {
  const records = tasks.map(fakeRecord)
  await writeJson(
    runConfigPath(dir),
    RunConfig.parse({
      formatVersion: RUN_FORMAT_VERSION,
      packageVersion: "0.0.0-test",
      createdAt: "2026-01-01T00:00:00.000Z",
      data: "test",
      groups: [...new Set(records.map((r) => r.group))],
      methods: [...new Set(records.map((r) => r.method))],
      model: records[0]?.model ?? "scripted:test",
      envs: ["replay"],
      toolset: "relevant",
      concurrency: 1,
      options: {}
    })
  )
  for (const r of records) await writeJson(taskRecordPath(dir, r.method, r.group, r.taskId), r)
  return dir
}
