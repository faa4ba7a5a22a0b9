// A task's win-rate verdicts: every judge's rounds against every reference, with the judge's reasons (the report's transcripts, the trajectory pages).
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { z } from "zod"
import { RoundStage, WinVerdicts, winVerdictsPath } from "../eval/labels.ts"
import { readJsonChecked } from "../eval/store.ts"
import { judgesOf } from "./collect.ts"

/** One round of a win-rate comparison of a task, from the candidate's side. */
export const TaskVerdict = z.object({
  /** The judge's label folder. */
  judge: z.string(),
  /** The reference's folder name (`<source>-<method>` as `smurfs eval --reference` named it). */
  reference: z.string(),
  /** The reference method, as the verdict file names it. */
  referenceMethod: z.string(),
  /** The round (0..K-1). */
  round: z.number(),
  /** `won`: the candidate's answer was preferred; `lost`: the reference's. */
  outcome: z.enum(["won", "lost"]),
  /** How the round was decided (`judge`: the judge compared the answers; `missing`: one side had no answer...). */
  stage: RoundStage,
  reason: z.string()
})
export type TaskVerdict = z.infer<typeof TaskVerdict>

const dirs = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((d) => statSync(join(dir, d)).isDirectory())
        .sort()
    : []

/** Every stored win round of one task of `method` (the candidate), by judge, reference and round. */
export const taskVerdicts = (store: string, method: string, group: string, taskId: string): Array<TaskVerdict> =>
  judgesOf(store).flatMap((judge) =>
    dirs(join(store, "eval", judge, "win")).flatMap((reference) => {
      const v = readJsonChecked(winVerdictsPath(store, judge, reference, method, group, taskId), WinVerdicts)
      if (!v) return []
      return Object.entries(v.rounds)
        .map(([round, r]) => ({
          judge,
          reference,
          referenceMethod: v.reference.method,
          round: Number(round),
          outcome: r.winner === "candidate" ? ("won" as const) : ("lost" as const),
          stage: r.stage,
          reason: r.reason
        }))
        .sort((a, b) => a.round - b.round)
    })
  )

/** A task's rounds in a few characters per reference: "W W L vs react" (Won, Lost). */
export const verdictSummary = (verdicts: ReadonlyArray<TaskVerdict>): string => {
  const references = [...new Set(verdicts.map((v) => v.referenceMethod))]
  return references
    .map(
      (r) =>
        `${verdicts
          .filter((v) => v.referenceMethod === r)
          .map((v) => (v.outcome === "won" ? "W" : "L"))
          .join(" ")} vs ${r}`
    )
    .join("; ")
}
