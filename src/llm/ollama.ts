// The Ollama provider: the official `ollama` client, JSON Schema `format`, native tools, constant num_ctx.

import * as Effect from "effect/Effect"
import type { ChatRequest, ChatResponse, Ollama, Message as OllamaMessage, Tool as OllamaTool } from "ollama"
import { boundedFetch } from "./bounded-fetch.ts"
import { ModelServerError } from "./errors.ts"
import type {
  GenerateRequest,
  GenerateResponse,
  LanguageModelShape,
  Message,
  ToolCallRequest
} from "./language-model.ts"
import { NestingTooDeep, parseJsonBounded, tooDeepMessage, valueNestsDeeper } from "./nesting.ts"
import { type CallSite, displayHost, fromStatus, fromTransport, tryPromiseWithin } from "./provider-errors.ts"
import { resendEvents } from "./resend-events.ts"
import { replyWithThinking } from "./thinking.ts"

/** Everything the provider needs, defaults already applied (see `ModelOptions` in spec.ts for their meaning). */
export interface OllamaSettings {
  readonly model: string
  /** Where Ollama listens, as OLLAMA_HOST takes it ("127.0.0.1:11434", "http://host:port"). */
  readonly host: string
  readonly numCtx: number
  readonly keepAlive: string | number
  readonly timeoutMs: number
  readonly seed: number
  readonly temperature: number
  /** Whether the model takes native tools; when undefined the provider asks /api/show. */
  readonly supportsTools?: boolean | undefined
  /** Thinking on, off or a level (see `ModelOptions.think`); undefined leaves the server's default. */
  readonly think?: boolean | "low" | "medium" | "high" | undefined
}

const DEFAULT_PORT = "11434"

/** OLLAMA_HOST as Ollama reads it: a bare host gets http:// and port 11434; ":port" means localhost. */
export const normalizeOllamaHost = (raw: string | undefined): string => {
  // a run builds its model once per task, and twice reads the same address: parsed once
  let known = normalizedHosts.get(raw ?? "")
  if (known === undefined) {
    known = normalizeHost(raw)
    if (normalizedHosts.size >= 64) normalizedHosts.clear()
    normalizedHosts.set(raw ?? "", known)
  }
  return known
}
const normalizedHosts = new Map<string, string>()

const normalizeHost = (raw: string | undefined): string => {
  let host = (raw ?? "").trim()
  if (host === "") return `http://127.0.0.1:${DEFAULT_PORT}`
  let explicit = host.includes("://")
  if (host.startsWith(":")) {
    host = `http://127.0.0.1${host}`
    explicit = true
  }
  if (!explicit) host = `http://${host}`
  try {
    const url = new URL(host)
    if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1"
    if (!url.port) url.port = explicit ? (url.protocol === "https:" ? "443" : "80") : DEFAULT_PORT
    return url.toString().replace(/\/$/, "")
  } catch {
    return host
  }
}

/** Prefix that marks a guardrail's correction when it has to travel as a user message. */
export const REFLECTION_PREFIX = "[guardrail reflection]"

/** Our messages in Ollama's roles: reflections become user turns, tool results carry the tool's name. */
export const toOllamaMessages = (messages: ReadonlyArray<Message>): OllamaMessage[] =>
  messages.map((m): OllamaMessage => {
    switch (m.role) {
      case "reflection":
        return { role: "user", content: `${REFLECTION_PREFIX} ${m.content}` }
      case "tool":
        return { role: "tool", content: m.content, ...(m.toolName ? { tool_name: m.toolName } : {}) }
      case "assistant":
        return {
          role: "assistant",
          content: m.content,
          ...(m.toolCalls && m.toolCalls.length > 0
            ? { tool_calls: m.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })) }
            : {})
        }
      default:
        return { role: m.role, content: m.content }
    }
  })

/**
 * The /api/chat body for a request. `format` and `tools` are never sent together: Ollama ignores tools then.
 * `truncate: false`: a prompt over num_ctx is refused (HTTP 400, since Ollama 0.12.5) rather than cut silently from
 * its start (the task's first messages), which would leave the model answering another question.
 */
export const toChatRequest = (
  settings: OllamaSettings,
  request: GenerateRequest
): ChatRequest & { stream: false; truncate: false } => {
  const tools = request.tools && request.tools.length > 0 ? request.tools : undefined
  const o = request.options
  return {
    model: settings.model,
    messages: toOllamaMessages(request.messages),
    stream: false,
    truncate: false,
    keep_alive: settings.keepAlive,
    ...(settings.think !== undefined ? { think: settings.think } : {}),
    options: {
      num_ctx: settings.numCtx,
      temperature: o?.temperature ?? settings.temperature,
      ...(o?.seed === null ? {} : { seed: o?.seed ?? settings.seed }),
      ...(o?.maxTokens !== undefined ? { num_predict: o.maxTokens } : {})
    },
    ...(tools
      ? {
          tools: tools.map(
            (t): OllamaTool => ({
              type: "function",
              function: {
                name: t.name,
                description: t.description,
                parameters: t.parameters as OllamaTool["function"]["parameters"]
              }
            })
          )
        }
      : request.format && request.formatAs !== "none"
        ? { format: request.formatAs === "json_object" ? "json" : request.format }
        : {})
  }
}

const toToolCalls = (response: ChatResponse): ReadonlyArray<ToolCallRequest> | undefined => {
  const calls = response.message?.tool_calls
  if (!calls || calls.length === 0) return undefined
  return calls.map((c) => {
    const raw: unknown = c.function.arguments
    const id = (c as { id?: unknown }).id
    const base = { ...(typeof id === "string" ? { id } : {}), name: c.function.name }
    let args: Record<string, unknown> = {}
    if (typeof raw === "string") {
      try {
        args = parseJsonBounded(raw) as Record<string, unknown>
      } catch (e) {
        if (e instanceof NestingTooDeep) return { ...base, arguments: {}, argumentsError: e.message }
        args = { _raw: raw }
      }
    } else if (raw && typeof raw === "object") {
      // the client parsed the reply already: a value too deep to walk is dropped here, before anything walks it
      if (valueNestsDeeper(raw)) return { ...base, arguments: {}, argumentsError: tooDeepMessage() }
      args = raw as Record<string, unknown>
    }
    return { ...base, arguments: args }
  })
}

/** The status and message of the client's ResponseError (not exported by the package). */
const responseError = (e: unknown): { status: number; message: string } | undefined => {
  if (
    e instanceof Error &&
    e.name === "ResponseError" &&
    typeof (e as { status_code?: unknown }).status_code === "number"
  )
    return {
      status: (e as unknown as { status_code: number }).status_code,
      message: (e as { error?: string }).error ?? e.message
    }
  return undefined
}

/**
 * An error page that is not JSON (a proxy's 502, say) as the JSON error Ollama would send: the
 * client logs to the console when it meets a non-JSON error body.
 */
const asJsonError = async (response: Response): Promise<Response> => {
  if (response.ok || response.headers.get("content-type")?.includes("application/json")) return response
  const text = (await response.text().catch(() => "")).trim().slice(0, 500)
  const headers = new Headers(response.headers)
  headers.set("content-type", "application/json")
  headers.delete("content-length")
  headers.delete("content-encoding")
  return new Response(JSON.stringify({ error: text || `HTTP ${response.status} ${response.statusText}`.trim() }), {
    status: response.status,
    statusText: response.statusText,
    headers
  })
}

let sdk: Promise<typeof import("ollama")> | undefined
/** The `ollama` package (its fetch polyfill wakes Node's own fetch) loads with the first call, not with `import "smurfs"`. */
export const loadOllamaSdk = () => (sdk ??= import("ollama"))

/** The client of a host, built on first use and shared by every call to that host (its fetch is set per call). */
const clients = new Map<string, Promise<Ollama>>()
/** The clients built already, to be had without waiting for a promise on every call. */
const builtClients = new Map<string, Ollama>()
const clientOf = (host: string): Promise<Ollama> => {
  let client = clients.get(host)
  if (client === undefined) {
    client = loadOllamaSdk().then(({ Ollama }) => {
      const built = new Ollama({ host })
      builtClients.set(host, built)
      return built
    })
    clients.set(host, client)
  }
  return client
}

/**
 * One call through the host's client, with a fetch of this call's own that carries our abort signal
 * (the client passes none for non-streaming calls) and keeps the last response, for its Retry-After
 * header. The client reads `this.fetch` on each request: a view of the shared client with its own
 * `fetch` makes the call without building (and parsing the host of) a client per call.
 */
const call = <A>(host: string, site: CallSite, run: (client: Ollama) => Promise<A>) =>
  Effect.suspend(() => {
    let last: Response | undefined
    // a request sent again on a new connection after a reset is a fault of the server's too: an event of the task
    const resent: Array<string> = []
    return tryPromiseWithin(
      site.timeoutMs,
      async (signal) => {
        const fetch: typeof globalThis.fetch = async (input, init) => {
          const response = await fetchModel(input, {
            ...init,
            signal,
            onResend: (code: string) => void resent.push(code)
          } as RequestInit)
          last = response
          return response.ok ? response : asJsonError(response)
        }
        const client = builtClients.get(host) ?? (await clientOf(host))
        return run(Object.create(client, { fetch: { value: fetch } }) as Ollama)
      },
      (e, timedOut) => {
        const http = responseError(e)
        return http ? fromStatus(site, http.status, http.message, last?.headers) : fromTransport(site, e, timedOut)
      }
    ).pipe(Effect.ensuring(Effect.suspend(() => resendEvents(site.role, resent.splice(0)))))
  })

/** The bounded fetch every model call goes through (one, so that its keep-alive connections are shared). */
const fetchModel = boundedFetch()

/** Admin calls answer at once even when the model is busy; a short deadline keeps checks quick. */
const ADMIN_TIMEOUT_MS = 5000

/** A short call to Ollama's own API (/api/show, /api/tags, /api/version) with a few seconds' deadline. */
const adminCall = <A>(settings: OllamaSettings, role: string, run: (client: Ollama) => Promise<A>) => {
  const host = normalizeOllamaHost(settings.host)
  const site: CallSite = {
    provider: "ollama",
    host: displayHost(host),
    model: settings.model,
    role,
    timeoutMs: Math.min(settings.timeoutMs, ADMIN_TIMEOUT_MS)
  }
  return call(host, site, run)
}

/** The server's version (GET /api/version): the cheapest proof that Ollama is up. */
export const ollamaVersion = (settings: OllamaSettings) =>
  Effect.map(
    adminCall(settings, "version", (c) => c.version()),
    (v) => v.version
  )

/** Names of the models the server has (GET /api/tags). */
export const ollamaModels = (settings: OllamaSettings) =>
  Effect.map(
    adminCall(settings, "tags", (c) => c.list()),
    (l) => l.models.map((m) => m.name)
  )

/** The model's capabilities (POST /api/show); fails with ModelNotFound when the server lacks it. */
export const ollamaCapabilities = (settings: OllamaSettings) =>
  Effect.map(
    adminCall(settings, "show", (c) => c.show({ model: settings.model })),
    (show) => (Array.isArray(show.capabilities) ? show.capabilities : [])
  )

/** Whether the model declares the "tools" capability; undefined when the server cannot tell. */
export const probeToolSupport = (settings: OllamaSettings): Effect.Effect<boolean | undefined> =>
  ollamaCapabilities(settings).pipe(
    Effect.map((capabilities) => (capabilities.length > 0 ? capabilities.includes("tools") : undefined)),
    Effect.orElseSucceed(() => undefined)
  )

/** An Ollama-backed model. `supportsTools` comes from the settings (or true until known). */
export const makeOllamaModel = (settings: OllamaSettings): LanguageModelShape => {
  const host = normalizeOllamaHost(settings.host)
  const shown = displayHost(host)
  // untraced: the caller's LanguageModel.call span is the model call's span; a second one nested in it
  // would cost a stack trace and a span on every call and say nothing more
  const generate = Effect.fnUntraced(function* (request: GenerateRequest) {
    const started = performance.now()
    const site: CallSite = {
      provider: "ollama",
      host: shown,
      model: settings.model,
      role: request.role,
      contextTokens: settings.numCtx,
      timeoutMs: request.options?.timeoutMs ?? settings.timeoutMs
    }
    const response = yield* call(host, site, (client) => client.chat(toChatRequest(settings, request)))
    if (!response || typeof response.message !== "object" || response.message === null)
      return yield* new ModelServerError({
        host: shown,
        detail: "the reply has no `message`: is Ollama listening at this address?"
      })
    const reply = replyWithThinking(
      response.message.content ?? "",
      (response.message as { thinking?: unknown }).thinking
    )
    return {
      ...reply,
      toolCalls: toToolCalls(response),
      usage: { promptTokens: response.prompt_eval_count ?? 0, completionTokens: response.eval_count ?? 0 },
      model: response.model ?? settings.model,
      durationMs: Math.round(performance.now() - started),
      ...(response.done_reason === "length" ? { truncated: true } : {})
    } satisfies GenerateResponse
  })
  return {
    info: {
      spec: `ollama:${settings.model}`,
      provider: "ollama",
      model: settings.model,
      contextTokens: settings.numCtx,
      supportsTools: settings.supportsTools ?? true
    },
    generate,
    // every call aborts at its deadline and fails with Timeout (see `call`)
    timeoutMs: settings.timeoutMs
  }
}

/** An Ollama model whose `supportsTools` is read from /api/show once, when the model is built. */
export const ollamaModel = (settings: OllamaSettings): Effect.Effect<LanguageModelShape> =>
  settings.supportsTools !== undefined
    ? Effect.succeed(makeOllamaModel(settings))
    : Effect.map(probeToolSupport(settings), (supportsTools) => makeOllamaModel({ ...settings, supportsTools }))
