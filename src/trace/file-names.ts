// The one way a name taken from data (query ids, groups, methods, tool or server names) becomes part of a path.
//
// Data is not trusted: a query id such as `../../tmp/victim` or `/etc/x` must not choose where a file
// goes. Every such name is encoded to a safe set of characters, reversibly, so that two distinct names
// never share a file; and every path built from them is checked to stay inside its root.
import { createHash } from "node:crypto"
import { isAbsolute, join, relative, resolve } from "node:path"
import * as Data from "effect/Data"
import type { FailureKind } from "../failure.ts"

/**
 * Characters kept as they are. `.` is encoded too: a name can then never be `.` or `..`, start a hidden
 * file, or end like a temp file (`x.json.tmp-...`).
 */
const SAFE = /[A-Za-z0-9_-]/

/** Longest encoded name kept whole; longer ones keep a prefix and a hash (file systems cap a name at 255 bytes). */
const MAX_ENCODED = 160

/** What the empty name encodes to: a lone `%` never comes out of the encoding otherwise. */
const EMPTY = "%"

/** Marks a shortened name: the encoding never writes `%~` otherwise. */
const HASHED = "%~"

/**
 * A name as a single safe path segment: characters outside `[A-Za-z0-9_-]` become `%XX` (UTF-8 bytes,
 * as in a URL), so `12345` and `G1_instruction` stay readable. Names whose encoding is longer than
 * 160 characters keep its first 100 characters and a sha256 of the whole name: still distinct, no
 * longer reversible.
 */
export const safeName = (name: string): string => {
  if (name.length === 0) return EMPTY
  let out = ""
  for (const ch of name) {
    if (SAFE.test(ch)) out += ch
    else for (const byte of Buffer.from(ch, "utf8")) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
  }
  if (out.length <= MAX_ENCODED) return out
  return `${out.slice(0, 100).replace(/%[0-9A-F]?$/, "")}${HASHED}${createHash("sha256").update(name).digest("hex").slice(0, 32)}`
}

/** The name a `safeName` encoded (undefined for a shortened, hashed name). */
export const fromSafeName = (encoded: string): string | undefined => {
  if (encoded === EMPTY) return ""
  if (encoded.includes(HASHED)) return undefined
  try {
    return decodeURIComponent(encoded)
  } catch {
    return undefined
  }
}

/** A path would leave the directory it must stay in. */
export class PathOutsideRoot extends Data.TaggedError("PathOutsideRoot")<{
  readonly root: string
  readonly path: string
}> {
  get kind(): FailureKind {
    return "bad-input"
  }
  override get message() {
    return `${this.path} is outside ${this.root}: a name taken from data tried to leave its directory. Report this as a bug in smurfs; the file was not written.`
  }
}

/**
 * `join(root, ...segments)`, checked to stay strictly inside `root`. Segments are fixed names of the
 * layout or `safeName(...)` of data; the check is the second line of defence, should one ever not be.
 */
export const pathInside = (root: string, ...segments: ReadonlyArray<string>): string => {
  const path = join(root, ...segments)
  const rel = relative(resolve(root), resolve(path))
  if (rel === "" || rel === ".." || rel.startsWith(`..${"/"}`) || rel.startsWith("..\\") || isAbsolute(rel))
    throw new PathOutsideRoot({ root, path })
  return path
}
