// Document embeddings cached on disk by content hash: a library embedded once is read back on the next run.
import { createHash } from "node:crypto"
import { homedir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import type { ProviderError } from "../../llm/errors.ts"
import { writeTextAtomic } from "../../trace/atomic-write.ts"
import { readFileBounded } from "../../trace/guarded-fs.ts"
import type { Embedder } from "./embedder.ts"

/** Where document embeddings are cached unless told otherwise: $XDG_CACHE_HOME/smurfs/embeddings, else ~/.cache/smurfs/embeddings. */
export const defaultEmbeddingCache = (): string =>
  join(process.env["XDG_CACHE_HOME"] || join(homedir(), ".cache"), "smurfs", "embeddings")

/** The cache key of a library's documents for one model: the hash of the model spec and every text. */
export const contentHash = (spec: string, texts: ReadonlyArray<string>): string => {
  const hash = createHash("sha256").update(spec)
  for (const text of texts) hash.update("\u0000").update(text)
  return hash.digest("hex")
}

interface CacheFile {
  readonly spec: string
  readonly count: number
  readonly dims: number
  /** Float32 little-endian vectors, concatenated, base64. */
  readonly vectors: string
}

const read = (path: string, spec: string, count: number): Array<Float32Array> | undefined => {
  try {
    const file = JSON.parse(readFileBounded(path)) as CacheFile
    if (file.spec !== spec || file.count !== count) return undefined
    const bytes = Buffer.from(file.vectors, "base64")
    if (bytes.length !== file.count * file.dims * 4) return undefined
    const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))
    return Array.from({ length: count }, (_, i) => all.slice(i * file.dims, (i + 1) * file.dims))
  } catch {
    return undefined // missing or damaged: embed again
  }
}

/**
 * The document vectors of `texts`, from `<dir>/<content hash>.json` when present, else from the model
 * (then written atomically). A damaged or unwritable cache never fails the caller: it embeds again.
 */
export const cachedDocumentVectors = (
  embedder: Embedder,
  texts: ReadonlyArray<string>,
  dir: string | undefined
): Effect.Effect<Array<Float32Array>, ProviderError> =>
  Effect.gen(function* () {
    if (dir === undefined) return yield* embedder.embedDocuments(texts)
    const path = join(dir, `${contentHash(embedder.spec, texts)}.json`)
    const cached = read(path, embedder.spec, texts.length)
    if (cached) return cached
    const vectors = yield* embedder.embedDocuments(texts)
    const dims = vectors[0]?.length ?? 0
    const flat = new Float32Array(vectors.length * dims)
    for (const [i, v] of vectors.entries()) flat.set(v.subarray(0, dims), i * dims)
    const file: CacheFile = {
      spec: embedder.spec,
      count: texts.length,
      dims,
      vectors: Buffer.from(flat.buffer).toString("base64")
    }
    // a read-only or full disk costs the next run an embedding pass, nothing more
    yield* writeTextAtomic(path, JSON.stringify(file)).pipe(Effect.ignore)
    return vectors
  })
