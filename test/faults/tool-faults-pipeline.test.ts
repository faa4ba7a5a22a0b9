// Tool faults inside a whole Smurfs run (H2's tests cover a single safe call): the failing tool is excluded, the task ends, nothing hangs.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { dfsdt } from "../../src/agents/dfsdt.ts"
import { react } from "../../src/agents/react.ts"
import { scriptedLayer } from "../../src/llm/scripted.ts"
import { defineTool } from "../../src/tools/define-tool.ts"
import type { Tool } from "../../src/tools/tool.ts"
import { callsOf, eventsOf, makeTool, runSmurfs, userPrompt } from "../pipeline-fixtures.ts"

const FIVE_MB = 5 * 1024 * 1024
const circular = () => {
  const o: Record<string, unknown> = { big: 10n }
  o["self"] = o
  return o
}

/** Each fault as a tool made with defineTool (the way users write tools). */
const faulty: ReadonlyArray<[string, Tool, (result: Record<string, any>) => void]> = [
  [
    "throws",
    defineTool({
      name: "thrower",
      description: "throws",
      parameters: z.object({}),
      execute: () => {
        throw new Error("boom")
      }
    }),
    (r) => expect(r).toMatchObject({ ok: false, error: expect.stringContaining("boom") })
  ],
  [
    "hangs past its timeout",
    defineTool({
      name: "hanger",
      description: "hangs",
      parameters: z.object({}),
      timeoutMs: 50,
      execute: () => new Promise(() => {})
    }),
    (r) => expect(r).toMatchObject({ ok: false, error: expect.stringContaining("timeout") })
  ],
  [
    "returns 5 MB",
    defineTool({ name: "flood", description: "floods", parameters: z.object({}), execute: () => "x".repeat(FIVE_MB) }),
    (r) => expect(r).toMatchObject({ ok: true, truncated: true })
  ],
  [
    "returns non-JSON",
    defineTool({ name: "weird", description: "circular", parameters: z.object({}), execute: circular }),
    (r) => expect(r).toMatchObject({ ok: true, content: expect.stringContaining("[Circular]") })
  ],
  [
    "returns undefined",
    defineTool({ name: "void", description: "nothing", parameters: z.object({}), execute: () => undefined }),
    (r) => expect(r).toMatchObject({ ok: false, error: expect.stringContaining("undefined") })
  ],
  // hand-written tools that break the Tool contract
  [
    "dies (raw Tool)",
    { name: "dier", description: "dies", parameters: z.object({}), call: () => Effect.die(new Error("defect")) },
    (r) => expect(r).toMatchObject({ ok: false, error: expect.stringContaining("defect") })
  ],
  [
    "never ends (raw Tool)",
    { name: "forever", description: "never", parameters: z.object({}), call: () => Effect.never },
    (r) => expect(r).toMatchObject({ ok: false, error: expect.stringContaining("timeout") })
  ]
]

describe("tool faults during a Smurfs run", () => {
  it.each(faulty)(
    "a tool that %s: the step fails softly, the tool is excluded, a working tool answers",
    async (_label, bad, check) => {
      const good = makeTool("good", z.object({}), () => ({ ok: true, content: "the answer is 42" }))
      const offered: Array<unknown> = []
      const t = await runSmurfs(
        "What is the answer?",
        [bad, good],
        {
          "executor.thought": [{ thought: "try a tool" }],
          "executor.choose": [
            (r) => (offered.push(r.format), { tool: bad.name }),
            (r) => (offered.push(r.format), { tool: "good" })
          ],
          "executor.args": [{}],
          "answerer.step": [{ answer: "42" }],
          verifier: [{ status: "solved", reason: "ok" }],
          "answerer.final": [{ answer: "42" }],
          "answerer.subtask": [{ answer: "42" }],
          $cycle: true
        },
        { planner: false, toolTimeoutMs: 200 }
      )
      expect(t.finishType).toBe("give_answer")
      const calls = eventsOf(t, "tool_call")
      expect(calls[0]!["tool"]).toBe(bad.name)
      check(calls[0]!)
      // a bounded observation, whatever the tool returned
      expect(String(calls[0]!["content"]).length).toBeLessThan(10_000)
      for (const c of callsOf(t, "answerer.step")) expect(userPrompt(c).length).toBeLessThan(20_000)
      if (calls[0]!["ok"] === false) {
        // the failed tool is excluded at this depth: the retry names it, and the next choice is offered only the others
        const second = callsOf(t, "executor.choose")[1]!
        expect(userPrompt(second)).toContain(`Executor agent, tool (not ${bad.name})`)
        expect(JSON.stringify(offered[0])).toContain(`"${bad.name}"`)
        expect(JSON.stringify(offered[1])).not.toContain(`"${bad.name}"`)
        expect(good.calls).toHaveLength(1)
      }
    },
    300_000
  )
})

describe("tool faults during ReAct and DFSDT", () => {
  const finish = { toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }] }
  const raw = faulty.filter(([label]) => label.includes("raw Tool") || label === "throws")
  it.each(
    raw.flatMap(([label, tool]) =>
      (["react", "dfsdt"] as const).map((method) => [`${method}: a tool that ${label}`, method, tool] as const)
    )
  )(
    "%s becomes an error observation, and the chain goes on",
    async (_label, method, tool) => {
      const options = { toolCalling: "native" as const, toolTimeoutMs: 200 }
      const run = method === "react" ? react(options) : dfsdt(options)
      const script = { "*": [{ toolCalls: [{ name: tool.name, arguments: {} }] }, finish], $cycle: true }
      const t = await Effect.runPromise(
        run({ id: "tf", query: "q", tools: { name: "faulty", tools: [tool] } }).pipe(
          Effect.provide(scriptedLayer(script))
        )
      )
      expect(t.finishType).toBe("give_answer")
      expect(eventsOf(t, "tool_call")[0]).toMatchObject({ tool: tool.name, ok: false })
    },
    10_000
  )
})
