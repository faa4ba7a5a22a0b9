// A pool of endpoints serving one model: least-loaded routing, ejection of sick endpoints, probes, failover.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { type InvalidModelSpec, ModelUnreachable, type ProviderError } from "./errors.ts"
import {
  type GenerateRequest,
  type GenerateResponse,
  LanguageModel,
  type LanguageModelShape
} from "./language-model.ts"
import { type ModelOptions, parseEndpoint } from "./model-options.ts"

/** One endpoint of the pool: the model as served there (already wrapped in its own resilience). */
export interface PoolEndpoint {
  /** The endpoint's address as the user gave it, e.g. http://gpu1:11434; names it in stats and messages. */
  readonly name: string
  /** Requests it serves at once (its OLLAMA_NUM_PARALLEL); the load of an endpoint is in-flight / concurrency. */
  readonly concurrency: number
  readonly model: LanguageModelShape
  /** A cheap liveness check (Ollama's /api/version, /v1/models): succeeds when the endpoint answers again. */
  readonly probe: Effect.Effect<unknown, ProviderError>
}

export interface PoolOptions {
  /** Consecutive 5xx / malformed-body failures that take an endpoint out. Refused connections and timeouts take it out at once. */
  readonly failuresToEject: number
  /** Wait between probes of an ejected endpoint. */
  readonly probeIntervalMs: number
}

/** The defaults of `PoolOptions`, in one place. */
export const POOL_DEFAULTS: PoolOptions = { failuresToEject: 3, probeIntervalMs: 2000 }

/** What the pool saw of one endpoint, for run.json and the bench summary. */
export interface EndpointStats {
  readonly endpoint: string
  readonly calls: number
  readonly errors: number
  readonly meanLatencyMs: number
  /** Times it was taken out of rotation. */
  readonly ejections: number
  readonly healthy: boolean
}

/** Where pools report: every pool built while this service is provided adds its endpoints' stats. */
export class PoolStats extends Context.Service<
  PoolStats,
  {
    readonly register: (stats: () => ReadonlyArray<EndpointStats>) => void
    readonly snapshot: () => ReadonlyArray<EndpointStats>
  }
>()("smurfs/PoolStats") {}

interface EndpointState {
  readonly endpoint: PoolEndpoint
  inFlight: number
  healthy: boolean
  consecutiveFailures: number
  probing: boolean
  calls: number
  errors: number
  latencyTotalMs: number
  ejections: number
}

/** Failures that say nothing about the endpoint (a prompt too long for the model, a bad reply): returned as they are, never retried elsewhere. */
const isRequestError = (e: ProviderError): boolean => !e.serverFault

/**
 * What a server failure does to its endpoint: taken out at once (it refuses, does not answer in time,
 * or lacks the model), or counted towards `failuresToEject`. Every provider error is listed, so a new
 * one does not compile until it is placed here.
 */
const ON_SERVER_FAILURE: Record<ProviderError["_tag"], "eject" | "count"> = {
  ModelUnreachable: "eject",
  Timeout: "eject",
  ModelNotFound: "eject",
  Overloaded: "count",
  ModelServerError: "count",
  ContextOverflow: "count"
}

const ejectsAtOnce = (e: ProviderError): boolean => ON_SERVER_FAILURE[e._tag] === "eject"

/** The healthy endpoint with the lowest load that this request has not tried yet. */
const pick = (states: ReadonlyArray<EndpointState>, tried: ReadonlySet<EndpointState>): EndpointState | undefined => {
  let best: EndpointState | undefined
  for (const s of states) {
    if (!s.healthy || tried.has(s)) continue
    if (!best || s.inFlight / s.endpoint.concurrency < best.inFlight / best.endpoint.concurrency) best = s
  }
  return best
}

/**
 * A model served by several endpoints. Each request goes to the least-loaded healthy endpoint; an
 * endpoint that refuses, times out or keeps failing is taken out and probed in the background until it
 * answers; a request that failed on one endpoint is retried on the others, so no task fails while one
 * endpoint is up. When every endpoint is out, the last error (or ModelUnreachable) reaches the caller.
 */
export const makePool = (
  endpoints: ReadonlyArray<PoolEndpoint>,
  options: Partial<PoolOptions> = {}
): Effect.Effect<
  { readonly model: LanguageModelShape; readonly stats: () => ReadonlyArray<EndpointStats> },
  never,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const settings = { ...POOL_DEFAULTS, ...options }
    const scope = yield* Effect.scope
    const states: Array<EndpointState> = endpoints.map((endpoint) => ({
      endpoint,
      inFlight: 0,
      healthy: true,
      consecutiveFailures: 0,
      probing: false,
      calls: 0,
      errors: 0,
      latencyTotalMs: 0,
      ejections: 0
    }))

    const probeUntilBack = (s: EndpointState): Effect.Effect<void> =>
      Effect.gen(function* () {
        for (;;) {
          yield* Effect.sleep(settings.probeIntervalMs)
          const answered = yield* Effect.match(s.endpoint.probe, { onFailure: () => false, onSuccess: () => true })
          if (answered) {
            s.healthy = true
            s.consecutiveFailures = 0
            return
          }
        }
      }).pipe(Effect.ensuring(Effect.sync(() => void (s.probing = false))))

    const eject = (s: EndpointState): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (!s.healthy) return Effect.void
        s.healthy = false
        s.ejections++
        if (s.probing) return Effect.void
        s.probing = true
        return Effect.asVoid(Effect.forkIn(probeUntilBack(s), scope))
      })

    const attempt = (s: EndpointState, request: GenerateRequest): Effect.Effect<GenerateResponse, ProviderError> =>
      Effect.suspend(() => {
        s.inFlight++
        s.calls++
        const started = performance.now()
        return s.endpoint.model.generate(request).pipe(
          Effect.tap(() =>
            Effect.sync(() => {
              s.consecutiveFailures = 0
              s.latencyTotalMs += performance.now() - started
            })
          ),
          Effect.tapError((e) =>
            Effect.suspend(() => {
              s.latencyTotalMs += performance.now() - started
              if (isRequestError(e)) return Effect.void
              s.errors++
              s.consecutiveFailures++
              return ejectsAtOnce(e) || s.consecutiveFailures >= settings.failuresToEject ? eject(s) : Effect.void
            })
          ),
          Effect.ensuring(Effect.sync(() => void s.inFlight--))
        )
      })

    const generate = (request: GenerateRequest): Effect.Effect<GenerateResponse, ProviderError> =>
      Effect.gen(function* () {
        const tried = new Set<EndpointState>()
        let last: ProviderError | undefined
        for (;;) {
          const s = pick(states, tried)
          if (!s) break
          tried.add(s)
          const outcome = yield* Effect.result(attempt(s, request))
          if (outcome._tag === "Success") return outcome.success
          last = outcome.failure
          if (isRequestError(last)) break
        }
        // every endpoint is out (or failed this request): the caller sees a server that cannot be reached
        return yield* last ??
          new ModelUnreachable({
            provider: endpoints[0]!.model.info.provider,
            host: endpoints.map((e) => e.name).join(", ")
          })
      })

    const stats = (): ReadonlyArray<EndpointStats> =>
      states.map((s) => ({
        endpoint: s.endpoint.name,
        calls: s.calls,
        errors: s.errors,
        meanLatencyMs: s.calls === 0 ? 0 : Math.round(s.latencyTotalMs / s.calls),
        ejections: s.ejections,
        healthy: s.healthy
      }))

    const registry = yield* Effect.serviceOption(PoolStats)
    if (registry._tag === "Some") registry.value.register(stats)
    return { model: { info: endpoints[0]!.model.info, generate }, stats }
  })

/** A registry for the pools of one program; bench reads it for run.json and its summary. */
export const poolStatsLayer = Layer.sync(PoolStats, () => {
  const sources: Array<() => ReadonlyArray<EndpointStats>> = []
  return { register: (stats) => void sources.push(stats), snapshot: () => sources.flatMap((s) => s()) }
})

/**
 * The LanguageModel of a provider's model on several servers (`--endpoints url*N,...`): `member` builds the
 * model at one address, given the options with that endpoint's own concurrency.
 */
export const endpointsLayer = (
  endpoints: ReadonlyArray<string>,
  options: ModelOptions,
  member: (url: string, own: ModelOptions) => Effect.Effect<PoolEndpoint, InvalidModelSpec>
): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  Layer.effect(
    LanguageModel,
    Effect.gen(function* () {
      const members = yield* Effect.forEach(endpoints, (endpoint) =>
        Effect.flatMap(parseEndpoint(endpoint), ({ url, concurrency }) =>
          member(url, { ...options, concurrency: concurrency ?? options.concurrency })
        )
      )
      return (yield* makePool(members)).model
    })
  )

/** One server of a provider: its model (wrapped in its resilience), requests it serves at once, a liveness probe. */
export interface ServedModel {
  readonly model: Effect.Effect<LanguageModelShape, InvalidModelSpec>
  readonly concurrency: number
  readonly probe: Effect.Effect<unknown, ProviderError>
}

/**
 * A provider's layer: the server of `options`, or each of `options.endpoints` pooled. `serve` builds one
 * server from its options and, for an endpoint, its address.
 */
export const servedLayer = (
  options: ModelOptions,
  serve: (options: ModelOptions, url?: string) => ServedModel
): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  options.endpoints !== undefined && options.endpoints.length > 0
    ? endpointsLayer(options.endpoints, options, (url, own) => {
        const one = serve(own, url)
        return Effect.map(one.model, (model) => ({ name: url, concurrency: one.concurrency, model, probe: one.probe }))
      })
    : Layer.effect(LanguageModel, serve(options).model)
