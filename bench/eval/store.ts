// Reading the evaluators' JSON files; a file that is missing or does not validate counts as not judged yet.
// (Writes go through the atomic writer, src/trace/atomic-write.ts.)
import { existsSync } from "node:fs"
import type { z } from "zod"
import { parseProblem } from "../../src/trace/data-record.ts"
import { readFileBounded } from "../../src/trace/guarded-fs.ts"

/** Read and validate a JSON file; undefined when it does not exist or does not validate (it is then redone). */
export const readJsonIf = <A>(file: string, schema: z.ZodType<A>): A | undefined => {
  if (!existsSync(file)) return undefined
  try {
    const parsed = schema.safeParse(JSON.parse(readFileBounded(file)))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

/** A stored file that exists but is not what it should be (a hostile label file, another tool's file). */
export class InvalidStoredFile extends Error {
  readonly file: string
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`)
    this.file = file
  }
}

/**
 * Read and validate a JSON file; undefined when it does not exist. A file that cannot be read (a FIFO,
 * a device, too large) or does not validate throws InvalidStoredFile naming the file and the problem
 * (for a label file, the bad run key): a report refuses it rather than count or skip it silently.
 */
export const readJsonChecked = <A>(file: string, schema: z.ZodType<A>): A | undefined => {
  if (!existsSync(file)) return undefined
  let raw: unknown
  try {
    raw = JSON.parse(readFileBounded(file))
  } catch (e) {
    throw new InvalidStoredFile(file, `cannot read it as JSON (${(e as Error).message.split("\n")[0]})`)
  }
  const parsed = schema.safeParse(raw)
  if (!parsed.success) throw new InvalidStoredFile(file, parseProblem(parsed.error))
  return parsed.data
}
