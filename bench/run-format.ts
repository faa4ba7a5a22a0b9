// The run directory's format: the contract between the runner (bench), the evaluators and reports.
//
// <run>/run.json                                  RunConfig, written when the run starts
// <run>/tasks/<method>/<group>/<taskId>.json      TaskRecord, one per task and method, written atomically
// <run>/tasks/<method>/<group>/<taskId>.run<r>.json   agent run r (1..N-1) of the task, with `bench --runs N`
// <run>/converted/<method>/<group>.json           StableToolBench converted predictions (ToolEval's input)
// <run>/eval/<judge>/...                          judge labels and verdicts per task (the evaluators' own)
// <run>/run.lock                                  the writing process (pid, host) while a bench runs
import { z } from "zod"
import { dataRecord } from "../src/trace/data-record.ts"
import { pathInside, safeName } from "../src/trace/file-names.ts"
import { RUN_FORMAT_VERSION } from "../src/trace/record.ts"

// The task record's shape (and the events and totals in it) is the trace layer's: one definition for the
// runner that writes it and every reader (show, converters, judges, reports).
export { RUN_FORMAT_VERSION, runOf, TaskRecord } from "../src/trace/record.ts"

export const RunConfig = z.object({
  formatVersion: z.literal(RUN_FORMAT_VERSION),
  packageVersion: z.string(),
  createdAt: z.string(),
  data: z.string(),
  groups: z.array(z.string()),
  methods: z.array(z.string()),
  model: z.string(),
  /** The model as the server names it, when known. */
  modelName: z.string().optional(),
  /** What the run's model said of itself (context window, native tool calls): a verified replay answers as it. */
  modelInfo: z
    .object({
      spec: z.string(),
      provider: z.string(),
      model: z.string(),
      contextTokens: z.number(),
      supportsTools: z.boolean()
    })
    .optional(),
  envs: z.array(z.string()),
  /** all, relevant, or retrieve:<k>. */
  toolset: z.union([z.enum(["all", "relevant"]), z.string().regex(/^retrieve:\d+$/)]),
  /** Each method's toolset as it ran (a method's own, the profile's, or the run's); absent in runs before it. */
  toolsets: z.record(z.string(), z.string()).optional(),
  /** With --toolset retrieve: the retrieval settings and each task's retrieved set (`<group>/<id>` -> tool names, best first). */
  retrieval: z
    .object({
      settings: z.record(z.string(), z.unknown()),
      sets: z.record(z.string(), z.array(z.string()))
    })
    .optional(),
  limit: z.number().optional(),
  ids: z.array(z.string()).optional(),
  concurrency: z.number(),
  /** Queries per group the run covers (per method), so that reports count tasks not run yet as missing. */
  taskCounts: dataRecord(z.string(), z.number()).optional(),
  /** Everything else the run was started with (step limits, timeouts, seed...). */
  options: z.record(z.string(), z.unknown())
})
export type RunConfig = z.infer<typeof RunConfig>

/**
 * The file name of a task's record (or label) of agent run `agentRun`: `<id>.json` for run 0 (the only one of a run
 * of one, so older directories read the same), `<id>.run<r>.json` after it. safeName writes `.` as `%2E`, so the
 * suffix never meets a task id's own text.
 */
export const runFileName = (taskId: string, agentRun = 0): string =>
  agentRun > 0 ? `${safeName(taskId)}.run${agentRun}.json` : `${safeName(taskId)}.json`

// Method, group and task id come from data: they name files only through safeName, inside the run directory.
export const taskRecordPath = (run: string, method: string, group: string, taskId: string, agentRun = 0) =>
  pathInside(run, "tasks", safeName(method), safeName(group), runFileName(taskId, agentRun))
/** The folder of one method's and group's task records. */
export const taskRecordDir = (run: string, method: string, group: string) =>
  pathInside(run, "tasks", safeName(method), safeName(group))
export const convertedPath = (run: string, method: string, group: string) =>
  pathInside(run, "converted", safeName(method), `${safeName(group)}.json`)
export const runConfigPath = (run: string) => pathInside(run, "run.json")
/** The writer's lock file inside the run directory; its temp and stale copies start with this name too. */
export const LOCK_FILE = "run.lock"
