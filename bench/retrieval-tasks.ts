// `--toolset retrieve[:k]` for the bench and its queue workers: every task retrieves its tools from the pooled corpus of all query files.

import * as Effect from "effect/Effect"
import { retrievalTask, retrieveTaskSet, type SetEntry } from "../src/agents/retrieval-task.ts"
import type { Task } from "../src/agents/task.ts"
import type { LanguageModelShape } from "../src/llm/language-model.ts"
import type { ToolEnvironment } from "../src/tools/environments/environment.ts"
import type { Embedder } from "../src/tools/retrieval/embedder.ts"
import { contentHash } from "../src/tools/retrieval/embedding-cache.ts"
import { makeRetriever, type Retriever } from "../src/tools/retrieval/retriever.ts"
import { readFileBounded } from "../src/trace/guarded-fs.ts"
import { toolbenchCorpus } from "./corpus.ts"
import { type BenchQuery, groupsIn, loadQueries } from "./datasets.ts"
import { runConfigPath } from "./run-format.ts"

export interface RetrievalCorpusOptions {
  /** The data directory: every query file under it makes the corpus. */
  readonly data: string
  readonly env: ToolEnvironment
  readonly k: number
  readonly embedder?: Embedder | undefined
  readonly embeddingCache?: string | undefined
  /** Re-rank with this model (the run's own). */
  readonly reranker?: LanguageModelShape | undefined
  /** Hears of a task whose retrieval found no tool and fell back (the bench's progress log). */
  readonly warn?: ((text: string) => void) | undefined
}

export interface RetrievalTasksOptions {
  readonly corpus: RetrievalCorpus
  /** The queries the run solves. */
  readonly queries: ReadonlyArray<BenchQuery>
  /** Task-level sets recorded by the run being resumed, reused so a resume solves the same tasks. */
  readonly recordedSets?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
  /** Retrievals at once while the task-level sets are computed (re-ranking calls the model). */
  readonly concurrency?: number | undefined
}

/** What run.json records of the retrieval: its settings (checked on resume) and each task's set. */
export interface RetrievalRecord {
  readonly settings: RetrievalSettings
  /** `<group>/<query id>` -> the task's tools (corpus names), best first. */
  readonly sets: Record<string, Array<string>>
}

// a type, not an interface: run.json's schema reads it as a plain record
export type RetrievalSettings = {
  readonly k: number
  readonly mode: string
  readonly embed: string | null
  readonly corpusApis: number
  /** Names the corpus: a worker whose --data gives another corpus cannot run the run's tasks. */
  readonly corpusHash: string
}

/** The task-level sets a run directory's run.json recorded, if any (a resume reuses them). */
export const recordedRetrievalSets = (runDir: string): Record<string, Array<string>> | undefined => {
  try {
    const sets = (JSON.parse(readFileBounded(runConfigPath(runDir))) as { retrieval?: { sets?: unknown } }).retrieval
      ?.sets
    return typeof sets === "object" && sets !== null ? (sets as Record<string, Array<string>>) : undefined
  } catch {
    return undefined // a new run: nothing recorded yet
  }
}

export const taskKey = (query: Pick<BenchQuery, "group" | "id">) => `${query.group}/${query.id}`

/** The corpus of the data directory and its retriever; built by the bench and, from its own --data, by each queue worker. */
export interface RetrievalCorpus {
  readonly retriever: Retriever
  readonly settings: RetrievalSettings
  /** A query's set for the whole task, best first, with scores. */
  readonly setOf: (query: BenchQuery) => Effect.Effect<Array<SetEntry>>
  /** A query's task on its set (names, or entries with scores), with per-subtask retrieval for the Smurfs executor. */
  readonly taskOf: (query: BenchQuery, set: ReadonlyArray<SetEntry | string>) => Task
}

export const makeRetrievalCorpus = (
  options: RetrievalCorpusOptions
): Effect.Effect<
  RetrievalCorpus,
  Effect.Error<ReturnType<typeof loadQueries>> | Effect.Error<ReturnType<typeof makeRetriever>>
> =>
  Effect.gen(function* () {
    // every query file under the data directory, whichever groups it holds
    const all = yield* loadQueries({ dir: options.data, groups: groupsIn(options.data) })
    const corpus = toolbenchCorpus(all, options.env)
    const retriever = yield* makeRetriever(corpus.library, {
      embedder: options.embedder,
      embeddingCache: options.embeddingCache,
      reranker: options.reranker
    })
    return {
      retriever,
      settings: {
        k: options.k,
        mode: retriever.mode,
        embed: options.embedder?.spec ?? null,
        corpusApis: corpus.library.tools.length,
        corpusHash: contentHash(
          "corpus",
          corpus.library.tools.map((t) => t.name)
        ).slice(0, 16)
      },
      setOf: (query) =>
        retrieveTaskSet(retriever, query.query, options.k, (text) => options.warn?.(`${taskKey(query)}: ${text}`)),
      taskOf: (query, set) =>
        retrievalTask(retriever, { id: query.id, query: query.query, name: taskKey(query) }, set, options.k)
    }
  })

/**
 * Build the corpus and retriever, and compute each task's top-k now (so that run.json records the
 * sets before any task runs). The returned `taskOf` gives each task its set as `tools` and a
 * `retrieve` for the Smurfs executor's per-subtask retrieval from the whole corpus.
 */
export const makeRetrievalTasks = (options: RetrievalTasksOptions) =>
  Effect.gen(function* () {
    const corpus = options.corpus
    // run.json keeps the names; the trajectories get the scores of the sets ranked now
    const ranked = new Map<string, ReadonlyArray<SetEntry | string>>()
    const sets: Record<string, Array<string>> = {}
    yield* Effect.forEach(
      options.queries,
      (query) =>
        Effect.gen(function* () {
          const recorded = options.recordedSets?.[taskKey(query)]
          const set = recorded ? [...recorded] : yield* corpus.setOf(query)
          ranked.set(taskKey(query), set)
          sets[taskKey(query)] = set.map((e) => (typeof e === "string" ? e : e.name))
        }),
      { concurrency: options.concurrency ?? 4, discard: true }
    )
    const record: RetrievalRecord = { settings: corpus.settings, sets }
    const taskOf = (query: BenchQuery): Task => corpus.taskOf(query, ranked.get(taskKey(query)) ?? [])
    return { taskOf, record }
  })
