// Reading the evaluators' JSON files; a file that is missing or does not validate counts as not judged yet.
// (Writes go through the atomic writer, src/trace/atomic-write.ts.)
import { existsSync } from "node:fs"
import { readFileBounded } from "../../src/trace/guarded-fs.ts"
import type { z } from "zod"

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
