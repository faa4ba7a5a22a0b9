// The error class of a file or folder the user gave that cannot be used, below every layer that reads one (the CLI's
// help path loads src/failure.ts, which stays free of effect).
import type * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import type { FailureKind } from "./failure.ts"

/** What is wrong with a path the user gave, and what to do about it. */
export interface BadPath {
  readonly path: string
  readonly problem: string
  readonly hint: string
}

/** An error class made by `BadPathError` (named, so that declaration files can name it). */
export type BadPathErrorClass<Tag extends string> = new (
  args: BadPath
) => Cause.YieldableError & { readonly _tag: Tag; readonly kind: FailureKind } & Readonly<BadPath>

/**
 * The base of an error class for a file or folder the user gave that cannot be used: the path, what is wrong and
 * what to do (`<path>: <problem>. <hint>`), of kind `bad-input`. Each error keeps its own tag for `catchTag`.
 */
export const BadPathError = <Tag extends string>(tag: Tag): BadPathErrorClass<Tag> =>
  class extends Data.TaggedError(tag)<BadPath> {
    get kind(): FailureKind {
      return "bad-input"
    }
    override get message() {
      return `${this.path}: ${this.problem}. ${this.hint}`
    }
  }
