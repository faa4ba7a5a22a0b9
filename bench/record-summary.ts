// What the end of a run reads of each task record (run.json's misses and ledger), kept as the run writes the record:
// the records this invocation wrote are not read back from disk for them, only those of earlier invocations (resume).
import { resolve } from "node:path"
import { costOfRecord, type JudgeCost } from "./eval/judge-input.ts"
import { addToLedger, emptyLedger, type ToolLedger } from "./ledger.ts"
import type { TaskRecord } from "./run-format.ts"

/** A written record's share of the misses and of its method's ledger. */
export interface RecordSummary {
  readonly method: string
  /** Not an `error` record: a result, counted in the misses and the ledger. */
  readonly result: boolean
  readonly cost: JudgeCost
  /** The record's own tool calls by how they were served (its simulators in the order its events name them). */
  readonly ledger: ToolLedger
}

/** Records' summaries by the path of their file (resolved), as written by this process. */
export interface RecordSummaries {
  readonly get: (path: string) => RecordSummary | undefined
  /** `record` was written to `path`: what a later write there replaces. */
  readonly add: (path: string, record: TaskRecord) => void
}

export const summaryOfRecord = (record: TaskRecord): RecordSummary => ({
  method: record.method,
  result: record.finishType !== "error",
  cost: costOfRecord(record),
  ledger: addToLedger(emptyLedger(), record.events)
})

export const makeRecordSummaries = (): RecordSummaries => {
  const byPath = new Map<string, RecordSummary>()
  return {
    get: (path) => byPath.get(resolve(path)),
    add: (path, record) => void byPath.set(resolve(path), summaryOfRecord(record))
  }
}
