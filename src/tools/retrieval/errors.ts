// Errors of the tool recommender, each saying what to do.
import * as Data from "effect/Data"
import type { FailureKind } from "../../failure.ts"

/** `--embed` names no embedding model the retriever can call. */
export class InvalidEmbedSpec extends Data.TaggedError("InvalidEmbedSpec")<{ readonly spec: string }> {
  get kind(): FailureKind {
    return "bad-input"
  }
  override get message() {
    return `Invalid embedding model "${this.spec}": use ollama:<model> (Ollama's /api/embed, e.g. ollama:nomic-embed-text) or openai:<model> (an OpenAI-compatible /v1/embeddings at OPENAI_BASE_URL).`
  }
}

/** `--toolset` is not all, relevant or retrieve[:k]. */
export class InvalidToolset extends Data.TaggedError("InvalidToolset")<{ readonly value: string }> {
  get kind(): FailureKind {
    return "usage"
  }
  override get message() {
    return `--toolset must be all, relevant, or retrieve[:k] with k a positive whole number (got "${this.value}")`
  }
}
