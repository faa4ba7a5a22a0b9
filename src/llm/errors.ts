// Typed, actionable failures of the model layer; each message says what the user should do next, and each class
// says what its callers ask of it (its kind, retryable, the server's fault, fatal to the task).
import * as Data from "effect/Data"
import type { Failure, FailureKind } from "../failure.ts"
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

/** The prompt does not fit in the model's context window even after trimming. */
export class ContextOverflow extends Data.TaggedError("ContextOverflow")<{
  readonly role: string
  readonly promptTokens: number
  readonly contextTokens: number
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
    return `The ${this.role} prompt needs ${this.promptTokens} tokens but the context window is ${this.contextTokens}. Raise --num-ctx or use fewer tools.`
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
}> {
  get kind(): FailureKind {
    return "bad-input"
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
