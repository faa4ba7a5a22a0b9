// A prompt over the context window, as each server says it (its own figures) and the setting that fixes it there.
//
// The servers' words, from their sources:
// - llama.cpp's server: HTTP 400 `{"error":{"code":400,"type":"exceed_context_size_error","message":"request (3143
//   tokens) exceeds the available context size (2048 tokens), try increasing it","n_prompt_tokens":3143,"n_ctx":2048}}`
//   (older: "input (N tokens) is larger than the max context size (M tokens). skipping"). Its context is set where
//   it starts (`llama-server -c`), and `--parallel N` gives each slot a 1/N share of it.
// - vLLM: HTTP 400 "This model's maximum context length is M tokens. However, your request has N input tokens.
//   Please reduce the length of the input messages." or "'max_tokens' or 'max_completion_tokens' is too large: C.
//   This model's maximum context length is M tokens and your request has N input tokens (C > M - N)." (older: "...
//   However, you requested R tokens (N in the messages, C in the completion). ..."). Its context is `--max-model-len`.
// - Ollama cuts an overlong chat silently unless asked not to (`truncate: false`, since 0.12.5): then HTTP 400 "the
//   input length exceeds the context length"; its llama-server runner says "the prompt is longer than the context
//   length currently available to the model; ...". No figures. Its context is the request's `num_ctx` (--num-ctx),
//   or for its /v1 endpoint the server's OLLAMA_CONTEXT_LENGTH.

/** Which server refused the prompt, read from its words. */
export type OverflowServer = "llama.cpp" | "vLLM" | "Ollama" | "OpenAI-compatible"

/** What a server's refusal says: who said it and its figures, where it gives them. */
export interface ServerOverflow {
  readonly server: OverflowServer
  /** The prompt's tokens as the server counted them. */
  readonly promptTokens?: number | undefined
  /** The server's context window (a llama.cpp slot's n_ctx, vLLM's max_model_len). */
  readonly contextTokens?: number | undefined
  /** The reply's tokens the request asked for, when that is what did not fit (vLLM). */
  readonly completionTokens?: number | undefined
}

const number = (text: string | undefined): number | undefined => {
  const n = text === undefined ? Number.NaN : Number(text)
  return Number.isFinite(n) && n > 0 ? n : undefined
}

const LLAMA_CPP = [
  /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/i,
  /input \((\d+) tokens\) is larger than the max context size \((\d+) tokens\)/i
]
const MAX_CONTEXT = /maximum context length is (\d+) tokens/i
const VLLM_INPUT = /request has (\d+) input tokens/i
const VLLM_COMPLETION = /'max_tokens' or 'max_completion_tokens' is too large: (\d+)/i
/** OpenAI's own wording, which vLLM's older releases copied: it does not tell them apart. */
const REQUESTED = /you requested (\d+) tokens(?: \((\d+) in the messages, (\d+) in the completion\))?/i
const RESULTED = /messages resulted in (\d+) tokens/i
const OLLAMA = /input length exceeds the context length|longer than the context length currently available/i
/** Other wordings of an overflow (OpenAI's code "context_length_exceeded", proxies). */
const ANY_OVERFLOW =
  /context length|context window|maximum context|context size|too many tokens|context_length_exceeded/i

/** The overflow a server's error message reports, or undefined when the message is about something else. */
export const readServerOverflow = (message: string): ServerOverflow | undefined => {
  for (const pattern of LLAMA_CPP) {
    const m = pattern.exec(message)
    if (m) return { server: "llama.cpp", promptTokens: number(m[1]), contextTokens: number(m[2]) }
  }
  const max = MAX_CONTEXT.exec(message)
  if (max) {
    const input = VLLM_INPUT.exec(message)
    const completion = VLLM_COMPLETION.exec(message)
    if (input || completion)
      return {
        server: "vLLM",
        contextTokens: number(max[1]),
        promptTokens: number(input?.[1]),
        ...(completion ? { completionTokens: number(completion[1]) } : {})
      }
    const requested = REQUESTED.exec(message)
    const completionTokens = number(requested?.[3])
    return {
      server: "OpenAI-compatible",
      contextTokens: number(max[1]),
      promptTokens: number(requested?.[2]) ?? number(requested?.[1]) ?? number(RESULTED.exec(message)?.[1]),
      ...(completionTokens === undefined ? {} : { completionTokens })
    }
  }
  if (OLLAMA.test(message)) return { server: "Ollama" }
  if (ANY_OVERFLOW.test(message)) return { server: "OpenAI-compatible" }
  return undefined
}

/** Fewer tools is the fix on every server. */
const FEWER = "or use fewer tools."

/** What fixes an overflow that smurfs' own estimate found, or a server of a provider without its own advice. */
export const GENERIC_CONTEXT_ADVICE = `Raise --num-ctx ${FEWER}`

/**
 * What fixes an overflow an OpenAI-compatible server refused: the server's own context setting (smurfs cannot set it
 * through /v1), and --num-ctx set to the server's window so that smurfs fits its prompts to it.
 */
export const openaiServerContextAdvice = (server: OverflowServer | undefined, contextTokens: number | undefined) => {
  const match =
    contextTokens === undefined
      ? ""
      : ` or set --num-ctx ${contextTokens} so that smurfs fits its prompts to the server's window,`
  switch (server) {
    case "llama.cpp":
      return `Start llama-server with a larger context (-c/--ctx-size; with --parallel N each slot gets 1/N of it),${match} ${FEWER}`
    case "vLLM":
      return `Start vLLM with a larger --max-model-len (up to the model's own limit),${match} ${FEWER}`
    case "Ollama":
      return `Ollama's /v1 endpoint takes no num_ctx: start Ollama with a larger OLLAMA_CONTEXT_LENGTH (or set num_ctx in the model's Modelfile), or use the ollama: provider, which sends --num-ctx with every request; ${FEWER}`
    default:
      return `Raise the server's context where it starts (llama-server -c, vLLM --max-model-len, Ollama OLLAMA_CONTEXT_LENGTH) and --num-ctx to match,${match} ${FEWER}`
  }
}
