// The contract between the coordinator and its workers: a queued task's data, its id, and how a failure is told.
import { createHash } from "node:crypto"
import { z } from "zod"
import type { BenchQuery } from "../datasets.ts"

/** A queued task: everything a worker needs, so that no shared file system is needed. */
export const QueuedTask = z.object({
  /** The run the task belongs to (a hash of the run directory and its creation time). */
  runId: z.string(),
  method: z.string(),
  query: z.object({
    group: z.string(),
    id: z.string(),
    query: z.string(),
    apiList: z.array(z.looseObject({ tool_name: z.string(), api_name: z.string() })),
    relevant: z.array(z.tuple([z.string(), z.string()]))
  }),
  /** The coordinator's `smurfs bench` options that shape a task (model, environments, toolset, limits). */
  argv: z.array(z.string()),
  /**
   * With `--toolset retrieve`: the task's set as the coordinator retrieved and recorded it in run.json, and
   * the corpus it came from; the worker retrieves per subtask from its own copy of that corpus.
   */
  retrieval: z.object({ set: z.array(z.string()), corpusHash: z.string() }).optional()
})
export type QueuedTask = z.infer<typeof QueuedTask>

/** A running task's model calls and tokens so far: the progress a worker sends while the task runs. */
export const TaskCalls = z.object({ modelCalls: z.number().int().nonnegative(), tokens: z.number().nonnegative() })
export type TaskCalls = z.infer<typeof TaskCalls>

/** A run's id: the same run directory resumed keeps it, a new run in the same place gets another. */
export const runIdOf = (runDir: string, createdAt: string): string => createHash("sha256").update(`${runDir}\n${createdAt}`).digest("hex").slice(0, 16)

/** The BullMQ job id of a task: one job per run, method and query, so adding it twice adds it once. */
export const jobIdOf = (runId: string, method: string, query: Pick<BenchQuery, "group" | "id">): string =>
  // BullMQ refuses ids with ":"; encoding keeps ids distinct whatever a query id holds
  [runId, method, query.group, query.id].map((part) => encodeURIComponent(part)).join("/")

/** How a worker marks a failure caused by the model server (retried with backoff, reported as such when it persists). */
const SERVER_MARK = "[model server] "

export const serverFailure = (tag: string, message: string): string => `${SERVER_MARK}${tag}: ${message}`

/** A failed job's reason, read back: was it the model server's fault, and what did it say. */
export const readFailure = (reason: string): { readonly server: boolean; readonly tag: string; readonly error: string } => {
  if (!reason.startsWith(SERVER_MARK)) return { server: false, tag: "crashed", error: reason }
  const rest = reason.slice(SERVER_MARK.length)
  const colon = rest.indexOf(": ")
  return colon < 0 ? { server: true, tag: "ModelServerError", error: rest } : { server: true, tag: rest.slice(0, colon), error: rest.slice(colon + 2) }
}
