// Atomic JSON files: readers never see a half-written label, and a crash loses at most one write.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import type { z } from "zod"

let sequence = 0

/** Write `value` as JSON to `file` through a temporary file and a rename. */
export const writeJsonAtomic = (file: string, value: unknown): void => {
  mkdirSync(dirname(file), { recursive: true })
  const tmp = `${file}.${process.pid}.${sequence++}.tmp`
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`)
  renameSync(tmp, file)
}

/** Read and validate a JSON file; undefined when it does not exist or does not validate (it is then redone). */
export const readJsonIf = <A>(file: string, schema: z.ZodType<A>): A | undefined => {
  if (!existsSync(file)) return undefined
  try {
    const parsed = schema.safeParse(JSON.parse(readFileSync(file, "utf8")))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}
