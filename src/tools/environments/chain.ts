// Environment chains: each call goes to the first environment that answers (replay, then simulated, then offline).
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { LanguageModel } from "../../llm/language-model.ts"
import type { ToolResult } from "../tool.ts"
import { type ToolEnvironment, ToolEnvError } from "./environment.ts"
import { makeOfflineEnvironment, type OfflineMode } from "./offline.ts"
import { makeReplayIndex } from "./recorded.ts"
import { loadReplayIndex, makeReplayEnvironment } from "./replay.ts"
import { makeSimulatedEnvironment, SIMULATED_STORE_FILE } from "./simulated.ts"

/** Environments a chain can name. */
export const ENVIRONMENT_NAMES = ["replay", "simulated", "offline"] as const
export type EnvironmentName = (typeof ENVIRONMENT_NAMES)[number]

/** An environment that asks each of `envs` in turn; when all miss, the call fails with "no environment answered". */
export const chainEnvironments = (envs: ReadonlyArray<ToolEnvironment>): ToolEnvironment => ({
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
        error: `no environment answered the call to ${call.stdTool}.${call.stdApi} (tried ${envs.map((e) => e.name).join(", ") || "none"})`
      } satisfies ToolResult
    })
})

export interface EnvironmentChainOptions {
  /** A `responses.jsonl` file to replay. */
  readonly responses?: string | undefined
  /** A StableToolBench cache folder to replay. */
  readonly cacheDir?: string | undefined
  /** Folder where simulated responses are stored (and replayed from on the next run). */
  readonly storeDir?: string | undefined
  /** The folder the store must stay in when it is inside one (the run directory): no symbolic link below it is followed. */
  readonly storeRoot?: string | undefined
  /** What the offline environment answers; `error` by default. */
  readonly offlineMode?: OfflineMode | undefined
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
    if (names.length === 0) return yield* new ToolEnvError({ environment: "chain", reason: `no environment named; use some of ${ENVIRONMENT_NAMES.join(", ")}` })
    const unknown = names.filter((n) => !(ENVIRONMENT_NAMES as ReadonlyArray<string>).includes(n))
    if (unknown.length > 0)
      return yield* new ToolEnvError({ environment: unknown.join(", "), reason: `unknown environment; use some of ${ENVIRONMENT_NAMES.join(", ")}` })
    const store = options.storeDir === undefined ? undefined : join(options.storeDir, SIMULATED_STORE_FILE)
    const index = yield* loadReplayIndex(
      {
        responses: options.responses ? [options.responses] : [],
        cacheDirs: options.cacheDir ? [options.cacheDir] : [],
        stores: store && existsSync(store) ? [store] : []
      },
      makeReplayIndex()
    )
    const envs: ToolEnvironment[] = []
    for (const name of names) {
      if (name === "replay") envs.push(makeReplayEnvironment(index))
      else if (name === "offline") envs.push(makeOfflineEnvironment(options.offlineMode ?? "error"))
      else {
        const model = yield* Effect.serviceOption(LanguageModel)
        if (Option.isNone(model))
          return yield* new ToolEnvError({ environment: "simulated", reason: "it needs a model; pass --model (or drop simulated from the chain)" })
        envs.push(yield* makeSimulatedEnvironment({ index, storeDir: options.storeDir, storeRoot: options.storeRoot }).pipe(Effect.provideService(LanguageModel, model.value)))
      }
    }
    return chainEnvironments(envs)
  })
