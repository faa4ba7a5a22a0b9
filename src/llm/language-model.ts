// The LanguageModel service: one operation, generate a reply for a request; providers are Layers.
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { ProviderError } from "./errors.ts"

/**
 * Who speaks in a message. `reflection` is a guardrail's correction of the model's previous reply;
 * it has its own role so that the model (and traces) can tell it from the user. Providers render it
 * in the nearest role the server accepts.
 */
export type MessageRole = "system" | "user" | "assistant" | "tool" | "reflection"

export interface ToolCallRequest {
  readonly id?: string | undefined
  readonly name: string
  readonly arguments: Record<string, unknown>
  /**
   * The arguments as the model wrote them, when the server passes them as text (OpenAI-compatible servers; Ollama
   * decodes them): read as StableToolBench reads them, and sent back so in the conversation when set on a message.
   */
  readonly rawArguments?: string | undefined
  /** Why the arguments the model sent could not be used (nested too deep); `arguments` is then empty and the call fails. */
  readonly argumentsError?: string | undefined
}

export interface Message {
  readonly role: MessageRole
  readonly content: string
  /** Native tool calls made by the assistant in this message. */
  readonly toolCalls?: ReadonlyArray<ToolCallRequest> | undefined
  /** For `tool` messages: the call this message answers, and the tool's name. */
  readonly toolCallId?: string | undefined
  readonly toolName?: string | undefined
  /** For `tool` messages on an OpenAI-compatible server: send `name` (the function's) too, as StableToolBench does. */
  readonly sendName?: boolean | undefined
  /**
   * The named values a template rendered this message from (lists as arrays), for readers that are
   * not a model: the simulated model reads these, never the rendered prose. Never sent to a server
   * and no part of a cache key.
   */
  readonly values?: Readonly<Record<string, unknown>> | undefined
}

/** A function the model may call natively (OpenAI / Ollama `tools`). */
export interface ToolSpec {
  readonly name: string
  readonly description: string
  /** JSON Schema of the arguments object. */
  readonly parameters: Record<string, unknown>
}

export interface GenerateOptions {
  /** Sampling temperature; 0 by default so that runs are repeatable. */
  readonly temperature?: number | undefined
  /** Sampling seed; a fixed default so that runs are repeatable; null sends none (the server samples freshly). */
  readonly seed?: number | null | undefined
  /**
   * Upper bound on completion tokens (OpenAI-compatible max_tokens, Ollama num_predict). A request that sets none
   * gets its role's limit (`outputLimitOf`) where it is sent (`callModel`).
   */
  readonly maxTokens?: number | undefined
  /** Per-request timeout in milliseconds. */
  readonly timeoutMs?: number | undefined
}

export interface GenerateRequest {
  /** The calling agent's role ("planner", "executor.choose", ...), for traces, caching and scripted replies. */
  readonly role: string
  readonly messages: ReadonlyArray<Message>
  /** JSON Schema the reply must follow (Ollama `format`, OpenAI `response_format`). Never together with `tools`. */
  readonly format?: Record<string, unknown> | undefined
  /**
   * How `format` is asked of the server: "schema" (the default) sends the JSON Schema; "json_object" asks only for a
   * JSON object (OpenAI `response_format: {"type": "json_object"}`, Ollama `format: "json"`, a grammar of any object
   * on llama.cpp), as StableToolBench's simulator asks; "none" sends no format. The reply is checked against `format`
   * either way.
   */
  readonly formatAs?: "schema" | "json_object" | "none" | undefined
  /** Functions for native tool calling. Never together with `format`. */
  readonly tools?: ReadonlyArray<ToolSpec> | undefined
  readonly options?: GenerateOptions | undefined
}

export interface Usage {
  readonly promptTokens: number
  readonly completionTokens: number
}

export interface GenerateResponse {
  /** The reply, without a reasoning model's thinking. */
  readonly text: string
  /** A reasoning model's thinking (a `thinking` / `reasoning_content` field or `<think>` in the text): traced, never parsed nor passed on. */
  readonly thinking?: string | undefined
  readonly toolCalls?: ReadonlyArray<ToolCallRequest> | undefined
  readonly usage: Usage
  /** The model that answered, as the server names it. */
  readonly model: string
  readonly durationMs: number
  /** True when the reply came from a cache rather than the server. */
  readonly cached?: boolean | undefined
  /**
   * True when the server stopped the reply at the request's output limit (`finish_reason: "length"`, Ollama's
   * `done_reason: "length"`): the text is cut, whatever it looks like.
   */
  readonly truncated?: boolean | undefined
}

export interface ModelInfo {
  /** The spec the model was built from, e.g. `ollama:qwen2.5:7b`. */
  readonly spec: string
  readonly provider: string
  readonly model: string
  /** Context window used for prompts, in tokens. */
  readonly contextTokens: number
  /** Whether the model accepts native tool calls. */
  readonly supportsTools: boolean
}

export interface LanguageModelShape {
  readonly info: ModelInfo
  readonly generate: (request: GenerateRequest) => Effect.Effect<GenerateResponse, ProviderError>
  /**
   * Set when `generate` keeps its own deadline: it fails with Timeout once a request's `timeoutMs` (or
   * this default) has passed, so a wrapper with the same default need not run a timer of its own.
   */
  readonly timeoutMs?: number | undefined
}

export class LanguageModel extends Context.Service<LanguageModel, LanguageModelShape>()("smurfs/LanguageModel") {}
