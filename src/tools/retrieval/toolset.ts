// `--toolset`: a task's tools are its whole list, its relevant APIs, or the top-k a retriever recommends.
import { InvalidToolset } from "./errors.ts"

/** How many tools a task gets from `--toolset retrieve` without `:k`. */
export const DEFAULT_RETRIEVE_K = 5

export type Toolset =
  | { readonly kind: "all" }
  | { readonly kind: "relevant" }
  | { readonly kind: "retrieve"; readonly k: number }

/** Read `all`, `relevant`, `retrieve` or `retrieve:<k>`; throws InvalidToolset with the accepted forms. */
export const parseToolset = (value: string): Toolset => {
  const text = value.trim()
  if (text === "all" || text === "relevant") return { kind: text }
  const match = /^retrieve(?::(\d+))?$/.exec(text)
  if (!match) throw new InvalidToolset({ value })
  const k = match[1] === undefined ? DEFAULT_RETRIEVE_K : Number(match[1])
  if (!Number.isInteger(k) || k < 1) throw new InvalidToolset({ value })
  return { kind: "retrieve", k }
}

/** The toolset as written in run.json (`retrieve:5`). */
export const toolsetLabel = (toolset: Toolset): string =>
  toolset.kind === "retrieve" ? `retrieve:${toolset.k}` : toolset.kind
