// Typed, actionable failures of the model layer; each message says what the user should do next, and each class
// says what its callers ask of it (its kind, retryable, the server's fault, fatal to the task).
import * as Data from "effect/Data"
import type { Failure, FailureKind } from "../failure.ts"
import { GENERIC_CONTEXT_ADVICE, type OverflowServer } from "./context-overflow.ts"
import { providerWording, registeredProviders } from "./providers.ts"

/** What the model layer's callers ask of a failure: a required part of every class below. */
export interface ModelFailure extends Failure {
  readonly _tag: string
  /** Worth sending again after a pause (the server is busy). */
  readonly retryable: boolean
  /** The server failed: no reply came, whatever the model would have said (the task is no result). */
  readonly serverFault: boolean
  /** No further call of the task can succeed (nobody answers, the model is missing): the task ends. */
  readonly fatalToTask: boolean
}

/** The model server could not be reached (connection refused, DNS, reset before a reply). */
export class ModelUnreachable extends Data.TaggedError("ModelUnreachable")<{
  readonly provider: string
  readonly host: string
  readonly cause?: unknown
}> {
  get kind(): FailureKind {
    return "unavailable"
  }
  get retryable(): boolean {
    return false
  }
  get serverFault(): boolean {
    return true
  }
  get fatalToTask(): boolean {
    return true
  }
  override get message() {
    return providerWording(this.provider).unreachable(this.host)
  }
}

/** The models a server has, for advice when the requested one is missing (for a typo, the right name is among them). */
export const modelListing = (names: ReadonlyArray<string>): string =>
  names.length === 0
    ? "The server has no models yet."
    : `The server has: ${names.slice(0, 12).join(", ")}${names.length > 12 ? ", ..." : ""}.`

/** The server answered, but does not have the requested model. */
export class ModelNotFound extends Data.TaggedError("ModelNotFound")<{
  readonly provider: string
  readonly model: string
  /** The models the server has, when it was asked (for a typo, the right name is among them). */
  readonly available?: ReadonlyArray<string> | undefined
}> {
  get kind(): FailureKind {
    return "unavailable"
  }
  get retryable(): boolean {
    return false
  }
  get serverFault(): boolean {
    return true
  }
  get fatalToTask(): boolean {
    return true
  }
  override get message() {
    return `${providerWording(this.provider).modelMissing(this.model)}${this.available === undefined ? "" : ` ${modelListing(this.available)}`}`
  }
}

/** 429 or 503: the server is busy. Retried with backoff before it reaches the caller. */
export class Overloaded extends Data.TaggedError("Overloaded")<{
  readonly status: number
  readonly retryAfterMs?: number | undefined
  readonly host: string
}> {
  get kind(): FailureKind {
    return "unavailable"
  }
  get retryable(): boolean {
    return true
  }
  get serverFault(): boolean {
    return true
  }
  get fatalToTask(): boolean {
    return false
  }
  override get message() {
    return `The model server at ${this.host} is overloaded (HTTP ${this.status}) and stayed so after retries. Lower --concurrency (match OLLAMA_NUM_PARALLEL) or try again later.`
  }
}

/** A reply took longer than the per-request timeout. */
export class Timeout extends Data.TaggedError("Timeout")<{
  readonly ms: number
  readonly role: string
}> {
  get kind(): FailureKind {
    return "unavailable"
  }
  get retryable(): boolean {
    return false
  }
  get serverFault(): boolean {
    return true
  }
  get fatalToTask(): boolean {
    return false
  }
  override get message() {
    return `The model did not answer the ${this.role} request within ${this.ms} ms. Raise --timeout, use a smaller model, or lower --concurrency.`
  }
}

/** The model's reply did not parse or validate even after the reflection retries. */
export class MalformedOutput extends Data.TaggedError("MalformedOutput")<{
  readonly role: string
  readonly error: string
  readonly text: string
  readonly attempts: number
}> {
  get kind(): FailureKind {
    return "failed"
  }
  get retryable(): boolean {
    return false
  }
  get serverFault(): boolean {
    return false
  }
  get fatalToTask(): boolean {
    return false
  }
  override get message() {
    return `The model's ${this.role} reply was not valid after ${this.attempts} attempts: ${this.error}`
  }
}

/**
 * The prompt does not fit in the model's context window: found by smurfs' own estimate before sending (no
 * `server`), or said by the server, with its own figures where it gives them (llama.cpp, vLLM).
 */
export class ContextOverflow extends Data.TaggedError("ContextOverflow")<{
  readonly role: string
  /** The prompt's tokens, as the server counted them or as smurfs estimated them; absent when the server did not say. */
  readonly promptTokens?: number | undefined
  /** The context window: the server's own when it said, else the one smurfs fits its prompts to (--num-ctx). */
  readonly contextTokens?: number | undefined
  /** The reply's tokens the request asked for, when the server counts them against the window (vLLM). */
  readonly completionTokens?: number | undefined
  /** The server that refused the prompt, read from its words; absent for smurfs' own estimate. */
  readonly server?: OverflowServer | undefined
  /** The provider of the spec (ollama, openai), whose settings fix it. */
  readonly provider?: string | undefined
}> {
  get kind(): FailureKind {
    return "failed"
  }
  get retryable(): boolean {
    return false
  }
  get serverFault(): boolean {
    return false
  }
  get fatalToTask(): boolean {
    return false
  }
  override get message() {
    const prompt = this.promptTokens !== undefined && this.promptTokens > 0 ? this.promptTokens : undefined
    const window = this.contextTokens !== undefined && this.contextTokens > 0 ? this.contextTokens : undefined
    const ofWindow = window === undefined ? "" : ` of ${window} tokens`
    const reply = this.completionTokens === undefined ? "" : ` and up to ${this.completionTokens} reply tokens`
    const said =
      this.server === undefined
        ? prompt === undefined
          ? `The ${this.role} prompt does not fit the context window${ofWindow}.`
          : `The ${this.role} prompt needs about ${prompt} tokens${this.completionTokens === undefined ? "" : `, with ${this.completionTokens} kept for its reply,`} but the context window is ${window ?? "smaller"}.`
        : prompt === undefined
          ? `The ${this.server} server refused the ${this.role} prompt as longer than its context window${ofWindow}.`
          : `The ${this.server} server refused the ${this.role} prompt: ${prompt} prompt tokens${reply} are more than its context window${ofWindow}.`
    const advice = this.provider === undefined ? undefined : providerWording(this.provider).contextAdvice
    return `${said} ${advice?.(this.server, this.server === undefined ? undefined : window) ?? GENERIC_CONTEXT_ADVICE}`
  }
}

/** Any other server-side failure (HTTP 500, invalid body, cut stream). */
export class ModelServerError extends Data.TaggedError("ModelServerError")<{
  readonly status?: number | undefined
  readonly host: string
  readonly detail: string
  /**
   * The server could not parse the tool call the model wrote (Ollama's HTTP 500 "error parsing tool
   * call"): a bad reply, not a failed server, so it is reflected to the model and never ends a run.
   */
  readonly unparsedToolCall?: boolean | undefined
}> {
  get kind(): FailureKind {
    return "unavailable"
  }
  get retryable(): boolean {
    return false
  }
  get serverFault(): boolean {
    return !this.unparsedToolCall
  }
  get fatalToTask(): boolean {
    return false
  }
  override get message() {
    return `The model server at ${this.host} failed${this.status ? ` (HTTP ${this.status})` : ""}: ${this.detail}`
  }
}

/** The --model spec could not be understood, or what it names cannot be used (a model file that is no model). */
export class InvalidModelSpec extends Data.TaggedError("InvalidModelSpec")<{
  readonly spec: string
  readonly reason: string
  /** The reason is a whole message of its own (a model file that cannot be loaded, a package to install): said as it is. */
  readonly whole?: boolean | undefined
  /** The model could not be had for now (a download offline or from an unreachable host): unavailable, not bad input. */
  readonly unavailable?: boolean | undefined
}> {
  get kind(): FailureKind {
    return this.unavailable ? "unavailable" : "bad-input"
  }
  override get message() {
    if (this.whole) return this.reason
    const usages = registeredProviders().map((p) => p.usage)
    const use = usages.length < 2 ? usages.join("") : `${usages.slice(0, -1).join(", ")} or ${usages.at(-1)}`
    return `Invalid model spec "${this.spec}": ${this.reason}.${use === "" ? "" : ` Use ${use}.`}`
  }
}

/** A union whose every member says what callers ask: a new class without ModelFailure's properties does not compile. */
type Described<E extends ModelFailure> = E

/** Errors a provider call can fail with. */
export type ProviderError = Described<
  ModelUnreachable | ModelNotFound | Overloaded | Timeout | ModelServerError | ContextOverflow
>

/** Errors a structured generation can fail with. */
export type GenerateError = Described<ProviderError | MalformedOutput>
