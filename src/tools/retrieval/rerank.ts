// The LLM re-ranker (AutoMAS' second stage): the model orders the retriever's top candidates for the task.
import * as Effect from "effect/Effect"
import { z } from "zod"
import type { GenerateError } from "../../llm/errors.ts"
import type { LanguageModel } from "../../llm/language-model.ts"
import { generateObject, jsonSchemaOf } from "../../llm/structured.ts"
import { jsonShape } from "../../text/json-shape.ts"
import { loadTemplate, renderTemplate } from "../../text/prompt-template.ts"
import type { Tool } from "../tool.ts"
import type { Ranked } from "./lexical.ts"

export const Reranking = z.object({ tools: z.array(z.string()) })

/** Characters of a candidate's description shown to the re-ranker. */
const DESCRIPTION_CHARS = 200

const line = (tool: Tool, i: number) =>
  `${i + 1}. ${tool.name}: ${tool.description.replace(/\s+/g, " ").slice(0, DESCRIPTION_CHARS)}`

/**
 * Order `candidates` for `query` with the model. Structured-output guardrails apply: the reply must
 * parse, and a name that is not a candidate is reflected back with the valid names. The model's
 * choices come first, then the candidates it left out in the retriever's order, so that a top-k is
 * always full. Scores of the result are reciprocal ranks.
 */
export const rerank = (
  query: string,
  candidates: ReadonlyArray<Ranked>,
  tools: ReadonlyMap<string, Tool>
): Effect.Effect<Array<Ranked>, GenerateError, LanguageModel> =>
  Effect.gen(function* () {
    const names = candidates.map((c) => c.name)
    const known = new Set(names)
    const format = jsonShape(jsonSchemaOf(Reranking), loadTemplate("rerank").examples)
    const prompt = renderTemplate("rerank", {
      query,
      candidates: names.map((n, i) => line(tools.get(n)!, i)).join("\n"),
      format
    })
    const { value } = yield* generateObject({
      role: "rerank",
      schema: Reranking,
      messages: [
        { role: "system", content: prompt.system },
        { role: "user", content: prompt.user, values: { query, candidates: names } }
      ],
      check: (reply) => {
        const unknown = reply.tools.filter((t) => !known.has(t))
        return unknown.length > 0
          ? {
              guardrail: "unknown_tool",
              error: `there is no candidate named ${unknown.map((u) => `"${u}"`).join(", ")}. Valid names: ${names.join(", ")}.`
            }
          : undefined
      }
    })
    const chosen = [...new Set(value.tools)]
    const order = [...chosen, ...names.filter((n) => !chosen.includes(n))]
    return order.map((name, i) => ({ name, score: 1 / (i + 1) }))
  })
