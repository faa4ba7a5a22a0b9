// The run directory on disk: opening (new or resumed) with its guards, reading records. Writes go through src/trace/atomic-write.ts.
import { existsSync, lstatSync, readdirSync, rmSync } from "node:fs"
import { basename, join } from "node:path"
import * as Effect from "effect/Effect"
import { z } from "zod"
import { TMP_MARK, writeJsonAtomic } from "../src/trace/atomic-write.ts"
import { RunDirError } from "../src/trace/fs-problem.ts"
import { readFileBounded } from "../src/trace/guarded-fs.ts"
import { LOCK_FILE, RUN_FORMAT_VERSION, RunConfig, runConfigPath, TaskRecord, taskRecordDir } from "./run-format.ts"
import { runSeedsOf, settingsDiff } from "./run-settings.ts"

/** Every file under `dir`, recursively. */
const walk = (dir: string): Array<string> =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]
      )
    : []

/** A folder with no file anywhere below it. */
const isEmptyFolder = (path: string): boolean => {
  try {
    // a link is never taken for an empty folder: what it points to is not the run's
    return lstatSync(path).isDirectory() && walk(path).length === 0
  } catch {
    return false
  }
}

/** Remove temp files left by writes that a crash cut short. */
export const removeStrayTemps = (run: string): number => {
  const stray = walk(run).filter((f) => basename(f).includes(TMP_MARK))
  for (const f of stray) rmSync(f, { force: true })
  return stray.length
}

/** What is wrong with a run written in a newer run format than this smurfs reads. */
export const newerRunProblem = (format: number): string =>
  `the run was written by a newer smurfs (run format ${format}; this smurfs reads up to ${RUN_FORMAT_VERSION})`

/** The run format of `run` when it is newer than this smurfs reads; undefined otherwise (also without a readable run.json). */
export const newerRunFormat = (run: string): number | undefined => {
  try {
    const version = z.object({ formatVersion: z.number() }).safeParse(JSON.parse(readFileBounded(runConfigPath(run))))
    return version.success && version.data.formatVersion > RUN_FORMAT_VERSION ? version.data.formatVersion : undefined
  } catch {
    return undefined
  }
}

const readRunConfig = (run: string): Effect.Effect<RunConfig, RunDirError> =>
  Effect.gen(function* () {
    const path = runConfigPath(run)
    if (!existsSync(path))
      return yield* new RunDirError({
        path: run,
        problem: "this directory has no run.json, so it is not a smurfs run directory",
        hint: "Choose an empty or new directory with --out."
      })
    const raw = yield* Effect.try({
      try: () => JSON.parse(readFileBounded(path)) as unknown,
      catch: (e) =>
        new RunDirError({
          path,
          problem: `run.json cannot be read as JSON (${(e as Error).message})`,
          hint: "Restore run.json, or start a new run in another directory."
        })
    })
    const version = z.object({ formatVersion: z.number() }).safeParse(raw)
    if (version.success && version.data.formatVersion > RUN_FORMAT_VERSION)
      return yield* new RunDirError({
        path,
        problem: newerRunProblem(version.data.formatVersion),
        hint: "Upgrade smurfs to resume it, or start a new run in another directory."
      })
    const parsed = RunConfig.safeParse(raw)
    if (!parsed.success)
      return yield* new RunDirError({
        path,
        problem: `run.json is malformed: ${z.prettifyError(parsed.error).split("\n")[0]}`,
        hint: "Restore run.json, or start a new run in another directory."
      })
    return parsed.data
  })

/**
 * Open a run directory. A new (or empty) directory gets `config` as its run.json; a non-empty one is
 * refused unless `resume`, and then its own run.json (format checked) is kept; settings that differ
 * from it are refused unless `force`, which adds any new methods and groups and records the differences.
 * Stray temp files are removed.
 */
export const openRunDir = (
  run: string,
  config: RunConfig,
  resume: boolean,
  force = false
): Effect.Effect<{ config: RunConfig; resumed: boolean }, RunDirError> =>
  Effect.gen(function* () {
    // A kill -9 during the first write of run.json leaves only its temp file: that run never started.
    // The writer's lock (run-lock.ts) lives in the directory too and does not make it a run.
    // Folders without a file are not a run either: the simulator's cache folder inside the run (--simulator without
    // --cache-dir) is created before the run directory is opened.
    const entries = (existsSync(run) ? readdirSync(run) : []).filter(
      (name) => !name.startsWith(LOCK_FILE) && !isEmptyFolder(join(run, name))
    )
    const empty = entries.every((name) => name.startsWith(`run.json${TMP_MARK}`))
    if (empty) {
      for (const name of entries) rmSync(join(run, name), { force: true })
      yield* writeJsonAtomic({ root: run, path: runConfigPath(run) }, config)
      return { config, resumed: false }
    }
    if (!resume)
      return yield* new RunDirError({
        path: run,
        problem: "the run directory is not empty",
        hint: "Pass --resume to continue that run (finished tasks are skipped), or choose another --out."
      })
    const existing = yield* readRunConfig(run)
    const diff = settingsDiff(existing, config)
    if (diff.length > 0 && !force)
      return yield* new RunDirError({
        path: run,
        problem: `--resume asks for other settings than the run was started with (${diff.join("; ")})`,
        hint: "Resume with the run's own settings (see its run.json), start a new run with another --out, or pass --force to continue with these settings anyway (run.json records the difference)."
      })
    removeStrayTemps(run)
    // A forced resume may add methods or groups; run.json lists everything the directory holds and what was forced.
    const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => [...new Set([...a, ...b])]
    const forced =
      diff.length > 0
        ? [
            ...((existing.options["forcedResumes"] as Array<unknown> | undefined) ?? []),
            { at: config.createdAt, differences: diff }
          ]
        : undefined
    // a resume with more agent runs adds them (their seeds continue the run's: settingsDiff checked it)
    const moreRuns = runSeedsOf(config).length > runSeedsOf(existing).length ? { runs: runSeedsOf(config) } : undefined
    const merged: RunConfig = {
      ...existing,
      methods: union(existing.methods, config.methods),
      groups: union(existing.groups, config.groups),
      ...(forced || moreRuns
        ? {
            options: { ...existing.options, ...moreRuns, ...(forced ? { forcedResumes: forced } : {}) },
            ...(forced ? { taskCounts: { ...existing.taskCounts, ...config.taskCounts } } : {})
          }
        : {})
    }
    if (
      forced ||
      moreRuns ||
      merged.methods.length !== existing.methods.length ||
      merged.groups.length !== existing.groups.length
    )
      yield* writeJsonAtomic({ root: run, path: runConfigPath(run) }, merged)
    return { config: merged, resumed: true }
  })

/** A task record if the file exists and is a complete, valid record; anything else counts as not done. */
export const readRecord = (file: string): TaskRecord | undefined => {
  try {
    const parsed = TaskRecord.safeParse(JSON.parse(readFileBounded(file)))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

/** The valid records of one method and group. */
export const readRecords = (run: string, method: string, group: string): Array<TaskRecord> => {
  const dir = taskRecordDir(run, method, group)
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .flatMap((f) => readRecord(join(dir, f)) ?? [])
}
