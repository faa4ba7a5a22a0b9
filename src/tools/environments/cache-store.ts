// Writing simulated responses into a StableToolBench cache folder, `<Category>/<tool>_for_<Category>/<api>.json`,
// keyed as their server keys them, so that runs, machines and their own server share one cache.
import { mkdirSync, renameSync } from "node:fs"
import { dirname, join, resolve, sep } from "node:path"
import { type FileLockOptions, withFileLock } from "../../trace/file-lock.ts"
import { makeDirectoryInsideSync, readFileBounded } from "../../trace/guarded-fs.ts"
import { type SyncWriteFs, writeFileAtomicSync } from "../../trace/temp-file.ts"
import { standardizeCategory } from "../toolbench/names.ts"
import { jsonDumps } from "./json-dumps.ts"
import { pythonJsonLoads } from "./python-json.ts"

/** The file of one API in a cache folder, as their server's save_cache names it. */
export const cacheFilePath = (dir: string, category: string, stdTool: string, stdApi: string): string => {
  const cat = standardizeCategory(category)
  const file = join(dir, cat, `${stdTool}_for_${cat}`, `${stdApi}.json`)
  // names come from data: one that would leave the folder (a category "..") is refused, never written outside
  if (!resolve(file).startsWith(resolve(dir) + sep) || [cat, stdTool, stdApi].some((n) => n.includes("\0")))
    throw new Error(`the cache path of ${category}/${stdTool}/${stdApi} would leave ${dir}`)
  return file
}

/** A cache file that could not be written: the old file is kept whole. */
export class CacheWriteError extends Error {
  readonly file: string
  constructor(file: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code
    super(
      `could not write the simulator cache ${file} (${code === "ENOSPC" ? "the disk is full (ENOSPC)" : (cause as Error).message}); the file is kept as it was`,
      { cause }
    )
    this.file = file
  }
}

/** The entries of a cache file's text, or why it is not a cache file (torn, not JSON, `null`, a list). */
export const parseCacheFile = (
  text: string,
  parse: (text: string) => unknown = JSON.parse
): Record<string, unknown> | string => {
  let parsed: unknown
  try {
    parsed = parse(text)
  } catch (e) {
    return `not valid JSON (${(e as Error).message})`
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : `not a JSON object of cached responses (it holds ${parsed === null ? "null" : Array.isArray(parsed) ? "a list" : typeof parsed})`
}

export interface AddCacheEntryOptions extends FileLockOptions {
  /** The file system of the write; tests pass one whose disk fills. */
  readonly fs?: SyncWriteFs | undefined
  /** The folder the cache is inside (a run directory): no symbolic link below it is followed. */
  readonly root?: string | undefined
}

/**
 * Add one response under `key` to the API's cache file: read what is there now (other runs may have
 * added entries), keep every entry, add this one when the key is new, and write the merged file all or
 * nothing (writeFileAtomicSync): their server reads the file whole, so it never sees a half-written one,
 * and a full disk leaves the old file as it was (CacheWriteError). A file that is torn or no cache file
 * is set aside (`<file>.unreadable-<time>`) and `note` says so; the API starts afresh. Other writers are
 * excluded by `<file>.lock` (withFileLock: bounded, interruptible, stale locks taken over).
 */
export const addCacheEntry = async (
  file: string,
  key: string,
  value: unknown,
  options: AddCacheEntryOptions = {}
): Promise<void> => {
  if (options.root === undefined) mkdirSync(dirname(file), { recursive: true })
  else makeDirectoryInsideSync(options.root, dirname(file))
  await withFileLock(
    `${file}.lock`,
    () => {
      let entries: Record<string, unknown> = {}
      let text: string | undefined
      try {
        text = readFileBounded(file)
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e
      }
      if (text !== undefined) {
        const parsed = parseCacheFile(text, pythonJsonLoads)
        if (typeof parsed === "string") {
          // keep it aside rather than lose it, and start the API afresh
          const aside = `${file}.unreadable-${new Date().toISOString().replace(/[:.]/g, "-")}`
          renameSync(file, aside)
          options.note?.(`the simulator cache ${file} is ${parsed}; set aside as ${aside}`)
        } else entries = parsed
      }
      if (Object.hasOwn(entries, key)) return
      entries[key] = value
      try {
        // their server's json.dump(indent=4) (ensure_ascii), numbers as read (pythonJsonLoads: 10.0 stays 10.0)
        writeFileAtomicSync(file, jsonDumps(entries, { indent: 4 }), { fs: options.fs, root: options.root })
      } catch (e) {
        throw new CacheWriteError(file, e)
      }
    },
    options
  )
}
