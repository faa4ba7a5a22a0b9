// Environment chains: each call goes to the first environment that answers (replay, then simulated, then offline).
import { accessSync, constants, existsSync, statSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { LanguageModel, type LanguageModelShape } from "../../llm/language-model.ts"
import type { ToolResult } from "../tool.ts"
import { ToolEnvError, type ToolEnvironment } from "./environment.ts"
import { makeOfflineEnvironment, type OfflineMode } from "./offline.ts"
import { makeReplayIndex, type ReplayMatch } from "./recorded.ts"
import { loadReplayIndex, makeReplayEnvironment } from "./replay.ts"
import { makeSimulatedEnvironment, SIMULATED_STORE_FILE } from "./simulated.ts"
import type { SimulatorPrompts } from "./simulator-prompts.ts"

/** Environments a chain can name. */
export const ENVIRONMENT_NAMES = ["replay", "simulated", "offline"] as const
export type EnvironmentName = (typeof ENVIRONMENT_NAMES)[number]

/** An environment that asks each of `envs` in turn; when all miss, the call fails with "no environment answered". */
export const chainEnvironments = (
  envs: ReadonlyArray<ToolEnvironment>,
  marks: Partial<ToolResult> = {}
): ToolEnvironment => ({
  name: envs.map((e) => e.name).join(">"),
  serve: (call) =>
    Effect.gen(function* () {
      for (const env of envs) {
        const result = yield* env.serve(call)
        if (result !== undefined) return result
      }
      return {
        ok: false,
        content: "",
        error: `no environment answered the call to ${call.stdTool}.${call.stdApi} (tried ${envs.map((e) => e.name).join(", ") || "none"})`,
        ...marks
      } satisfies ToolResult
    })
})

export interface EnvironmentChainOptions {
  /** A `responses.jsonl` file to replay. */
  readonly responses?: string | undefined
  /** A StableToolBench cache folder to replay. */
  readonly cacheDir?: string | undefined
  /** More StableToolBench cache folders to replay (a verified replay reads its run's simulated responses so). */
  readonly moreCacheDirs?: ReadonlyArray<string> | undefined
  /** Folder where simulated responses are stored (and replayed from on the next run). */
  readonly storeDir?: string | undefined
  /** The folder the store must stay in when it is inside one (the run directory): no symbolic link below it is followed. */
  readonly storeRoot?: string | undefined
  /** What the offline environment answers; `error` by default. */
  readonly offlineMode?: OfflineMode | undefined
  /**
   * A StableToolBench cache folder simulated responses are written to, in their layout (created when
   * missing, replayed from too); then they are not appended to `storeDir`, which is only read.
   */
  readonly writeCacheDir?: string | undefined
  /** The model that answers misses in `simulated`; without it, the LanguageModel in context (the model under test). */
  readonly simulator?: LanguageModelShape | undefined
  /** The simulator's texts and sampling (StableToolBench's with --stb, else ours). */
  readonly simulatorPrompts?: SimulatorPrompts | undefined
  /** How replay matches arguments (the profile's: `exact` under reference); lenient by default. */
  readonly replayMatch?: ReplayMatch | undefined
}

/**
 * Build a chain from names (`replay`, `simulated`, `offline`), in order. Replay and simulated share one
 * index, so a simulated response is replayed on the next identical call. `simulated` needs a LanguageModel.
 */
export const makeEnvironmentChain = (
  names: ReadonlyArray<string>,
  options: EnvironmentChainOptions = {}
): Effect.Effect<ToolEnvironment, ToolEnvError, LanguageModel> =>
  Effect.gen(function* () {
    if (names.length === 0)
      return yield* new ToolEnvError({
        environment: "chain",
        reason: `no environment named; use some of ${ENVIRONMENT_NAMES.join(", ")}`
      })
    const unknown = names.filter((n) => !(ENVIRONMENT_NAMES as ReadonlyArray<string>).includes(n))
    if (unknown.length > 0)
      return yield* new ToolEnvError({
        environment: unknown.join(", "),
        reason: `unknown environment; use some of ${ENVIRONMENT_NAMES.join(", ")}`
      })
    const store = options.storeDir === undefined ? undefined : join(options.storeDir, SIMULATED_STORE_FILE)
    const writeDir = options.writeCacheDir
    // Checked, not created: the folder appears with the first simulated response. A default one lies inside the run
    // directory, which must still be empty when the run opens it (a new --out would be refused as "not empty").
    if (writeDir !== undefined && names.includes("simulated"))
      yield* Effect.try({
        try: () => checkCreatable(writeDir),
        catch: (e) =>
          new ToolEnvError({
            environment: "simulated",
            reason: `cannot create the cache folder ${writeDir}: ${(e as Error).message}`
          })
      })
    const cacheDirs = [
      // (the simulator's own folder, not made yet, has nothing to replay: it appears with the first response)
      ...(options.cacheDir && (options.cacheDir !== writeDir || existsSync(options.cacheDir))
        ? [options.cacheDir]
        : []),
      ...(options.moreCacheDirs ?? []).filter((dir) => dir !== options.cacheDir && existsSync(dir)),
      ...(writeDir !== undefined && writeDir !== options.cacheDir && existsSync(writeDir) ? [writeDir] : [])
    ]
    const index = yield* loadReplayIndex(
      {
        responses: options.responses ? [options.responses] : [],
        cacheDirs,
        stores: store && existsSync(store) ? [store] : []
      },
      makeReplayIndex({ match: options.replayMatch })
    )
    const envs: ToolEnvironment[] = []
    for (const name of names) {
      if (name === "replay") envs.push(makeReplayEnvironment(index))
      else if (name === "offline") envs.push(markedMisses(makeOfflineEnvironment(options.offlineMode ?? "error")))
      else {
        const model =
          options.simulator === undefined ? yield* Effect.serviceOption(LanguageModel) : Option.some(options.simulator)
        if (Option.isNone(model))
          return yield* new ToolEnvError({
            environment: "simulated",
            reason: "it needs a model; pass --simulator (or drop simulated from the chain)"
          })
        const stored =
          writeDir === undefined
            ? { storeDir: options.storeDir, storeRoot: options.storeRoot }
            : { cacheDir: writeDir, storeRoot: options.storeRoot }
        envs.push(
          yield* makeSimulatedEnvironment({ index, ...stored, prompts: options.simulatorPrompts }).pipe(
            Effect.provideService(LanguageModel, model.value)
          )
        )
      }
    }
    return chainEnvironments(envs, { missed: true, served: { by: "missed" } })
  })

/** Throws unless `dir` is a folder that can be written to, or could be created: its nearest existing ancestor is a writable folder. */
const checkCreatable = (dir: string): void => {
  let at = resolve(dir)
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at)
  if (!statSync(at).isDirectory()) throw new Error(`${at} is not a folder`)
  accessSync(at, constants.W_OK)
}

/** The offline environment answers what nothing recorded or simulated: its answers are misses, counted by runs. */
const markedMisses = (env: ToolEnvironment): ToolEnvironment => ({
  name: env.name,
  serve: (call) =>
    Effect.map(env.serve(call), (result) =>
      result === undefined ? undefined : { ...result, missed: true, served: { by: "missed" as const } }
    )
})
