// The OpenAI-compatible provider: the official `openai` client against any /v1 server (Ollama, vLLM, llama.cpp...).

import * as Effect from "effect/Effect"
import type OpenAI from "openai"
import type { APIError } from "openai"
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam
} from "openai/resources/chat/completions"
import { addSecret } from "../trace/redact.ts"
import { boundedFetch } from "./bounded-fetch.ts"
import { ModelServerError, type ProviderError } from "./errors.ts"
import type {
  GenerateRequest,
  GenerateResponse,
  LanguageModelShape,
  Message,
  ToolCallRequest
} from "./language-model.ts"
import { ModelLane } from "./model-lanes.ts"
import { ModelTask, makeSlotAffinity, type SlotAffinity } from "./model-task.ts"
import { NestingTooDeep, parseJsonBounded } from "./nesting.ts"
import { REFLECTION_PREFIX } from "./ollama.ts"
import { type CallSite, displayHost, fromStatus, fromTransport, tryPromiseWithin } from "./provider-errors.ts"
import { resendEvents } from "./resend-events.ts"
import { replyWithThinking } from "./thinking.ts"

/** Everything the provider needs, defaults already applied (see `ModelOptions` in spec.ts for their meaning). */
export interface OpenAISettings {
  readonly model: string
  /** The server's /v1 URL. */
  readonly baseURL: string
  readonly apiKey: string
  readonly numCtx: number
  readonly timeoutMs: number
  readonly seed: number
  readonly temperature: number
  readonly supportsTools?: boolean | undefined
  /** Thinking on, off or a level (see `ModelOptions.think`); undefined leaves the server's default. */
  readonly think?: boolean | "low" | "medium" | "high" | undefined
  /** Pin each task's requests to one of the server's slots (see `ModelOptions.slotAffinity`); undefined: none. */
  readonly slotAffinity?: number | "auto" | undefined
}

/** The name under which the schema travels in `response_format`; servers only echo it. */
const SCHEMA_NAME = "reply"

/**
 * Our messages in chat-completions roles. Tool calls need ids that tool messages refer to: when
 * ours have none, they get positional ids, and a tool message without an id answers the latest
 * unanswered call of its tool.
 */
export const toOpenAIMessages = (messages: ReadonlyArray<Message>): ChatCompletionMessageParam[] => {
  const open: Array<{ id: string; name: string }> = []
  return messages.map((m, index): ChatCompletionMessageParam => {
    switch (m.role) {
      case "reflection":
        return { role: "user", content: `${REFLECTION_PREFIX} ${m.content}` }
      case "assistant": {
        if (!m.toolCalls || m.toolCalls.length === 0) return { role: "assistant", content: m.content }
        const calls = m.toolCalls.map((c, i) => ({
          id: c.id ?? `call_${index}_${i}`,
          name: c.name,
          arguments: c.rawArguments ?? JSON.stringify(c.arguments)
        }))
        open.push(...calls.map((c) => ({ id: c.id, name: c.name })))
        return {
          role: "assistant",
          content: m.content.length > 0 ? m.content : null,
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: c.arguments }
          }))
        }
      }
      case "tool": {
        const match = m.toolCallId
          ? open.findIndex((c) => c.id === m.toolCallId)
          : open.findLastIndex((c) => c.name === m.toolName)
        const id = m.toolCallId ?? (match >= 0 ? open[match]!.id : `call_${m.toolName ?? "tool"}`)
        if (match >= 0) open.splice(match, 1)
        // `name` beside the id is no part of the API's type, but StableToolBench sends it and servers take it
        return m.sendName && m.toolName !== undefined
          ? ({ role: "tool", tool_call_id: id, content: m.content, name: m.toolName } as ChatCompletionMessageParam)
          : { role: "tool", tool_call_id: id, content: m.content }
      }
      default:
        return { role: m.role, content: m.content }
    }
  })
}

/**
 * Thinking switches as OpenAI-compatible servers take them: a level is `reasoning_effort`; on/off is
 * the chat template's `enable_thinking` (vLLM, llama.cpp's server; others ignore unknown fields).
 */
const thinkParams = (think: OpenAISettings["think"]): Record<string, unknown> =>
  think === undefined
    ? {}
    : typeof think === "string"
      ? { reasoning_effort: think }
      : { chat_template_kwargs: { enable_thinking: think } }

/**
 * The name under which the output limit travels: `max_tokens`, which llama.cpp's server, vLLM, Ollama and OpenAI's
 * older models take, or `max_completion_tokens`, which OpenAI's reasoning models require instead (they refuse
 * max_tokens with a 400 that names it; the model then switches, see makeOpenAIModel).
 */
export type LimitField = "max_tokens" | "max_completion_tokens"

/** The chat-completions body for a request; `response_format` and `tools` are never sent together. */
export const toCompletionRequest = (
  settings: OpenAISettings,
  request: GenerateRequest,
  limitField: LimitField = "max_tokens"
): ChatCompletionCreateParamsNonStreaming => {
  const tools = request.tools && request.tools.length > 0 ? request.tools : undefined
  const o = request.options
  return {
    model: settings.model,
    messages: toOpenAIMessages(request.messages),
    stream: false,
    temperature: o?.temperature ?? settings.temperature,
    ...(o?.seed === null ? {} : { seed: o?.seed ?? settings.seed }),
    ...(o?.maxTokens !== undefined ? { [limitField]: o.maxTokens } : {}),
    ...thinkParams(settings.think),
    ...(tools
      ? {
          tools: tools.map((t) => ({
            type: "function" as const,
            function: { name: t.name, description: t.description, parameters: t.parameters }
          }))
        }
      : request.format && request.formatAs !== "none"
        ? {
            response_format:
              request.formatAs === "json_object"
                ? { type: "json_object" as const }
                : {
                    type: "json_schema" as const,
                    json_schema: { name: SCHEMA_NAME, schema: request.format, strict: false }
                  }
          }
        : {})
  }
}

const toToolCalls = (completion: ChatCompletion): ReadonlyArray<ToolCallRequest> | undefined => {
  const calls = completion.choices?.[0]?.message?.tool_calls
  if (!calls || calls.length === 0) return undefined
  return calls.flatMap((c): Array<ToolCallRequest> => {
    if (c.type !== "function") return []
    let args: Record<string, unknown>
    try {
      const parsed: unknown = parseJsonBounded(c.function.arguments || "{}")
      args =
        parsed && typeof parsed === "object" && !Array.isArray(parsed)
          ? (parsed as Record<string, unknown>)
          : { _raw: c.function.arguments }
    } catch (e) {
      if (e instanceof NestingTooDeep)
        return [{ id: c.id, name: c.function.name, arguments: {}, argumentsError: e.message }]
      // Kept as data: the caller's argument validation reflects the problem back to the model.
      args = { _raw: c.function.arguments }
    }
    return [{ id: c.id, name: c.function.name, arguments: args, rawArguments: c.function.arguments }]
  })
}

/** The server's own words from an APIError, without the status prefix the client adds. */
const serverMessage = (e: APIError): string => {
  const body = e.error as { message?: unknown } | undefined
  return typeof body?.message === "string" ? body.message : e.message
}

type OpenAISdk = typeof import("openai")
let sdk: Promise<OpenAISdk> | undefined
/** The `openai` package (some 240 modules) loads with the first OpenAI-compatible call, not with `import "smurfs"`. */
const loadSdk = (): Promise<OpenAISdk> => (sdk ??= import("openai"))

/** A client, the package it came from (its error classes) and the fetch it was given. */
interface BuiltClient {
  readonly client: OpenAI
  readonly sdk: OpenAISdk
  readonly fetch: typeof fetch
}

/** A client, built on first use. */
type LazyClient = () => Promise<BuiltClient>

/** Run one client call with a deadline and map whatever it throws to a tagged error. */
const call = <A>(site: CallSite, lazy: LazyClient, run: (built: BuiltClient, signal: AbortSignal) => Promise<A>) =>
  Effect.suspend(() => {
    let loaded: OpenAISdk | undefined
    return tryPromiseWithin(
      site.timeoutMs,
      async (signal) => {
        const built = await lazy()
        loaded = built.sdk
        return run(built, signal)
      },
      (e, timedOut) => {
        if (loaded !== undefined) {
          if (e instanceof loaded.APIConnectionTimeoutError || (e instanceof loaded.APIUserAbortError && timedOut))
            return fromTransport(site, e, true)
          if (e instanceof loaded.APIError && typeof e.status === "number")
            return fromStatus(site, e.status, serverMessage(e), e.headers)
        }
        return fromTransport(site, e, timedOut)
      }
    )
  })

/**
 * A fetch that failed, as the client's own call reports it: aborted, timed out (by the words of the error,
 * e.g. ETIMEDOUT), or a connection error with the fetch's error as its cause.
 */
const transportError = (sdk: OpenAISdk, e: unknown, signal: AbortSignal): Error => {
  if (signal.aborted) return new sdk.APIUserAbortError()
  const error = e instanceof Error ? e : new Error(String(e))
  const timedOut =
    error.name === "AbortError" || /timed? ?out/i.test(String(error) + ("cause" in error ? String(error.cause) : ""))
  return timedOut
    ? Object.assign(new sdk.APIConnectionTimeoutError(), { cause: error })
    : new sdk.APIConnectionError({ cause: error })
}

/**
 * A reply's body as the client reads one: JSON when the server says it is JSON, else the text; nothing for
 * an empty one. The body is parsed first and the content type read only when that fails, since reading a
 * reply's headers can cost a Headers object per call; a body labelled otherwise that parses is taken as
 * JSON (the client would hand it over as text, which fails as a reply without `choices` all the same
 * unless it is a completion).
 */
const replyBody = async (response: Response): Promise<unknown> => {
  if (response.status === 204) return null
  const text = await response.text()
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch (e) {
    const mediaType = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase()
    if (mediaType?.includes("application/json") || mediaType?.endsWith("+json")) throw e
    return text
  }
}

/**
 * One chat completion through the client's own request building: its URL, its authentication and
 * headers and its encoding of the body (`buildRequest`), sent through the fetch it was given, a failed
 * status turned into its error class (`APIError.generate`, as the client does). Not
 * `chat.completions.create`, which around the same request adds, on every call, a second timer and a
 * composed abort signal (the deadline in `call` bounds the call already), a reply parser racing a third
 * timer, log lines formatted whatever the log level and a JSON replacer run over the whole body: against
 * a fetch that answers at once, about twice this path's CPU per call (155 µs against 80, of which
 * `buildRequest` is 36: the package's floor). Retries are the resilience layer's, as with the client's
 * maxRetries 0; the client's `timeout` still sets the header it sends.
 */
const complete = async (
  { client, sdk, fetch }: BuiltClient,
  body: ChatCompletionCreateParamsNonStreaming,
  signal: AbortSignal,
  timeoutMs: number,
  onResend?: (code: string) => void
): Promise<ChatCompletion | undefined> => {
  const { req, url } = await client.buildRequest({
    method: "post",
    path: "/chat/completions",
    body,
    signal,
    timeout: timeoutMs
  })
  let response: Response
  try {
    response = await fetch(url, { ...req, onResend } as RequestInit)
  } catch (e) {
    throw transportError(sdk, e, signal)
  }
  if (!response.ok) {
    const text = await response.text().catch((e: unknown) => (e instanceof Error ? e.message : String(e)))
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    // a body without an `error` member is the error itself, as the client reads it
    const error =
      json !== null && typeof json === "object" && (json as { error?: unknown }).error == null ? { error: json } : json
    throw sdk.APIError.generate(
      response.status,
      error as object | undefined,
      json ? undefined : text, // as the client: the text, unless the body was JSON (and not a falsy one)
      response.headers
    )
  }
  return (await replyBody(response)) as ChatCompletion | undefined
}

/**
 * Clients by what they are built from (server, key, timeout), shared by every model of those settings: a
 * client is costly to build and holds nothing of a call, and a run builds its model once per task.
 */
const clients = new Map<string, ReturnType<LazyClient>>()

/** A client that never retries on its own (the resilience layer decides), built when first asked for. */
export const makeOpenAIClient = (settings: OpenAISettings): LazyClient => {
  addSecret(settings.apiKey) // whatever variable or flag it came from, a server echoing it is never shown
  const key = JSON.stringify([settings.baseURL, settings.apiKey, settings.timeoutMs])
  return () => {
    let built = clients.get(key)
    if (built === undefined) {
      built = loadSdk().then((sdk) => {
        const fetch = boundedFetch()
        return {
          sdk,
          fetch,
          client: new sdk.default({
            baseURL: settings.baseURL,
            apiKey: settings.apiKey,
            maxRetries: 0,
            timeout: settings.timeoutMs,
            fetch
          })
        }
      })
      clients.set(key, built)
    }
    return built
  }
}

/** What an OpenAI-compatible server says of itself at /v1/models: its models, and which server it is. */
export interface OpenAIServerModels {
  readonly ids: ReadonlyArray<string>
  /**
   * `llama.cpp` (one model, served under any name: it lists the file's path), `llama.cpp router` (several models,
   * each by its name), `vLLM`, or undefined for any other server.
   */
  readonly server?: "llama.cpp" | "llama.cpp router" | "vLLM" | undefined
  /** The server's context window for the model (llama.cpp's slot n_ctx, vLLM's max_model_len), when it says. */
  readonly contextTokens?: number | undefined
}

const positive = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined

/**
 * Which server answers, from its /v1/models entries: llama.cpp's server says `owned_by: "llamacpp"`, with `meta`
 * (n_ctx) when it serves one model and a load `status` per model in its router mode; vLLM says `owned_by: "vllm"`
 * with `max_model_len`.
 */
export const readServerModels = (entries: ReadonlyArray<Record<string, unknown>>): OpenAIServerModels => {
  const ids = entries.map((e) => String(e["id"]))
  const owners = new Set(entries.map((e) => e["owned_by"]))
  if (owners.has("llamacpp")) {
    const router = entries.some((e) => e["status"] !== undefined)
    const meta = entries[0]?.["meta"] as Record<string, unknown> | undefined
    return {
      ids,
      server: router ? "llama.cpp router" : "llama.cpp",
      contextTokens: router || entries.length !== 1 ? undefined : positive(meta?.["n_ctx"])
    }
  }
  if (owners.has("vllm"))
    return {
      ids,
      server: "vLLM",
      contextTokens: entries.length === 0 ? undefined : positive(entries[0]?.["max_model_len"])
    }
  return { ids }
}

/** The server's models and which server it is (GET /v1/models). */
export const openaiServerModels = (settings: OpenAISettings): Effect.Effect<OpenAIServerModels, ProviderError> => {
  const client = makeOpenAIClient(settings)
  const site: CallSite = {
    provider: "openai",
    host: displayHost(settings.baseURL),
    model: settings.model,
    role: "models",
    timeoutMs: settings.timeoutMs,
    secrets: [settings.apiKey]
  }
  return call(site, client, async ({ client }, signal) => {
    const page = await client.models.list({ signal })
    return readServerModels(page.data as unknown as ReadonlyArray<Record<string, unknown>>)
  })
}

/** Model ids the server lists at /v1/models. */
export const listOpenAIModels = (settings: OpenAISettings): Effect.Effect<ReadonlyArray<string>, ProviderError> =>
  Effect.map(openaiServerModels(settings), (models) => models.ids)

/**
 * How each server and model takes the output limit, learnt once per process: max_tokens until the server refuses that
 * name (a run builds its model once per task; each would otherwise be refused once).
 */
const limitFields = new Map<string, LimitField>()

/**
 * Each server's slot affinity, learnt once per process (a run builds its model once per task, and every task must
 * share one assignment of slots): a number of slots as given, or llama.cpp's `total_slots` from its /props (`auto`;
 * none when the server has no /props, as any other server).
 */
const affinities = new Map<string, Promise<SlotAffinity | undefined>>()

/** The server's root (its /v1 URL without /v1), where llama.cpp's server answers /props. */
const serverRoot = (baseURL: string) => baseURL.replace(/\/v1$/, "")

/** llama.cpp's server's parallel slots (`total_slots` of GET /props), or undefined from any other server. */
export const llamaServerSlots = async (settings: OpenAISettings): Promise<number | undefined> => {
  try {
    const reply = await boundedFetch(64 * 1024)(`${serverRoot(settings.baseURL)}/props`, {
      headers: { authorization: `Bearer ${settings.apiKey}` },
      signal: AbortSignal.timeout(Math.min(settings.timeoutMs, 10_000))
    })
    if (!reply.ok) return undefined
    const props = (await reply.json()) as { total_slots?: unknown }
    return typeof props.total_slots === "number" && Number.isInteger(props.total_slots) && props.total_slots > 0
      ? props.total_slots
      : undefined
  } catch {
    return undefined
  }
}

/** The slot affinity of `settings`' server, when asked for and known. */
const affinityOf = (settings: OpenAISettings): Effect.Effect<SlotAffinity | undefined> => {
  const wanted = settings.slotAffinity
  if (wanted === undefined) return Effect.succeed(undefined)
  const key = `${settings.baseURL} ${wanted}`
  let known = affinities.get(key)
  if (known === undefined) {
    known = (wanted === "auto" ? llamaServerSlots(settings) : Promise.resolve(wanted)).then((slots) =>
      slots === undefined ? undefined : makeSlotAffinity(slots)
    )
    affinities.set(key, known)
  }
  const pending = known
  return Effect.promise(() => pending)
}

const NO_SLOT = { fields: {}, release: () => {} }

/**
 * llama.cpp's server's fields that keep a task on its slot: `id_slot` (the task's slot: its model lane's when it holds
 * one, so that each task holding a lane has a slot of its own, else `makeSlotAffinity`'s; none while a request of ours
 * is in flight there: see `acquire`) and `cache_prompt` (reuse what the slot holds); nothing outside a task or without
 * slot affinity. `release` once the request ended.
 */
const slotFields = (
  settings: OpenAISettings
): Effect.Effect<{ readonly fields: Record<string, unknown>; readonly release: () => void }> =>
  settings.slotAffinity === undefined
    ? Effect.succeed(NO_SLOT)
    : Effect.gen(function* () {
        const task = yield* Effect.service(ModelTask)
        if (task === undefined) return NO_SLOT
        const affinity = yield* affinityOf(settings)
        if (affinity === undefined) return NO_SLOT
        const lane = yield* Effect.service(ModelLane)
        const { slot, release } = affinity.acquire(task, lane)
        return { fields: slot === undefined ? { cache_prompt: true } : { id_slot: slot, cache_prompt: true }, release }
      })

/** An OpenAI-compatible model. */
export const makeOpenAIModel = (settings: OpenAISettings): LanguageModelShape => {
  const client = makeOpenAIClient(settings)
  const host = displayHost(settings.baseURL)
  const limitKey = `${settings.baseURL} ${settings.model}`
  // untraced: the caller's LanguageModel.call span is the model call's span; a second one nested in it
  // would cost a stack trace and a span on every call and say nothing more
  const generate = Effect.fnUntraced(function* (request: GenerateRequest) {
    const started = performance.now()
    const timeoutMs = request.options?.timeoutMs ?? settings.timeoutMs
    const site: CallSite = {
      provider: "openai",
      host,
      model: settings.model,
      role: request.role,
      // no contextTokens: the server's window is set where it starts, and an overflow says it (or not)
      timeoutMs,
      secrets: [settings.apiKey]
    }
    // a request sent again on a new connection after a reset is a fault of the server's too: an event of the task
    const resent: Array<string> = []
    const post = (field: LimitField, fields: Record<string, unknown>) =>
      call(site, client, (built, signal) =>
        complete(built, { ...toCompletionRequest(settings, request, field), ...fields }, signal, timeoutMs, (code) =>
          resent.push(code)
        )
      )
    const send = (field: LimitField) =>
      (settings.slotAffinity === undefined
        ? post(field, {})
        : Effect.acquireUseRelease(
            slotFields(settings),
            ({ fields }) => post(field, fields),
            ({ release }) => Effect.sync(release)
          )
      ).pipe(Effect.ensuring(Effect.suspend(() => resendEvents(request.role, resent.splice(0)))))
    const field = limitFields.get(limitKey) ?? "max_tokens"
    const completion = yield* send(field).pipe(
      Effect.catchIf(
        (e) =>
          field === "max_tokens" &&
          request.options?.maxTokens !== undefined &&
          e instanceof ModelServerError &&
          e.status === 400 &&
          /max_completion_tokens/.test(e.detail),
        () => {
          limitFields.set(limitKey, "max_completion_tokens")
          return send("max_completion_tokens")
        }
      )
    )
    if (!completion || !Array.isArray(completion.choices))
      return yield* new ModelServerError({
        host,
        detail: "the reply has no `choices`: is this an OpenAI-compatible /v1 endpoint?"
      })
    const message = completion.choices[0]?.message as
      | { content?: string | null; reasoning_content?: unknown; reasoning?: unknown }
      | undefined
    // vLLM, llama.cpp and DeepSeek name the field reasoning_content; Ollama's /v1 names it reasoning.
    const reply = replyWithThinking(message?.content ?? "", message?.reasoning_content ?? message?.reasoning)
    return {
      ...reply,
      toolCalls: toToolCalls(completion),
      usage: {
        promptTokens: completion.usage?.prompt_tokens ?? 0,
        completionTokens: completion.usage?.completion_tokens ?? 0
      },
      model: completion.model ?? settings.model,
      durationMs: Math.round(performance.now() - started),
      ...(completion.choices[0]?.finish_reason === "length" ? { truncated: true } : {})
    } satisfies GenerateResponse
  })
  return {
    info: {
      spec: `openai:${settings.model}`,
      provider: "openai",
      model: settings.model,
      contextTokens: settings.numCtx,
      supportsTools: settings.supportsTools ?? true
    },
    generate,
    // every call aborts at its deadline and fails with Timeout (see `call`)
    timeoutMs: settings.timeoutMs
  }
}
