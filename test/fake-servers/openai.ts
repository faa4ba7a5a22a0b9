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
  const models = options.models ?? ["qwen2.5:7b"]
  let chatCount = 0

  const chat = async (ctx: RouteContext) => {
    const body = ctx.request.body
    const index = chatCount++
    ctx.countInFlight()
    if (!body || typeof body !== "object")
      return ctx.sendJson(400, errorBody("invalid request body", "invalid_request_error"))
    if (!models.includes(body.model))
      return ctx.sendJson(
        404,
        errorBody(`model "${body.model}" not found, try pulling it first`, "api_error", "model_not_found")
      )
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
    const content = step.content ?? ""
    const promptText = (body.messages ?? []).map((m: { content?: string }) => m.content ?? "").join("\n")
    const promptTokens = step.promptTokens ?? estimateTokens(promptText)
    const completionTokens = step.completionTokens ?? estimateTokens(content)
    ctx.sendJson(200, {
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
          finish_reason: step.toolCalls ? "tool_calls" : "stop"
        }
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens
      }
    })
  }

  const server = await startServer(async (ctx) => {
    const { request, sendJson } = ctx
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`)
      return sendJson(401, errorBody("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"))
    const route = `${request.method} ${request.path}`
    if (route === "GET /v1/models")
      return sendJson(200, {
        object: "list",
        data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "library" }))
      })
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
