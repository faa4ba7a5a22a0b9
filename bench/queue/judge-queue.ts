// `smurfs eval --queue`: judge decisions go to a BullMQ queue on Redis, `smurfs worker` decides them with
// its own judge model server, and the decisions come back through the queue for the eval to store.
import { createHash } from "node:crypto"
import { type Job, UnrecoverableError } from "bullmq"
import * as Effect from "effect/Effect"
import type * as ManagedRuntime from "effect/ManagedRuntime"
import type * as Scope from "effect/Scope"
import type { LanguageModel } from "../../src/llm/language-model.ts"
import { redactText } from "../../src/trace/redact.ts"
import { type Decider, decideJob, JudgeJob, type Outcome } from "../eval/judge-job.ts"
import type { JudgePrompts } from "../eval/judge-prompts.ts"
import { PassRun, WinRound } from "../eval/labels.ts"
import { JUDGE_QUEUE } from "./connection.ts"
import { queueSecret, readFailure, SignedResult, serverFailure, signatureMatches, signatureOf } from "./job.ts"
import { makeQueueClient, parseReturn, type QueueExecutorSettings, type QueueUnavailable } from "./queue-executor.ts"
import { closeWorker, queueWorker, sessionCache, type WorkerSettings } from "./worker.ts"

/**
 * A decision's job id: a hash of all the job holds, so the same decision queued twice (a resumed eval)
 * is one job, and a decision with other inputs (another seed, judge or answer) is another.
 */
export const judgeJobIdOf = (job: JudgeJob): string =>
  `judge/${createHash("sha256").update(JSON.stringify(job)).digest("hex").slice(0, 32)}`

/** A worker's reply: a decision, or the judge's unreadable reply (a failure the next eval retries); with a secret, signed for its job. */
const outcomeOf = (value: unknown, jobId: string, secret: string | undefined): Outcome<PassRun | WinRound> => {
  let reply = parseReturn(value)
  const signed = SignedResult.safeParse(reply)
  if (
    secret !== undefined &&
    (!signed.success || !signatureMatches(secret, { jobId, result: signed.data.result }, signed.data.signature))
  )
    return {
      error:
        "a decision came back without a valid signature for its job (SMURFS_QUEUE_SECRET differs, or it was written by hand); refused"
    }
  if (signed.success) reply = signed.data.result
  const parsed = reply as { decision?: unknown; error?: unknown } | undefined
  if (typeof parsed?.error === "string") return { error: parsed.error }
  const decision = PassRun.safeParse(parsed?.decision)
  if (decision.success) return { decision: decision.data }
  const round = WinRound.safeParse(parsed?.decision)
  return round.success
    ? { decision: round.data }
    : {
        error:
          "a worker sent a decision that is not a pass label or a win round; run the same command again to retry it"
      }
}

/** A job that failed for good: the judge's server kept failing (after the retries), or the worker could not run it. */
const failedOutcome = (reason: string): Outcome<never> => {
  const failure = readFailure(reason)
  return {
    error: failure.server
      ? `the judge's model server failed on every attempt (${failure.tag}: ${failure.error}); run the same command again to retry`
      : `a worker could not judge it: ${failure.error}`
  }
}

export type JudgeQueueSettings = Omit<QueueExecutorSettings, "runId" | "settings">

/** The eval's decider when it runs with --queue: every decision is a job, stored by the eval once it returns. */
export const makeQueueDecider = (
  settings: JudgeQueueSettings
): Effect.Effect<Decider<never, QueueUnavailable>, QueueUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const secret = "secret" in settings ? settings.secret : queueSecret()
    const client = yield* makeQueueClient<Outcome<PassRun | WinRound>>({
      ...settings,
      queueName: JUDGE_QUEUE,
      resultOf: (value, jobId) => outcomeOf(value, jobId, secret),
      failureOf: failedOutcome,
      // Redis gone for good fails the decision, and with it the eval (exit 4): labels already stored are kept
      rerunHint: "the labels judged so far are kept, run the same eval again once it is back"
    })
    const decide = (job: JudgeJob) =>
      client.run(
        judgeJobIdOf(job),
        job.kind,
        secret === undefined ? job : { ...job, signature: signatureOf(secret, job) },
        (message) => ({ error: `cannot queue the decision: ${message}` })
      )
    // a pass job brings back a pass label and a round job a round: outcomeOf validated it as one of the two
    return {
      pass: (job) => decide(job) as Effect.Effect<Outcome<PassRun>, QueueUnavailable>,
      round: (job) => decide(job) as Effect.Effect<Outcome<WinRound>, QueueUnavailable>,
      settled: (job) => client.forget(judgeJobIdOf(job))
    } satisfies Decider<never, QueueUnavailable>
  })

/** What a worker judges with: a judge model (this machine's server of it) and the judge texts. */
export interface JudgeSession {
  readonly runtime: ManagedRuntime.ManagedRuntime<LanguageModel, unknown>
  readonly prompts: JudgePrompts
}

/** Builds a session from a job's judge spec and texts (this worker's --model and --stb win over them). */
export type JudgeSessionFactory = (judge: string, prompts: string) => Promise<JudgeSession>

/**
 * Start taking judge decisions. A model-server failure fails the job so BullMQ retries it with backoff
 * (here or on another worker); an unreadable judge reply is a decision's failure, sent back as such.
 */
export const startJudgeWorker = (
  settings: Omit<WorkerSettings, "sessionOf"> & { readonly sessionOf: JudgeSessionFactory }
) => {
  const sessions = sessionCache<JudgeSession>()
  const secret = "secret" in settings ? settings.secret : queueSecret()
  const sessionFor = (judge: string, prompts: string) =>
    sessions.get(`${judge}\u0000${prompts}`, () => settings.sessionOf(judge, prompts))
  const processor = async (
    job: Job
  ): Promise<
    Outcome<PassRun | WinRound> | { readonly result: Outcome<PassRun | WinRound>; readonly signature: string }
  > => {
    const parsed = JudgeJob.safeParse(job.data)
    if (!parsed.success)
      throw new UnrecoverableError(`job ${job.id} is not a smurfs judge decision: ${parsed.error.message}`)
    const data = parsed.data
    if (secret !== undefined && !signatureMatches(secret, data, (job.data as { signature?: unknown }).signature))
      throw new UnrecoverableError(
        `job ${job.id} is not signed with this worker's SMURFS_QUEUE_SECRET (it differs from the eval's, or the job was written by hand); refused`
      )
    const signed = (outcome: Outcome<PassRun | WinRound>) =>
      secret === undefined
        ? outcome
        : { result: outcome, signature: signatureOf(secret, { jobId: job.id, result: outcome }) }
    const session = await sessionFor(data.judge, data.prompts).catch((e: Error) => {
      throw new UnrecoverableError(`cannot set up the judge on this worker: ${e.message}`)
    })
    const exit = await session.runtime.runPromiseExit(decideJob(data, session.prompts))
    if (exit._tag === "Success") {
      const outcome = exit.value
      settings.log(
        `judged a ${data.kind === "pass" ? "pass label" : "win round"}: ${"error" in outcome ? "the judge's reply is unreadable" : "label" in outcome.decision ? outcome.decision.label : `${outcome.decision.winner} wins`}`
      )
      return signed(outcome)
    }
    const error = exit.cause.reasons.find((r) => r._tag === "Fail")?.error as
      | { _tag?: string; message?: string }
      | undefined
    if (error?._tag) {
      settings.log(
        redactText(
          `a ${data.kind} decision: the judge's model server failed (${error.message ?? error._tag}); the queue retries it`
        )
      )
      throw new Error(serverFailure(error._tag, error.message ?? "the judge's model server failed"))
    }
    throw new UnrecoverableError(redactText(`the judge crashed: ${String(exit.cause)}`))
  }
  const worker = queueWorker(JUDGE_QUEUE, processor, settings)
  return { worker, close: closeWorker(worker, sessions) }
}
