// Why a model or data file could not be had, each with what to do: fetch it ahead, download it by hand, fix the spec.
import * as Data from "effect/Data"
import type { FailureKind } from "../../failure.ts"

/** Why a download did not give a usable file. */
export type DownloadProblem =
  /** Offline (`--offline`, SMURFS_OFFLINE, HF_HUB_OFFLINE) and the file is not in the cache. */
  | "offline"
  /** The host did not answer (connection refused, DNS, reset, a stalled body after the retries). */
  | "unreachable"
  /** The host answered with an error status (5xx, 403, ...). */
  | "http"
  /** The bytes received are not the file: wrong size, wrong checksum, not a GGUF. Nothing was kept. */
  | "corrupt"

/**
 * A file that could not be fetched: offline, unreachable, refused or corrupt. Exit code 4 (unavailable), and the
 * message names the URL, how to fetch it ahead (`smurfs pull <spec>` or `smurfs data pull ...`) and where to put a
 * copy downloaded by hand.
 */
export class DownloadUnavailable extends Data.TaggedError("DownloadUnavailable")<{
  readonly problem: DownloadProblem
  readonly url: string
  /** Where the file belongs (a copy downloaded by hand goes there). */
  readonly path: string
  /** What was wrong, in a few words (the status, the size or checksum that differed). */
  readonly detail?: string | undefined
  /** The command that fetches it ahead, e.g. `smurfs pull hf:user/repo:Q4_K_M`. */
  readonly fetchCommand?: string | undefined
  /** How to get it by hand, when it is more than downloading the URL to the path (a quantization's file of a repository). */
  readonly byHand?: string | undefined
}> {
  get kind(): FailureKind {
    return "unavailable"
  }
  override get message() {
    const what =
      this.problem === "offline"
        ? `offline, and ${this.path} is not there yet`
        : this.problem === "unreachable"
          ? `cannot download ${this.url}${this.detail ? ` (${this.detail})` : ""}`
          : this.problem === "http"
            ? `the server refused ${this.url}${this.detail ? ` (${this.detail})` : ""}`
            : `the file downloaded from ${this.url} is corrupt${this.detail ? ` (${this.detail})` : ""}; it was not kept`
    const fetch = this.fetchCommand ? `run \`${this.fetchCommand}\` where the network is reachable, or ` : ""
    return `${what}. To get it: ${fetch}${this.byHand ?? `download ${this.url} by hand to ${this.path}`}.`
  }
}

/** A model source or file that cannot be used as given: a missing local file, an unknown quant, a malformed spec. Exit code 3. */
export class ModelSourceInvalid extends Data.TaggedError("ModelSourceInvalid")<{
  readonly source: string
  readonly problem: string
  readonly hint: string
}> {
  get kind(): FailureKind {
    return "bad-input"
  }
  override get message() {
    return `${this.source}: ${this.problem}. ${this.hint}`
  }
}
