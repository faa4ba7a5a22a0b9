// What moves lexical recall: the full retriever against variants that each drop one of its choices.

import * as Effect from "effect/Effect"
import MiniSearch from "minisearch"
import { toolDocument } from "../../src/tools/retrieval/document.ts"
import { LEXICAL_DEFAULTS, type Ranked } from "../../src/tools/retrieval/lexical.ts"
import type { Retriever } from "../../src/tools/retrieval/retriever.ts"
import { processTerm, tokenize } from "../../src/tools/retrieval/tokens.ts"
import type { Tool, ToolLibrary } from "../../src/tools/tool.ts"

type Doc = Record<string, string> & { id: string }

interface Variant {
  readonly label: string
  readonly fields: ReadonlyArray<string>
  readonly docs: (tool: Tool) => Doc
  readonly tokenize?: ((text: string) => Array<string>) | undefined
  readonly processTerm?: ((term: string) => string | null) | undefined
  readonly boost?: Record<string, number> | undefined
}

const ours = (tool: Tool): Doc => ({ ...toolDocument(tool) })
const FIELDS = ["name", "tool", "category", "description", "params"]

export const VARIANTS: ReadonlyArray<Variant> = [
  {
    label: "plain BM25: function name + description, no stop words",
    fields: ["name", "description"],
    docs: (t) => ({ id: t.name, name: t.name, description: t.description })
  },
  {
    label: "plain BM25 + stop words and plurals",
    fields: ["name", "description"],
    docs: (t) => ({ id: t.name, name: t.name, description: t.description }),
    tokenize,
    processTerm
  },
  {
    label: "ours without stop words and plural folding",
    fields: FIELDS,
    docs: ours,
    tokenize,
    processTerm: (t) => t.toLowerCase(),
    boost: LEXICAL_DEFAULTS.boost
  },
  { label: "ours without field weights", fields: FIELDS, docs: ours, tokenize, processTerm },
  {
    label: "ours without the tool-name field",
    fields: FIELDS.filter((f) => f !== "tool"),
    docs: ours,
    tokenize,
    processTerm,
    boost: LEXICAL_DEFAULTS.boost
  },
  {
    label: "ours without parameter docs and category",
    fields: ["name", "tool", "description"],
    docs: ours,
    tokenize,
    processTerm,
    boost: LEXICAL_DEFAULTS.boost
  },
  {
    label: "ours (the default lexical retriever)",
    fields: FIELDS,
    docs: ours,
    tokenize,
    processTerm,
    boost: LEXICAL_DEFAULTS.boost
  }
]

/** A variant as a Retriever, so the same evaluation scores it. */
export const variantRetriever = (library: ToolLibrary, variant: Variant): Retriever => {
  const index = new MiniSearch<Doc>({
    idField: "id",
    fields: [...variant.fields],
    ...(variant.tokenize ? { tokenize: variant.tokenize } : {}),
    ...(variant.processTerm ? { processTerm: (t: string) => variant.processTerm!(t) ?? null } : {}),
    searchOptions: { boost: variant.boost ?? {}, bm25: LEXICAL_DEFAULTS.bm25 }
  })
  index.addAll(library.tools.map(variant.docs))
  const lexical = (query: string, k: number): Array<Ranked> =>
    index
      .search(query)
      .slice(0, k)
      .map((h) => ({ name: String(h.id), score: h.score }))
  return {
    library,
    mode: "lexical",
    lexical,
    search: (query, k) => Effect.succeed(lexical(query, k)),
    // a variant is measured by its own ranking: a query it finds nothing for counts as a miss
    nothingFound: () => Effect.succeed({ ranked: [], instead: "nothing is offered (a measured variant)" })
  }
}
