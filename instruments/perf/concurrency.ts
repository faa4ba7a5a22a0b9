// `bench:perf --only concurrency` (issue 33): Smurfs against ReAct and DFSDT on a modelled server in virtual time, for
// every cache model (slots: llama-server / Ollama; blocks: vLLM / SGLang) and every concurrency, with the client's
// levers (slot affinity, lanes) beside the plain run: uncached prompt tokens and GPU seconds per task, answered share.
import * as Effect from "effect/Effect"
import type { BenchQuery } from "../../bench/datasets.ts"
import { blockCacheModel, type CacheModel, describeCache } from "../../bench/sim/server.ts"
import type { LoopRules, SmurfsExecutor } from "../../src/agents/smurfs-options.ts"
import { type MethodName, type PerfSetup, runBatch } from "./harness.ts"
import { type Cell, table } from "./table.ts"

/** The modelled server's GPU costs (`bench/sim/prefix-cache.ts`' defaults). */
const PREFILL_MS = 0.25
const DECODE_MS = 20

/** The cache models of issue 33: 4 and 64 slots at llama-server's default similarity and at 0.5, and a block pool. */
export const CACHE_MODELS: ReadonlyArray<CacheModel> = [
  { kind: "slots", slots: 4, similarity: 0.1 },
  { kind: "slots", slots: 4, similarity: 0.5 },
  { kind: "slots", slots: 64, similarity: 0.1 },
  { kind: "slots", slots: 64, similarity: 0.5 },
  blockCacheModel()
]

export const CONCURRENCIES = [1, 4, 16, 64] as const

/** A method as the table names it: Smurfs with an executor, ReAct, DFSDT. */
interface Variant {
  readonly label: string
  readonly method: MethodName
  readonly executor?: SmurfsExecutor | undefined
  readonly rules?: Partial<LoopRules> | undefined
}

/**
 * Smurfs as it ships (the fused executor with JSON replies, short responses as step answers), the paper's loop as it
 * shipped before issue 33 (three requests per step, the Answer agent on every step), ReAct; the full run adds the
 * three-call executor with the shipped rules, the fused one with the Answer agent on every step, and DFSDT.
 */
export const variantsOf = (full: boolean): ReadonlyArray<Variant> => [
  { label: "smurfs", method: "smurfs" },
  { label: "paper loop", method: "smurfs", executor: "three-call", rules: { answerShortResponses: undefined } },
  ...(full
    ? [
        { label: "three-call", method: "smurfs", executor: "three-call" } as const,
        { label: "fused, every answer", method: "smurfs", rules: { answerShortResponses: undefined } } as const
      ]
    : []),
  { label: "react", method: "react" },
  ...(full ? [{ label: "dfsdt", method: "dfsdt" } as const] : [])
]

/**
 * How the client talks to the server: plainly, with `id_slot` per task (`--slot-affinity`), with one model lane per
 * slot (`--lanes`, `src/llm/model-lanes.ts` over the sim), or both (lane i on slot i).
 */
type Client = "plain" | "affinity" | "lanes" | "lanes + affinity"

/** The client settings worth a row for a cache model at a concurrency (levers need slots; lanes need more tasks than slots). */
const clientsFor = (cache: CacheModel, concurrency: number): ReadonlyArray<Client> =>
  cache.kind === "blocks"
    ? ["plain"]
    : concurrency === 1
      ? ["plain"]
      : concurrency > cache.slots
        ? ["plain", "affinity", "lanes", "lanes + affinity"]
        : ["plain", "affinity"]

export interface ConcurrencyRow {
  readonly cache: string
  readonly concurrency: number
  readonly client: Client
  readonly method: string
  readonly tasks: number
  readonly answered: number
  readonly callsPerTask: number
  readonly uncachedPerTask: number
  readonly gpuSecondsPerTask: number
  readonly outputPerTask: number
  readonly forced: number
}

/** Run every cache model × concurrency × client × method on `queries` (improved profile, task-aware sim). */
export const measureConcurrency = (
  setup: PerfSetup,
  queries: ReadonlyArray<BenchQuery>,
  log: (line: string) => void,
  variants: ReadonlyArray<Variant>,
  caches: ReadonlyArray<CacheModel> = CACHE_MODELS,
  concurrencies: ReadonlyArray<number> = CONCURRENCIES
) =>
  Effect.gen(function* () {
    const rows: Array<ConcurrencyRow> = []
    for (const cache of caches)
      for (const concurrency of concurrencies)
        for (const client of clientsFor(cache, concurrency)) {
          log(
            `concurrency: ${describeCache(cache)}, ${concurrency} in flight, ${client} client, ${queries.length} tasks`
          )
          for (const v of variants) {
            const batch = yield* runBatch(setup, {
              method: v.method,
              sim: "sim",
              queries,
              concurrency,
              executor: v.executor,
              rules: v.rules,
              server: {
                cache,
                prefillMsPerToken: PREFILL_MS,
                decodeMsPerToken: DECODE_MS,
                affinity: client === "affinity" || client === "lanes + affinity"
              },
              // the shipped lanes, as `--lanes auto` sets them on a server of that many slots (default grace time)
              lanes: client.startsWith("lanes") && cache.kind === "slots" ? { lanes: cache.slots } : undefined
            })
            const server = batch.server!
            const n = Math.max(1, batch.samples.length)
            rows.push({
              cache: describeCache(cache),
              concurrency,
              client,
              method: v.label,
              tasks: batch.samples.length,
              answered: batch.samples.filter((s) => s.answered).length / n,
              callsPerTask: server.totals.requests / n,
              uncachedPerTask: server.totals.uncachedTokens / n,
              gpuSecondsPerTask: server.totals.gpuMs / 1000 / n,
              outputPerTask: server.totals.outputTokens / n,
              forced: server.forced()
            })
          }
        }
    return rows
  })

const pct = (x: number) => `${(x * 100).toFixed(1)}%`
const r2 = (x: number) => Number(x.toFixed(2))

/**
 * The issue's table, one per cache model: per concurrency and client, each method's uncached prompt tokens and GPU
 * seconds per task with Smurfs' ratios to ReAct of the same run, and each method's answered share.
 */
export const concurrencyTables = (rows: ReadonlyArray<ConcurrencyRow>, tasks: number): ReadonlyArray<string> => {
  const caches = [...new Set(rows.map((r) => r.cache))]
  const methods = [...new Set(rows.map((r) => r.method))]
  const compared = methods.filter((m) => m !== "react" && m !== "dfsdt")
  return caches.map((cache) => {
    const own = rows.filter((r) => r.cache === cache)
    const groups = [...new Set(own.map((r) => `${r.concurrency}\u0000${r.client}`))]
    const body: Array<Array<Cell>> = groups.map((g) => {
      const [c, client] = g.split("\u0000")
      const of = (m: string) => own.find((r) => `${r.concurrency}\u0000${r.client}` === g && r.method === m)
      const react = of("react")
      const ratio = (m: string, key: "uncachedPerTask" | "gpuSecondsPerTask") => {
        const row = of(m)
        return row && react ? r2(row[key] / react[key]) : null
      }
      // the cost of a solved task: GPU seconds per answered task, against ReAct's (which answers fewer)
      const perAnswered = (m: string) => {
        const row = of(m)
        return row && react && row.answered > 0 && react.answered > 0
          ? r2(row.gpuSecondsPerTask / row.answered / (react.gpuSecondsPerTask / react.answered))
          : null
      }
      return [
        Number(c),
        client!,
        ...methods.map((m) => Math.round(of(m)?.uncachedPerTask ?? Number.NaN)),
        ...compared.map((m) => ratio(m, "uncachedPerTask")),
        ...methods.map((m) => r2(of(m)?.gpuSecondsPerTask ?? Number.NaN)),
        ...compared.map((m) => ratio(m, "gpuSecondsPerTask")),
        ...compared.map(perAnswered),
        methods.map((m) => pct(of(m)?.answered ?? Number.NaN)).join(" / ")
      ]
    })
    const forced = own.reduce((n, r) => n + r.forced, 0)
    return table(
      `Modelled server, ${cache} (${PREFILL_MS} ms a computed prompt token, ${DECODE_MS} ms a reply token), ${tasks} tasks, virtual time${forced > 0 ? `; the clock moved ${forced} times without every task waiting` : ""}; uncached prompt tokens and GPU s per task, their ratio to ReAct's, and the GPU s per answered task's; answered: ${methods.join(" / ")}`,
      [
        "in flight",
        "client",
        ...methods.map((m) => `uncached ${m}`),
        ...compared.map((m) => `${m} / react`),
        ...methods.map((m) => `GPU s ${m}`),
        ...compared.map((m) => `${m} / react`),
        ...compared.map((m) => `per answered ${m} / react`),
        "answered"
      ],
      body
    )
  })
}
