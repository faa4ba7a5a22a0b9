// Bad model replies against the ReAct and DFSDT baselines (native and JSON tool calling): no crash, no lost task.
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { pick, rngFor } from "../../bench/eval/rng.ts"
import { schemaValueOf } from "../../bench/sim/schema-value.ts"
import { dfsdt } from "../../src/agents/dfsdt.ts"
import { react } from "../../src/agents/react.ts"
import type { Method } from "../../src/agents/task.ts"
import type { GenerateRequest, ToolSpec } from "../../src/llm/language-model.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { makeScriptedModel } from "../../src/llm/scripted.ts"
import { demoLibrary } from "../../src/tools/demo/index.ts"
import { isKind } from "../../src/trace/events.ts"

const KINDS = [
  "random_text",
  "truncated_json",
  "empty",
  "huge",
  "unknown_tool",
  "wrong_args",
  "missing_keys",
  "bad_finish"
] as const

/** The functions offered: native `tools`, or the JSON lines of the react-json prompt. */
const specsOf = (request: GenerateRequest): Array<ToolSpec> =>
  request.tools
    ? [...request.tools]
    : request.messages.flatMap((m) =>
        m.content.split("\n").flatMap((line) => (line.startsWith('{"name":') ? [JSON.parse(line) as ToolSpec] : []))
      )

const action = (request: GenerateRequest, name: string, args: unknown, thought = "next step") =>
  request.tools
    ? { toolCalls: [{ name, arguments: args as Record<string, unknown> }], text: thought }
    : { thought, action: name, action_input: args }

const faultyReply =
  (rng: () => number, counts: Record<string, number>) =>
  (request: GenerateRequest): string | object => {
    const specs = specsOf(request).filter((s) => s.name !== "Finish")
    if (rng() >= 0.5) {
      if (rng() < 0.25 || specs.length === 0)
        return action(request, "Finish", { return_type: "give_answer", final_answer: "42" })
      const spec = pick(specs, rng)
      return action(
        request,
        spec.name,
        schemaValueOf(spec.parameters, (p) => (p[0] === "expression" ? "6 * 7" : undefined))
      )
    }
    const kind = pick(KINDS, rng)
    counts[kind] = (counts[kind] ?? 0) + 1
    switch (kind) {
      case "random_text":
        return "I am not sure what to do next, let me think"
      case "truncated_json":
        return JSON.stringify(action(request, "calculator", { expression: "1+1" })).slice(0, 20)
      case "empty":
        return ""
      case "huge":
        return "z".repeat(200_000)
      case "unknown_tool":
        return action(request, "search_the_web", { q: "x" })
      case "wrong_args":
        return action(request, "calculator", { expression: 12345, extra: true })
      case "missing_keys":
        return request.tools ? { toolCalls: [{ name: "calculator", arguments: {} }] } : { action_input: {} }
      case "bad_finish":
        return action(request, "Finish", { return_type: "maybe" })
    }
  }

const cases: ReadonlyArray<[string, Method]> = [
  ["react native", react({ toolCalling: "native", singleChainMaxStep: 18 })],
  ["react json", react({ toolCalling: "json", singleChainMaxStep: 18 })],
  ["dfsdt native", dfsdt({ toolCalling: "native", singleChainMaxStep: 18, budget: 20 })],
  ["dfsdt json", dfsdt({ toolCalling: "json", singleChainMaxStep: 18, budget: 20 })]
]

describe("baselines under bad replies", () => {
  it.each(cases)(
    "%s: every task ends with an answer or a recorded give-up",
    async (label, method) => {
      const counts: Record<string, number> = {}
      let lost = 0,
        crashes = 0,
        gaveUp = 0
      for (let i = 0; i < 25; i++) {
        const model = makeScriptedModel({ "*": [faultyReply(rngFor(5, label, i), counts)], $cycle: true }, "faulty")
        const exit = await Effect.runPromiseExit(
          method({ id: `b${i}`, query: "What is 6 * 7?", tools: demoLibrary() }).pipe(
            Effect.provideService(LanguageModel, model)
          )
        )
        if (Exit.isFailure(exit)) {
          crashes++
          continue
        }
        const t = exit.value
        const guardrails = t.events.filter((e) => isKind(e, "guardrail")).length
        expect(Object.values(t.totals.guardrails).reduce((a, b) => a + b, 0)).toBe(guardrails)
        if (t.finishType === "give_answer" ? t.finalAnswer.trim() === "" : !t.events.some((e) => isKind(e, "give_up")))
          lost++
        if (t.finishType === "give_up") gaveUp++
      }
      console.log(
        `${label}: bad replies ${JSON.stringify(counts)}; gave up ${gaveUp}/25; crashes ${crashes}; lost ${lost}`
      )
      expect(Object.keys(counts).sort()).toEqual([...KINDS].sort())
      expect(crashes).toBe(0)
      expect(lost).toBe(0)
    },
    300_000
  )
})
