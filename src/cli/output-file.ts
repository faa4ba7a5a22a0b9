// A command's own output file (an HTML report): written atomically, so a failed write keeps the last good one whole.
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { writeTextAtomic } from "../trace/atomic-write.ts"

/**
 * Write `text` to `file` through the atomic writer: a full disk or a kill mid-write leaves the previous
 * report as it was, never one cut mid-tag. Returns what went wrong (e.g. "the disk is full (ENOSPC)"), or undefined.
 */
export const writeOutputFile = async (file: string, text: string): Promise<string | undefined> => {
  const result = await Effect.runPromise(Effect.result(writeTextAtomic(file, text)))
  return Result.isFailure(result) ? result.failure.problem : undefined
}
