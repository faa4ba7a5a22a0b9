// One judge decision (a pass label for one judge run, or one win round) as plain data: the unit of work an
// eval runs here or hands to `smurfs worker` through the queue; both decide it with `decideJob`.
import * as Effect from "effect/Effect"
import { z } from "zod"
import type { MalformedOutput, ProviderError } from "../../src/llm/errors.ts"
import type { LanguageModel } from "../../src/llm/language-model.ts"
import { JudgeInput } from "./judge-input.ts"
import type { JudgePrompts } from "./judge-prompts.ts"
import { AnswerStatus, type PassRun, type WinRound } from "./labels.ts"
import { judgePass } from "./pass-rate.ts"
import { rngFor } from "./rng.ts"
import { judgeRound } from "./win-rate.ts"

const Common = {
  /** The judge's model spec (a worker may use its own server of it). */
  judge: z.string(),
  /** Which judge texts: "smurfs" or "stabletoolbench:<dir>" (JudgePrompts.source). */
  prompts: z.string(),
  /** The sampling seed of this judge run or round. */
  seed: z.number()
}

export const PassJob = z.object({ kind: z.literal("pass"), ...Common, input: JudgeInput })
export type PassJob = z.infer<typeof PassJob>

export const RoundJob = z.object({
  kind: z.literal("round"),
  ...Common,
  candidate: JudgeInput.optional(),
  reference: JudgeInput.optional(),
  candidateStatus: AnswerStatus.optional(),
  referenceStatus: AnswerStatus.optional(),
  candidatePassed: z.boolean().optional(),
  referencePassed: z.boolean().optional(),
  /** Re-judge both answers with check_is_solved in the round (the default of an eval), instead of the statuses above. */
  rejudge: z.boolean().optional(),
  /** The round's generator, as rngFor's arguments (a function does not travel). */
  rng: z.object({ seed: z.number(), key: z.array(z.union([z.string(), z.number()])) })
})
export type RoundJob = z.infer<typeof RoundJob>

export const JudgeJob = z.discriminatedUnion("kind", [PassJob, RoundJob])
export type JudgeJob = z.infer<typeof JudgeJob>

/** A decision, or why the judge's reply could not be read (kept as a failure; the next eval retries it). */
export type Outcome<A> = { readonly decision: A } | { readonly error: string }

/** Where an eval's judge decisions are made: here (the default) or on the queue's workers. */
export interface Decider<R = LanguageModel, E = ProviderError> {
  /** Fails (E) only when no decision can be made at all (the judge's server, or the queue, unavailable). */
  readonly pass: (job: PassJob) => Effect.Effect<Outcome<PassRun>, E, R>
  readonly round: (job: RoundJob) => Effect.Effect<Outcome<WinRound>, E, R>
  /** The decision is stored: a queue may forget its copy. */
  readonly settled?: ((job: JudgeJob) => Effect.Effect<void>) | undefined
}

const keep = (e: MalformedOutput) => Effect.succeed({ error: e.message })

/** Decide one job with the judge model in context, exactly as the in-process eval does. */
export function decideJob(
  job: PassJob,
  prompts: JudgePrompts
): Effect.Effect<Outcome<PassRun>, ProviderError, LanguageModel>
export function decideJob(
  job: RoundJob,
  prompts: JudgePrompts
): Effect.Effect<Outcome<WinRound>, ProviderError, LanguageModel>
export function decideJob(
  job: JudgeJob,
  prompts: JudgePrompts
): Effect.Effect<Outcome<PassRun | WinRound>, ProviderError, LanguageModel>
export function decideJob(
  job: JudgeJob,
  prompts: JudgePrompts
): Effect.Effect<Outcome<PassRun | WinRound>, ProviderError, LanguageModel> {
  const call = { prompts, seed: job.seed }
  const decided =
    job.kind === "pass"
      ? judgePass(job.input, call)
      : judgeRound(
          {
            candidate: job.candidate,
            reference: job.reference,
            candidateStatus: job.candidateStatus,
            referenceStatus: job.referenceStatus,
            candidatePassed: job.candidatePassed,
            referencePassed: job.referencePassed,
            rejudge: job.rejudge,
            rng: rngFor(job.rng.seed, ...job.rng.key)
          },
          call
        )
  return (decided as Effect.Effect<PassRun | WinRound, ProviderError | MalformedOutput, LanguageModel>).pipe(
    Effect.map((decision) => ({ decision })),
    Effect.catchTag("MalformedOutput", keep)
  )
}

/** The default decider: the judge model of this process. */
export const inProcessDecider = (prompts: JudgePrompts): Decider => ({
  pass: (job) => decideJob(job, prompts),
  round: (job) => decideJob(job, prompts)
})
