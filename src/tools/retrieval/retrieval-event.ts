// The data of a `retrieval` event; apart from the retriever so that the pipelines record sets without loading the index (minisearch).

/** Which retrieval a `retrieval` event reports: the whole task, or one subtask of a plan. */
export type RetrievalScope = "task" | "subtask"

/** A `retrieval` event's data: which retrieval, for what, how, and the tools best first (scores when known). */
export const retrievalEventData = (
  scope: RetrievalScope,
  query: string,
  k: number,
  mode: string,
  tools: ReadonlyArray<{ readonly name: string; readonly score?: number | undefined }>
) => ({
  scope,
  query,
  k,
  mode,
  tools: tools.map((t) =>
    t.score === undefined ? { name: t.name } : { name: t.name, score: Number(t.score.toFixed(4)) }
  )
})
