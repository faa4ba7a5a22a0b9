// The lexical retriever: BM25+ (MiniSearch) over a tool's name, tool, category, description and parameters, weighted by field.
import type MiniSearch from "minisearch"
import { RETRIEVAL_PEERS, requirePeer } from "../../peer-packages.ts"
import type { ToolDocument } from "./document.ts"
import { processTerm, tokenize } from "./tokens.ts"

/** A tool and its score for a query, best first. */
export interface Ranked {
  readonly name: string
  readonly score: number
}

type Field = "name" | "tool" | "category" | "description" | "params"

export interface LexicalOptions {
  /** Weight of a match in each field. */
  readonly boost?: Partial<Record<Field, number>> | undefined
  /** BM25+ parameters: k (term frequency saturation), b (length normalization), d (BM25+ floor). */
  readonly bm25?: { readonly k: number; readonly b: number; readonly d: number } | undefined
}

/**
 * Defaults measured with `npm run bench:retrieval` on the pooled 765-query ToolBench corpus: the API
 * name and its tool's name say most about what an API does; descriptions are often empty or generic.
 */
export const LEXICAL_DEFAULTS = {
  boost: { name: 3, tool: 3, category: 0.5, description: 1.5, params: 0.5 },
  bm25: { k: 1.2, b: 0.7, d: 0.5 }
} as const satisfies Required<LexicalOptions>

export interface LexicalIndex {
  readonly size: number
  /** The best `k` tools for a query; fewer when fewer match any query term. */
  readonly search: (query: string, k: number) => Array<Ranked>
}

const FIELDS: ReadonlyArray<Field> = ["name", "tool", "category", "description", "params"]

export const makeLexicalIndex = (
  documents: ReadonlyArray<ToolDocument>,
  options: LexicalOptions = {}
): LexicalIndex => {
  const boost = { ...LEXICAL_DEFAULTS.boost, ...options.boost }
  // minisearch is an optional peer package: loaded with the first index, named when missing
  const Index = requirePeer<typeof MiniSearch>(RETRIEVAL_PEERS, "minisearch") // its CommonJS build exports the class itself
  const index = new Index<ToolDocument>({
    idField: "id",
    fields: [...FIELDS],
    tokenize,
    processTerm: (term) => processTerm(term) ?? null,
    searchOptions: {
      boost,
      bm25: options.bm25 ?? LEXICAL_DEFAULTS.bm25,
      combineWith: "OR",
      prefix: false,
      fuzzy: false
    }
  })
  index.addAll(documents)
  return {
    size: documents.length,
    search: (query, k) =>
      index
        .search(query)
        .slice(0, k)
        .map((hit) => ({ name: String(hit.id), score: hit.score }))
  }
}
