// The evaluators' stored results: pass labels and win verdicts per task, one JSON file each.
import { z } from "zod"
import { pathInside, safeName } from "../../src/trace/file-names.ts"
import { runFileName } from "../run-format.ts"

/** ToolEval's AnswerStatus. */
export const AnswerStatus = z.enum(["Solved", "Unsolved", "Unsure"])
export type AnswerStatus = z.infer<typeof AnswerStatus>

/** Which step of the judge decided a label: a rule (no model call), the answer-only check, or the trajectory check. */
export const PassStage = z.enum(["rule", "answer", "trajectory"])
export type PassStage = z.infer<typeof PassStage>

/**
 * The most judge runs (ToolEval's evaluate_times, `--k`) a label file may hold. Run keys are "0".."31":
 * a hostile key such as "1e9" or "Infinity" would otherwise size the table of runs.
 */
export const MAX_JUDGE_RUNS = 32

/** A judge run's key in a label file: a whole number from 0 to MAX_JUDGE_RUNS - 1, written plainly. */
export const RunKey = z.string().refine((key) => /^(0|[1-9][0-9]*)$/.test(key) && Number(key) < MAX_JUDGE_RUNS, {
  error: (issue) =>
    `the judge run key ${JSON.stringify(issue.input)} is not a whole number from 0 to ${MAX_JUDGE_RUNS - 1}`
})

export const PassRun = z.object({
  label: AnswerStatus,
  reason: z.string(),
  stage: PassStage,
  /** The sampling seed of this judge run (each run has its own, so K runs differ as ToolEval's do). */
  seed: z.number().optional()
})
export type PassRun = z.infer<typeof PassRun>

/** `<run>/eval/<judge>/pass/<method>/<group>/<taskId>.json`: K judge runs keyed "0".."K-1". */
export const PassLabels = z.object({
  taskId: z.string(),
  method: z.string(),
  group: z.string(),
  judge: z.string(),
  /** Which judge texts ran: "smurfs" (our wording) or "stabletoolbench:<dir>" (ToolEval's template). */
  prompts: z.string().optional(),
  /** The judge runs asked for (K) when these labels were made. */
  k: z.number().optional(),
  /** The profile of the run whose answers were judged (`--profile`); absent in older files and for `improved`. */
  profile: z.string().optional(),
  /** The agent run whose answer was judged (`bench --runs N`); absent for run 0. Not the judge runs (`runs`). */
  agentRun: z.number().int().min(0).optional(),
  runs: z.record(RunKey, PassRun)
})
export type PassLabels = z.infer<typeof PassLabels>

/** How a win-rate round was decided. */
export const RoundStage = z.enum(["missing", "passed", "solved", "unsure", "identical", "judge"])
export type RoundStage = z.infer<typeof RoundStage>

export const WinRound = z.object({
  winner: z.enum(["candidate", "reference"]),
  /** The order the answers were shown in (seeded shuffle). */
  order: z.array(z.enum(["candidate", "reference"])),
  stage: RoundStage,
  reason: z.string(),
  seed: z.number().optional(),
  /** The statuses the round re-judged (check_is_solved on each answer), when it did. */
  statuses: z.object({ candidate: AnswerStatus, reference: AnswerStatus }).optional()
})
export type WinRound = z.infer<typeof WinRound>

/** `<run>/eval/<judge>/win/<reference>/rounds/<method>/<group>/<taskId>.json`. */
export const WinVerdicts = z.object({
  taskId: z.string(),
  method: z.string(),
  group: z.string(),
  judge: z.string(),
  /** The reference's answers: their directory, method and (when not `improved`) the profile that made them. */
  reference: z.object({ source: z.string(), method: z.string(), profile: z.string().optional() }),
  prompts: z.string().optional(),
  /** The profile of the candidate's run; absent in older files and for `improved`. */
  profile: z.string().optional(),
  /** The candidate's agent run (`bench --runs N`), set against the reference's run of the same index (else its run 0); absent for run 0. */
  agentRun: z.number().int().min(0).optional(),
  /** Where the rounds' answer statuses came from: re-judged in each round (`rejudge`) or the pass labels (`pass-labels`); absent in older files (pass labels). */
  statuses: z.enum(["rejudge", "pass-labels", "stabletoolbench"]).optional(),
  k: z.number().optional(),
  rounds: z.record(RunKey, WinRound)
})
export type WinVerdicts = z.infer<typeof WinVerdicts>

/** `<store>/eval-source.json`: written by `smurfs eval --out`, so that `smurfs compare <store>` finds the answers it judged. */
export const EVAL_SOURCE_FILE = "eval-source.json"
export const EvalSource = z.object({ source: z.string() })

/** A readable directory name for a model spec or a reference (given on the command line, not data); never `.` or `..`. */
export const slug = (text: string): string =>
  text.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-.]+|-+$/g, "") || "default"

// Method, group and task id come from data: they name files only through safeName, inside the store. Agent run r > 0
// of a task (`bench --runs N`) has its own file, named as its task record is (`<id>.run<r>.json`).
const taskFile = (method: string, group: string, taskId: string, agentRun = 0) =>
  [safeName(method), safeName(group), runFileName(taskId, agentRun)] as const
export const passLabelsPath = (
  store: string,
  judge: string,
  method: string,
  group: string,
  taskId: string,
  agentRun = 0
) => pathInside(store, "eval", slug(judge), "pass", ...taskFile(method, group, taskId, agentRun))
export const referencePassPath = (
  store: string,
  judge: string,
  reference: string,
  method: string,
  group: string,
  taskId: string,
  agentRun = 0
) =>
  pathInside(store, "eval", slug(judge), "win", slug(reference), "pass", ...taskFile(method, group, taskId, agentRun))
export const winVerdictsPath = (
  store: string,
  judge: string,
  reference: string,
  method: string,
  group: string,
  taskId: string,
  agentRun = 0
) =>
  pathInside(store, "eval", slug(judge), "win", slug(reference), "rounds", ...taskFile(method, group, taskId, agentRun))
