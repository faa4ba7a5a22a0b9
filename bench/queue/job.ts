// The contract between the coordinator and its workers: a queued task's data, its id, and how a failure is told.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { z } from "zod"
import type { BenchQuery } from "../datasets.ts"

/** A queued task: everything a worker needs, so that no shared file system is needed. */
export const QueuedTask = z.object({
  /** The run the task belongs to (a hash of the run directory and its creation time). */
  runId: z.string(),
  method: z.string(),
  /** The agent run of the task (`bench --runs N`), absent for run 0 of a run of one; its seed is the settings' `seed`. */
  run: z.number().int().min(0).optional(),
  query: z.object({
    group: z.string(),
    id: z.string(),
    query: z.string(),
    apiList: z.array(z.looseObject({ tool_name: z.string(), api_name: z.string() })),
    relevant: z.array(z.tuple([z.string(), z.string()]))
  }),
  /**
   * The version of `settings`: a worker refuses a job of another version (a smurfs of another release)
   * rather than reading it wrongly.
   */
  settingsVersion: z.number().int(),
  /** The run's options that shape a task (JobSettings: an allow-list, validated by the worker on receipt). */
  settings: z.unknown(),
  /**
   * With `--toolset retrieve`: the task's set as the coordinator retrieved and recorded it in run.json, and
   * the corpus it came from; the worker retrieves per subtask from its own copy of that corpus.
   */
  retrieval: z.object({ set: z.array(z.string()), corpusHash: z.string() }).optional(),
  /**
   * The BullMQ job id the job was sent as, inside what is signed: a signed job copied under another id is refused.
   * Absent in jobs of a coordinator from before it was sent.
   */
  jobId: z.string().optional(),
  /**
   * Random, one per job the coordinator sends (a job Redis lost is queued again with the same one): with the id it
   * names one sending, so a worker runs a job id and nonce once and a coordinator takes the result of the sending it
   * waits for. Absent in jobs of a coordinator from before it was sent.
   */
  nonce: z.string().optional(),
  /** With SMURFS_QUEUE_SECRET: an HMAC of the job without this field, so a worker takes only jobs its coordinator sent. */
  signature: z.string().optional()
})
export type QueuedTask = z.infer<typeof QueuedTask>

/** A running task's model calls and tokens so far: the progress a worker sends while the task runs. */
export const TaskCalls = z.object({ modelCalls: z.number().int().nonnegative(), tokens: z.number().nonnegative() })
export type TaskCalls = z.infer<typeof TaskCalls>

/** A run's id: the same run directory resumed keeps it, a new run in the same place gets another. */
export const runIdOf = (runDir: string, createdAt: string): string =>
  createHash("sha256").update(`${runDir}\n${createdAt}`).digest("hex").slice(0, 16)

/**
 * The BullMQ job id of a task: one job per run, method, query and agent run, so adding it twice adds it once.
 * Agent run 0 (and a run of one) keeps the id it always had.
 */
export const jobIdOf = (
  runId: string,
  method: string,
  query: Pick<BenchQuery, "group" | "id">,
  agentRun?: number
): string =>
  // BullMQ refuses ids with ":"; encoding keeps ids distinct whatever a query id holds
  [runId, method, query.group, query.id, ...(agentRun ? [`run${agentRun}`] : [])]
    .map((part) => encodeURIComponent(part))
    .join("/")

/** How a worker marks a failure caused by the model server (retried with backoff, reported as such when it persists). */
const SERVER_MARK = "[model server] "

export const serverFailure = (tag: string, message: string): string => `${SERVER_MARK}${tag}: ${message}`

/** A failed job's reason, read back: was it the model server's fault, and what did it say. */
export const readFailure = (
  reason: string
): { readonly server: boolean; readonly tag: string; readonly error: string } => {
  if (!reason.startsWith(SERVER_MARK)) return { server: false, tag: "crashed", error: reason }
  const rest = reason.slice(SERVER_MARK.length)
  const colon = rest.indexOf(": ")
  return colon < 0
    ? { server: true, tag: "ModelServerError", error: rest }
    : { server: true, tag: rest.slice(0, colon), error: rest.slice(colon + 2) }
}

/** The shared secret of a coordinator and its workers, from SMURFS_QUEUE_SECRET; undefined when unset. */
export const queueSecret = (environment: NodeJS.ProcessEnv = process.env): string | undefined => {
  const secret = environment["SMURFS_QUEUE_SECRET"]
  return secret === undefined || secret === "" ? undefined : secret
}

/** JSON with sorted keys, so that both sides sign the same text whatever order Redis gives the fields in. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        )
      : v
  )

/** The HMAC-SHA256 of a value (a job without its signature, or a job id with its result) under the shared secret. */
export const signatureOf = (secret: string, value: unknown): string =>
  createHmac("sha256", secret).update(canonical(value)).digest("hex")

/** Whether `signature` is the value's under the secret (compared in constant time). */
export const signatureMatches = (secret: string, value: unknown, signature: unknown): boolean => {
  if (typeof signature !== "string") return false
  const expected = Buffer.from(signatureOf(secret, value), "hex")
  const given = Buffer.from(signature, "hex")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** A new job nonce: 128 random bits. */
export const newNonce = (): string => randomBytes(16).toString("hex")

/**
 * What a signed result covers: the job's id, the nonce of the sending it answers (when the job had one) and the
 * result, so a result is taken only for the job and the sending it was made for.
 */
export const signedResultOf = (jobId: string | undefined, nonce: string | undefined, result: unknown): unknown =>
  nonce === undefined ? { jobId, result } : { jobId, nonce, result }

/** A worker's reply when a secret is set: the record and the HMAC of the job id (and nonce) with it. */
export const SignedResult = z.object({ result: z.unknown(), signature: z.string() })
