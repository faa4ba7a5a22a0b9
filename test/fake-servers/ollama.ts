// A fake Ollama server on loopback speaking the real HTTP API (/api/chat, /api/embed, /api/show, /api/tags, /api/pull,
// /api/version) for tests.
import {
  applyTransportFault,
  defaultReply,
  estimateTokens,
  type FakeServer,
  fakeEmbedding,
  isFault,
  normalizeStep,
  type RouteContext,
  rambleText,
  type Step,
  startServer,
  stepFrom
} from "./core.ts"

export type { Fault, RecordedRequest, Reply, Step } from "./core.ts"

export interface FakeModel {
  readonly name: string
  /** As /api/show reports them, e.g. ["completion", "tools"]. */
  readonly capabilities?: ReadonlyArray<string>
}

export interface FakeOllamaOptions {
  /** Models the server has; a chat or show for any other model answers 404 as Ollama does. Default: qwen2.5:7b with tools. */
  readonly models?: ReadonlyArray<FakeModel>
  /**
   * What /api/chat answers: a script of steps consumed in order (the last repeats), or a function of
   * the request body and the call's index. Default: a sample of the requested `format`, a call of
   * the first tool, or "ok".
   */
  readonly chat?: ReadonlyArray<Step> | ((body: any, index: number) => Step | Promise<Step>)
  /** Server version reported by /api/version. */
  readonly version?: string
  /**
   * The model's largest context (default none): a prompt (4 characters a token) over the request's `num_ctx` (or
   * this, when smaller) is cut silently from its start as Ollama does by default, or refused with its HTTP 400 "the
   * input length exceeds the context length" when the request says `truncate: false` (Ollama 0.12.5 and later).
   */
  readonly contextTokens?: number
}

export interface FakeOllama extends FakeServer {
  /** Bodies of the /api/chat requests, in order. */
  readonly chatRequests: () => any[]
}

export const DEFAULT_FAKE_MODELS: ReadonlyArray<FakeModel> = [
  { name: "qwen2.5:7b", capabilities: ["completion", "tools"] }
]

/** Ollama's name matching: "llama3" means "llama3:latest". */
const sameModel = (a: string, b: string) =>
  (a.includes(":") ? a : `${a}:latest`) === (b.includes(":") ? b : `${b}:latest`)

/** Start a fake Ollama. Pass a chat script/handler directly, or options. */
export const startFakeOllama = async (
  optionsOrChat: FakeOllamaOptions | FakeOllamaOptions["chat"] = {}
): Promise<FakeOllama> => {
  const options: FakeOllamaOptions =
    Array.isArray(optionsOrChat) || typeof optionsOrChat === "function"
      ? { chat: optionsOrChat }
      : (optionsOrChat as FakeOllamaOptions)
  const models = options.models ?? DEFAULT_FAKE_MODELS
  const find = (name: unknown) => models.find((m) => typeof name === "string" && sameModel(m.name, name))
  let chatCount = 0

  const chat = async (ctx: RouteContext) => {
    const body = ctx.request.body
    const index = chatCount++
    ctx.countInFlight()
    if (!body || typeof body !== "object") return ctx.sendJson(400, { error: "invalid request body" })
    if (!find(body.model)) return ctx.sendJson(404, { error: `model "${body.model}" not found, try pulling it first` })
    const step = normalizeStep(
      options.chat ? await stepFrom(options.chat, body, index) : defaultReply(body.format, body.tools)
    )
    if (step.delayMs && !(await ctx.wait(step.delayMs))) return
    if (isFault(step)) {
      if (step.fault === "status")
        return ctx.sendStatusFault(step, { error: step.message ?? `fake fault ${step.status}` })
      applyTransportFault(
        ctx,
        step,
        JSON.stringify({ model: body.model, message: { role: "assistant", content: "x".repeat(200) } })
      )
      return
    }
    const promptText = (body.messages ?? []).map((m: { content?: string }) => m.content ?? "").join("\n")
    const window = Math.min(body.options?.num_ctx ?? 2048, options.contextTokens ?? Number.POSITIVE_INFINITY)
    const longer = options.contextTokens !== undefined && estimateTokens(promptText) > window
    if (longer && body.truncate === false)
      return ctx.sendJson(400, { error: "the input length exceeds the context length" })
    const limit: number | undefined = body.options?.num_predict
    if (step.ramble && (limit === undefined || limit < 0)) return // still generating: the client gives up first
    const cut = step.ramble === true
    const content = cut ? rambleText(step.content ?? "", limit!) : (step.content ?? "")
    ctx.sendJson(200, {
      model: body.model,
      created_at: new Date(0).toISOString(),
      message: {
        role: "assistant",
        content,
        ...(step.thinking ? { thinking: step.thinking } : {}),
        ...(step.toolCalls
          ? { tool_calls: step.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })) }
          : {})
      },
      done: true,
      done_reason: cut ? "length" : "stop",
      total_duration: 1_000_000,
      load_duration: 0,
      // a prompt cut to fit was evaluated as the window's worth of tokens
      prompt_eval_count: step.promptTokens ?? (longer ? window : estimateTokens(promptText)),
      prompt_eval_duration: 1,
      eval_count: step.completionTokens ?? estimateTokens(content),
      eval_duration: 1
    })
  }

  const server = await startServer(async (ctx) => {
    const { request, sendJson } = ctx
    const route = `${request.method} ${request.path}`
    if (route === "GET /api/version") return sendJson(200, { version: options.version ?? "0.9.0" })
    if (route === "GET /api/tags")
      return sendJson(200, {
        models: models.map((m) => ({
          name: m.name,
          model: m.name,
          modified_at: "2026-01-01T00:00:00Z",
          size: 1,
          digest: "sha256:0",
          details: { family: "fake" }
        }))
      })
    if (route === "POST /api/show") {
      const model = find(request.body?.model ?? request.body?.name)
      if (!model) return sendJson(404, { error: `model '${request.body?.model}' not found` })
      return sendJson(200, {
        modelfile: "",
        parameters: "",
        template: "",
        details: { family: "fake" },
        model_info: {},
        capabilities: model.capabilities ?? ["completion"]
      })
    }
    if (route === "POST /api/chat") return chat(ctx)
    // a model the server has pulls at once; any other is unknown to the registry, as Ollama answers it
    if (route === "POST /api/pull")
      return find(request.body?.model ?? request.body?.name)
        ? sendJson(200, { status: "success" })
        : sendJson(500, { error: "pull model manifest: file does not exist" })
    if (route === "POST /api/embed") {
      const body = request.body
      if (!find(body?.model)) return sendJson(404, { error: `model "${body?.model}" not found, try pulling it first` })
      const input: Array<string> = Array.isArray(body.input) ? body.input : [String(body.input ?? "")]
      return sendJson(200, {
        model: body.model,
        embeddings: input.map((t) => fakeEmbedding(t)),
        total_duration: 1,
        load_duration: 0,
        prompt_eval_count: input.length
      })
    }
    if (request.method === "GET" && request.path === "/") return sendJson(200, "Ollama is running")
    return sendJson(404, { error: "404 page not found" })
  })

  return { ...server, chatRequests: () => server.requests.filter((r) => r.path === "/api/chat").map((r) => r.body) }
}
