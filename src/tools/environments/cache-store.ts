// Writing simulated responses into a StableToolBench cache folder, `<Category>/<tool>_for_<Category>/<api>.json`,
// keyed as their server keys them, so that runs, machines and their own server share one cache.
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync
} from "node:fs"
import { dirname, join, resolve, sep } from "node:path"
import { standardizeCategory } from "../toolbench/names.ts"

/** The file of one API in a cache folder, as their server's save_cache names it. */
export const cacheFilePath = (dir: string, category: string, stdTool: string, stdApi: string): string => {
  const cat = standardizeCategory(category)
  const file = join(dir, cat, `${stdTool}_for_${cat}`, `${stdApi}.json`)
  // names come from data: one that would leave the folder (a category "..") is refused, never written outside
  if (!resolve(file).startsWith(resolve(dir) + sep) || [cat, stdTool, stdApi].some((n) => n.includes("\0")))
    throw new Error(`the cache path of ${category}/${stdTool}/${stdApi} would leave ${dir}`)
  return file
}

/** Python's json.dump(indent=4) text: its separators, non-ASCII written as \uXXXX (ensure_ascii). */
const pythonJsonText = (value: unknown): string =>
  JSON.stringify(value, null, 4).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** A lock older than this was left by a process that died mid-write: it is taken over. */
const STALE_LOCK_MS = 30_000

/**
 * Hold `<file>.lock` (created exclusively) while `body` runs: two processes adding to the same file
 * then merge instead of overwriting each other. Writes are small and short, so waiting is a short spin.
 */
const withFileLock = <A>(file: string, body: () => A): A => {
  const lock = `${file}.lock`
  for (let attempt = 0; ; attempt++) {
    try {
      closeSync(openSync(lock, "wx"))
      break
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true })
      } catch {
        // the holder just released it
      }
      sleep(Math.min(50, 2 + attempt))
    }
  }
  try {
    return body()
  } finally {
    rmSync(lock, { force: true })
  }
}

/**
 * Add one response under `key` to the API's cache file: read what is there now (other runs may have
 * added entries), keep every entry, add this one when the key is new, write to a temporary file and
 * rename it over the old one. Their server reads the file whole, so it never sees a half-written one.
 */
export const addCacheEntry = (file: string, key: string, value: unknown): void => {
  mkdirSync(dirname(file), { recursive: true })
  withFileLock(file, () => {
    let entries: Record<string, unknown> = {}
    if (existsSync(file)) {
      try {
        const parsed: unknown = JSON.parse(readFileSync(file, "utf8"))
        if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
          entries = parsed as Record<string, unknown>
      } catch {
        // a file another tool left unreadable: keep it aside rather than lose it, and start the API afresh
        renameSync(file, `${file}.unreadable-${Date.now()}`)
      }
    }
    if (key in entries) return
    entries[key] = value
    const tmp = `${file}.${process.pid}.tmp`
    const fd = openSync(tmp, "w")
    try {
      writeSync(fd, pythonJsonText(entries))
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, file)
  })
}
