// A fake OpenAI-compatible server on loopback (/v1/chat/completions, /v1/embeddings, /v1/models) for tests.
import {
  applyTransportFault,
  defaultReply,
  estimateTokens,
  type FakeServer,
  fakeEmbedding,
  isFault,
  normalizeStep,
  RawJson,
  type RouteContext,
  rambleText,
  type Step,
  startServer,
  stepFrom
} from "./core.ts"

export type { Fault, RecordedRequest, Reply, Step } from "./core.ts"

export interface FakeOpenAIOptions {
  /** Model ids the server serves; a completion for any other model answers 404. Default: ["qwen2.5:7b"]. */
  readonly models?: ReadonlyArray<string>
  /**
   * What /v1/chat/completions answers: a script of steps consumed in order (the last repeats), or a
   * function of the request body and the call's index. Default: a sample of
   * `response_format.json_schema.schema`, a call of the first tool, or "ok".
   */
  readonly chat?: ReadonlyArray<Step> | ((body: any, index: number) => Step | Promise<Step>)
  /** When set, requests must carry `Authorization: Bearer <apiKey>`; others get 401. */
  readonly apiKey?: string
  /**
   * Which server to imitate, as its source answers (tools/server of llama.cpp, vllm/entrypoints/openai of vLLM):
   * - `llama.cpp`: one model, served under any name; /v1/models lists the file's path (`models[0]`) with
   *   `owned_by: "llamacpp"` and `meta.n_ctx`; every reply carries `Server: llama.cpp`; an overflow is HTTP 400
   *   `exceed_context_size_error` with `n_prompt_tokens` and `n_ctx`.
   * - `vllm`: /v1/models with `owned_by: "vllm"` and `max_model_len`; an unknown model is 404 "The model `x` does not
   *   exist."; an overflow is vLLM's 400 BadRequestError ("... your request has N input tokens ...", or "'max_tokens'
   *   or 'max_completion_tokens' is too large ..." when the prompt fits but not with the reply).
   * Default: a generic server (an overflow in OpenAI's own words, code context_length_exceeded).
   */
  readonly imitate?: "llama.cpp" | "vllm"
  /** The server's context window (default 4096 when imitating, else none): a longer prompt (4 characters a token) is refused. */
  readonly contextTokens?: number
  /** Imitating llama.cpp: the parallel slots its /props says (`total_slots`, default 1). */
  readonly slots?: number
}

export interface FakeOpenAI extends FakeServer {
  /** Base URL including /v1, as OPENAI_BASE_URL expects it. */
  readonly baseURL: string
  /** Bodies of the chat completion requests, in order. */
  readonly chatRequests: () => any[]
}

const errorBody = (message: string, type: string, code: string | null = null) => ({
  error: { message, type, param: null, code }
})

/** Start a fake OpenAI-compatible server. Pass a chat script/handler directly, or options. */
export const startFakeOpenAI = async (
  optionsOrChat: FakeOpenAIOptions | FakeOpenAIOptions["chat"] = {}
): Promise<FakeOpenAI> => {
  const options: FakeOpenAIOptions =
    Array.isArray(optionsOrChat) || typeof optionsOrChat === "function"
      ? { chat: optionsOrChat }
      : (optionsOrChat as FakeOpenAIOptions)
  const models = options.models ?? (options.imitate === "llama.cpp" ? ["/models/tiny.gguf"] : ["qwen2.5:7b"])
  const contextTokens = options.contextTokens ?? (options.imitate === undefined ? undefined : 4096)
  /** Headers of every reply (llama.cpp's server names itself). */
  const own: Record<string, string> = options.imitate === "llama.cpp" ? { server: "llama.cpp" } : {}
  let chatCount = 0

  /** The server's refusal of a prompt of `prompt` tokens asking for up to `reply` tokens, or undefined when it fits. */
  const overflow = (prompt: number, reply: number | undefined): { status: number; body: unknown } | undefined => {
    if (contextTokens === undefined) return undefined
    switch (options.imitate) {
      case "llama.cpp":
        return prompt < contextTokens
          ? undefined
          : {
              status: 400,
              body: {
                error: {
                  code: 400,
                  message: `request (${prompt} tokens) exceeds the available context size (${contextTokens} tokens), try increasing it`,
                  type: "exceed_context_size_error",
                  n_prompt_tokens: prompt,
                  n_ctx: contextTokens
                }
              }
            }
      case "vllm": {
        const message =
          prompt >= contextTokens
            ? `This model's maximum context length is ${contextTokens} tokens. However, your request has ${prompt} input tokens. Please reduce the length of the input messages.`
            : reply !== undefined && prompt + reply > contextTokens
              ? `'max_tokens' or 'max_completion_tokens' is too large: ${reply}. This model's maximum context length is ${contextTokens} tokens and your request has ${prompt} input tokens (${reply} > ${contextTokens} - ${prompt}).`
              : undefined
        return message === undefined
          ? undefined
          : { status: 400, body: { error: { message, type: "BadRequestError", param: null, code: 400 } } }
      }
      default:
        return prompt <= contextTokens
          ? undefined
          : {
              status: 400,
              body: errorBody(
                `This model's maximum context length is ${contextTokens} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`,
                "invalid_request_error",
                "context_length_exceeded"
              )
            }
    }
  }

  const chat = async (ctx: RouteContext) => {
    const body = ctx.request.body
    const index = chatCount++
    ctx.countInFlight()
    if (!body || typeof body !== "object")
      return ctx.sendJson(400, errorBody("invalid request body", "invalid_request_error"))
    // llama.cpp's server answers any name with its one model
    if (options.imitate !== "llama.cpp" && !models.includes(body.model))
      return ctx.sendJson(
        404,
        options.imitate === "vllm"
          ? {
              error: {
                message: `The model \`${body.model}\` does not exist.`,
                type: "NotFoundError",
                param: null,
                code: 404
              }
            }
          : errorBody(`model "${body.model}" not found, try pulling it first`, "api_error", "model_not_found")
      )
    const promptText = (body.messages ?? []).map((m: { content?: string }) => m.content ?? "").join("\n")
    const limit: number | undefined = body.max_completion_tokens ?? body.max_tokens
    const refused = overflow(estimateTokens(promptText), limit)
    if (refused) return ctx.sendJson(refused.status, refused.body, own)
    const schema =
      body.response_format?.type === "json_schema"
        ? body.response_format.json_schema?.schema
        : body.response_format?.type === "json_object"
          ? "json"
          : undefined
    const step = normalizeStep(
      options.chat ? await stepFrom(options.chat, body, index) : defaultReply(schema, body.tools)
    )
    if (step.delayMs && !(await ctx.wait(step.delayMs))) return
    if (isFault(step)) {
      if (step.fault === "status") {
        const type =
          step.status === 429 ? "rate_limit_error" : step.status >= 500 ? "server_error" : "invalid_request_error"
        return ctx.sendStatusFault(step, errorBody(step.message ?? `fake fault ${step.status}`, type))
      }
      applyTransportFault(
        ctx,
        step,
        JSON.stringify({
          id: "chatcmpl-cut",
          object: "chat.completion",
          choices: [{ message: { content: "x".repeat(200) } }]
        })
      )
      return
    }
    if (step.ramble && limit === undefined) return // still generating: the client gives up first
    const cut = step.ramble === true
    const content = cut ? rambleText(step.content ?? "", limit!) : (step.content ?? "")
    const promptTokens = step.promptTokens ?? estimateTokens(promptText)
    const completionTokens = step.completionTokens ?? estimateTokens(content)
    ctx.sendJson(
      200,
      {
        id: `chatcmpl-${index}`,
        object: "chat.completion",
        created: 0,
        model: body.model,
        system_fingerprint: "fp_fake",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content,
              ...(step.thinking ? { reasoning_content: step.thinking } : {}),
              ...(step.toolCalls
                ? {
                    tool_calls: step.toolCalls.map((c, i) => ({
                      id: `call_${index}_${i}`,
                      type: "function",
                      function: {
                        name: c.name,
                        arguments: c.arguments instanceof RawJson ? c.arguments.text : JSON.stringify(c.arguments)
                      }
                    }))
                  }
                : {})
            },
            finish_reason: cut ? "length" : step.toolCalls ? "tool_calls" : "stop"
          }
        ],
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens
        }
      },
      own
    )
  }

  /** /v1/models as the imitated server writes it. */
  const modelList = () => {
    switch (options.imitate) {
      case "llama.cpp":
        return {
          models: models.map((name) => ({ name, model: name, type: "model", capabilities: ["completion"] })),
          object: "list",
          data: models.map((id) => ({
            id,
            aliases: [],
            tags: [],
            object: "model",
            created: 0,
            owned_by: "llamacpp",
            meta: { vocab_type: 1, n_vocab: 384, n_ctx: contextTokens, n_ctx_train: 2048, n_params: 1, size: 1 }
          }))
        }
      case "vllm":
        return {
          object: "list",
          data: models.map((id) => ({
            id,
            object: "model",
            created: 0,
            owned_by: "vllm",
            root: id,
            parent: null,
            max_model_len: contextTokens,
            permission: []
          }))
        }
      default:
        return { object: "list", data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "library" })) }
    }
  }

  const server = await startServer(async (ctx) => {
    const { request, sendJson } = ctx
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`)
      return sendJson(401, errorBody("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"))
    const route = `${request.method} ${request.path}`
    if (route === "GET /v1/models") return sendJson(200, modelList(), own)
    if (route === "GET /props" && options.imitate === "llama.cpp")
      return sendJson(
        200,
        {
          default_generation_settings: { n_ctx: contextTokens },
          total_slots: options.slots ?? 1,
          model_path: models[0]
        },
        own
      )
    if (route === "POST /v1/chat/completions") return chat(ctx)
    if (route === "POST /v1/embeddings") {
      const body = request.body
      if (!models.includes(body?.model))
        return sendJson(
          404,
          errorBody(`The model \`${body?.model}\` does not exist`, "invalid_request_error", "model_not_found")
        )
      const input: Array<string> = Array.isArray(body.input) ? body.input : [String(body.input ?? "")]
      const vectors = input.map((t) => fakeEmbedding(t))
      // the official client asks for base64 unless told otherwise, as the real API allows
      const encode = (v: Array<number>) =>
        body.encoding_format === "base64" ? Buffer.from(Float32Array.from(v).buffer).toString("base64") : v
      return sendJson(200, {
        object: "list",
        model: body.model,
        data: vectors.map((v, index) => ({ object: "embedding", index, embedding: encode(v) })),
        usage: { prompt_tokens: input.length, total_tokens: input.length }
      })
    }
    return sendJson(404, errorBody(`unknown route ${route}`, "invalid_request_error"))
  })

  return {
    ...server,
    baseURL: `${server.url}/v1`,
    chatRequests: () => server.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => r.body)
  }
}
