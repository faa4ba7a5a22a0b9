// One ToolBench query as a task for `smurfs run` and `smurfs tools`: its text and its api_list as tools, served by the chosen environments.
import { join, resolve } from "node:path"
import * as Effect from "effect/Effect"
import type { Task } from "../src/agents/task.ts"
import type { LanguageModelShape } from "../src/llm/language-model.ts"
import { makeEnvironmentChain } from "../src/tools/environments/chain.ts"
import type { ReplayMatch } from "../src/tools/environments/recorded.ts"
import type { SimulatorPrompts } from "../src/tools/environments/simulator-prompts.ts"
import { toolbenchLibrary } from "../src/tools/toolbench/adapter.ts"
import type { ApiDocInput } from "../src/tools/toolbench/api-doc.ts"
import { type BenchQuery, DatasetError, dataLayout, groupsIn, loadQueries } from "./datasets.ts"
import { taskOf } from "./tasks.ts"

export interface ToolbenchTaskOptions {
  /** The data directory (either layout, see bench/datasets.ts). */
  readonly data: string
  readonly queryId: string
  /** Tool environments in order: replay, simulated, offline. */
  readonly envs: ReadonlyArray<string>
  readonly toolset?: "all" | "relevant" | undefined
  /** Where simulated responses are stored, so that the next run replays them. */
  readonly storeDir?: string | undefined
  readonly responses?: string | undefined
  readonly cacheDir?: string | undefined
  /** The model that answers calls nothing recorded (`simulated`), apart from the model under test; its responses go to `cacheDir`'s layout in `storeDir`. */
  readonly simulator?: LanguageModelShape | undefined
  readonly simulatorPrompts?: SimulatorPrompts | undefined
  /** Tool responses whole, not cut to 1,024 characters (`--profile reference`: the methods cut their own). */
  readonly wholeResponses?: boolean | undefined
  /** How replay matches arguments (`--profile reference`: exact, as StableToolBench's server). */
  readonly replayMatch?: ReplayMatch | undefined
}

/** Where `smurfs run` keeps simulated responses when no --store-dir is given. */
export const DEFAULT_STORE_DIR = join(".smurfs-cache", "simulated")

/** The query with this id in any group of the data directory, as a Task whose tools call the environments. */
export const toolbenchTask = (options: ToolbenchTaskOptions) =>
  Effect.gen(function* () {
    const layout = dataLayout(options.data)
    // a data folder may hold only some of the groups
    const queries = yield* loadQueries({ dir: options.data, groups: groupsIn(options.data), ids: [options.queryId] })
    const query: BenchQuery | undefined = queries[0]
    if (query === undefined)
      return yield* new DatasetError({
        path: resolve(options.data),
        problem: `no query has the id ${options.queryId}`,
        hint: "Check --query-id against the query_id fields of the query files."
      })
    const env = yield* makeEnvironmentChain(options.envs, {
      responses: options.responses ?? layout.responses,
      cacheDir: options.cacheDir ?? layout.toolResponseCache,
      storeDir: options.storeDir ?? DEFAULT_STORE_DIR,
      simulatorPrompts: options.simulatorPrompts,
      replayMatch: options.replayMatch,
      ...(options.simulator === undefined
        ? {}
        : {
            simulator: options.simulator,
            writeCacheDir: join(options.storeDir ?? DEFAULT_STORE_DIR, "tool_response_cache")
          })
    })
    const task: Task = taskOf(query, options.toolset ?? "all", (name, docs) =>
      toolbenchLibrary(
        name,
        docs as ReadonlyArray<ApiDocInput>,
        env,
        options.wholeResponses ? { maxObservationChars: Number.POSITIVE_INFINITY } : {}
      )
    )
    return { query, task, env }
  })
