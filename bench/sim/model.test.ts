import { Effect, Layer } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { Answer } from "../../src/agents/answerer.ts"
import { dfsdt } from "../../src/agents/dfsdt.ts"
import { Thought } from "../../src/agents/executor.ts"
import { argsSchema, choiceSchema } from "../../src/agents/guardrails.ts"
import { Plan } from "../../src/agents/planner.ts"
import { react } from "../../src/agents/react.ts"
import { smurfs } from "../../src/agents/smurfs.ts"
import type { Task } from "../../src/agents/task.ts"
import { Verdict } from "../../src/agents/verifier.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { jsonSchemaOf } from "../../src/llm/structured.ts"
import { makeEnvironmentChain } from "../../src/tools/environments/chain.ts"
import type { ToolEnvironment } from "../../src/tools/environments/environment.ts"
import { toolbenchLibrary } from "../../src/tools/toolbench/adapter.ts"
import { isKind, kindOf } from "../../src/trace/events.ts"
import { EventData, EventKind, Trajectory } from "../../src/trace/record.ts"
import { MINI_DATA } from "../../test/data.ts"
import { paperLoop } from "../../test/pipeline-fixtures.ts"
import { type BenchQuery, loadQueries } from "../datasets.ts"
import { taskOf } from "../tasks.ts"
import { drawFault } from "./faults.ts"
import { CurrentTask, makeSimModel, parseSimSpec, type SimModel, simModelLayer, withCurrentTask } from "./index.ts"
import { readRecordings, simTaskOf } from "./knowledge.ts"
import { contentOf, subtaskFor } from "./policy.ts"

const DATA = MINI_DATA.path

let query: BenchQuery
let task: Task
beforeAll(async () => {
  const queries = await Effect.runPromise(loadQueries({ dir: DATA, groups: ["G1_instruction"], ids: ["588"] }))
  query = queries[0]!
  const env: ToolEnvironment = await Effect.runPromise(
    makeEnvironmentChain(["replay", "offline"], { responses: `${DATA}/responses.jsonl` }) as Effect.Effect<
      ToolEnvironment,
      unknown,
      never
    >
  )
  task = taskOf(query, "all", (name, docs) => toolbenchLibrary(name, docs, env))
})

const sim = (spec: string): SimModel => {
  const parsed = parseSimSpec(spec)
  if ("error" in parsed) throw parsed.error
  // the fixture's queries and recordings, not the default ../shared/toolbench
  return makeSimModel({ ...parsed.options, data: DATA }, undefined, spec)
}

const solve = (model: SimModel, method: (t: Task) => Effect.Effect<Trajectory, never, LanguageModel>) =>
  Effect.runPromise(withCurrentTask(query)(method(task)).pipe(Effect.provideService(LanguageModel, model.model)))

/** One request as an agent sends it: the rendered prompt and the values it was rendered from (what the simulated model reads). */
const ask = (
  model: SimModel,
  role: string,
  system: string,
  user: string,
  format: Record<string, unknown>,
  values: Record<string, unknown> = {}
) =>
  Effect.runPromise(
    withCurrentTask(query)(
      model.model.generate({
        role,
        messages: [
          { role: "system", content: system },
          { role: "user", content: user, values }
        ],
        format
      })
    )
  )

const relevantNames = () => simTaskOf(query, readRecordings(DATA)).apis.map((a) => a.name)

describe("simulated model", () => {
  it("answers every Smurfs role with output that parses under the agent's own schema", async () => {
    const model = sim("sim")
    const [first, second] = simTaskOf(query, readRecordings(DATA)).apis
    const plan = Plan.parse(
      JSON.parse(
        (await ask(model, "planner", "", `Question: ${query.query}`, jsonSchemaOf(Plan), { query: query.query })).text
      )
    )
    expect(plan.subtasks).toEqual([subtaskFor(first!), subtaskFor(second!)])

    const thought = Thought.parse(
      JSON.parse(
        (
          await ask(
            model,
            "executor.thought",
            "",
            `Subtask: ${plan.subtasks[1]}\n\nSteps taken so far:\n(no steps yet)`,
            jsonSchemaOf(Thought),
            { subtask: plan.subtasks[1], excluded: [] }
          )
        ).text
      )
    )
    expect(thought.thought).toContain(second!.name)

    const allowed = task.tools.tools.map((t) => t.name)
    const choice = choiceSchema(allowed)
    const chosen = choice.parse(
      JSON.parse(
        (
          await ask(model, "executor.choose", "", `Subtask: ${plan.subtasks[1]}\n\nThought: x`, jsonSchemaOf(choice), {
            subtask: plan.subtasks[1],
            thought: "x"
          })
        ).text
      )
    )
    expect(chosen.tool).toBe(second!.name)

    const tool = task.tools.tools.find((t) => t.name === second!.name)!
    const args = argsSchema(tool).parse(
      JSON.parse(
        (
          await ask(
            model,
            "executor.args",
            "",
            `Tool: ${tool.name}\nSubtask: ${plan.subtasks[1]}`,
            jsonSchemaOf(tool.parameters),
            { tool: tool.name, subtask: plan.subtasks[1] }
          )
        ).text
      )
    )
    expect(tool.parameters.safeParse(args).success).toBe(true)
    expect(args).toMatchObject({ part_slug: "lionel-messi" })

    const answer = Answer.parse(
      JSON.parse(
        (
          await ask(
            model,
            "answerer.step",
            "",
            'Subtask: x\n\nTool response:\n{"error": "", "response": "Messi plays for PSG"}',
            jsonSchemaOf(Answer),
            { subtask: "x", observation: '{"error": "", "response": "Messi plays for PSG"}' }
          )
        ).text
      )
    )
    expect(answer.answer).toContain("Messi plays for PSG")

    const solved = Verdict.parse(
      JSON.parse(
        (
          await ask(model, "verifier", "", `Subtask: x\n\nAnswer: ${answer.answer}`, jsonSchemaOf(Verdict), {
            subtask: "x",
            answer: answer.answer
          })
        ).text
      )
    )
    expect(solved.status).toBe("solved")
    const empty = Answer.parse(
      JSON.parse(
        (
          await ask(
            model,
            "answerer.step",
            "",
            'Subtask: x\n\nTool response:\n{"error": "timeout", "response": ""}',
            jsonSchemaOf(Answer),
            { subtask: "x", observation: '{"error": "timeout", "response": ""}' }
          )
        ).text
      )
    )
    const pending = Verdict.parse(
      JSON.parse(
        (
          await ask(model, "verifier", "", `Subtask: x\n\nAnswer: ${empty.answer}`, jsonSchemaOf(Verdict), {
            subtask: "x",
            answer: empty.answer
          })
        ).text
      )
    )
    expect(pending.status).toBe("pending")
    expect(pending.hint).toBeTruthy()

    // any other schema: a valid instance of it
    const Other = z.object({
      items: z.array(z.object({ n: z.number().int().min(3), tag: z.enum(["a", "b"]) })).min(2),
      note: z.string().max(5).optional()
    })
    expect(
      Other.safeParse(JSON.parse((await ask(model, "something.else", "", "hi", jsonSchemaOf(Other))).text)).success
    ).toBe(true)
  })

  it("runs the Smurfs pipeline on a real task to a final answer, calling the relevant APIs with recorded arguments", async () => {
    const model = sim("sim")
    const trajectory = await solve(model, smurfs())
    expect(trajectory.finishType).toBe("give_answer")
    expect(trajectory.finalAnswer).toContain("Lionel Messi")
    const toolCalls = trajectory.events.filter((e) => isKind(e, "tool_call")).map((e) => e.data)
    expect(toolCalls.map((c) => c["tool"])).toEqual(relevantNames())
    expect(toolCalls.every((c) => c["ok"] === true)).toBe(true)
    expect(trajectory.totals.guardrails).toEqual({})
    expect(model.stats.calls).toBe(trajectory.totals.modelCalls)
  })

  it("runs Smurfs with the fused executor (native calls or JSON) in fewer calls, to the same tools and answer", async () => {
    // both loops with the Answer agent on every step, so that the count compares the executors alone
    const three = await solve(sim("sim"), smurfs(paperLoop()))
    const fused = { executor: "fused", rules: { answerShortResponses: undefined } } as const
    for (const [spec, toolCalling] of [
      ["sim", "native"],
      ["sim:tools=json", "auto"]
    ] as const) {
      const model = sim(spec)
      const trajectory = await solve(model, smurfs({ ...fused, toolCalling }))
      expect(trajectory.finishType).toBe("give_answer")
      expect(trajectory.finalAnswer).toBe(three.finalAnswer)
      const toolCalls = trajectory.events.filter((e) => isKind(e, "tool_call")).map((e) => e.data)
      expect(toolCalls.map((c) => c["tool"])).toEqual(relevantNames())
      expect(toolCalls.every((c) => c["ok"] === true)).toBe(true)
      expect(trajectory.totals.guardrails).toEqual({})
      const roles = trajectory.events.filter((e) => isKind(e, "model_call")).map((e) => e.data["role"])
      // per step: one executor request and one answer+verdict request, in place of five
      expect(roles.filter((r) => r === "executor.fused")).toHaveLength(relevantNames().length)
      expect(roles.filter((r) => r === "answerer.verify")).toHaveLength(relevantNames().length)
      expect(trajectory.totals.modelCalls).toBe(three.totals.modelCalls - 3 * relevantNames().length)
    }
  })

  it("sends faults into the fused executor's reply, which its guardrails reflect", async () => {
    const trajectory = await solve(sim("sim:unknown_tool=1,seed=3"), smurfs({ executor: "fused", maxModelCalls: 12 }))
    const guardrails = trajectory.events.filter((e) => isKind(e, "guardrail")).map((e) => e.data)
    expect(guardrails.some((g) => g["role"] === "executor.fused" && g["guardrail"] === "unknown_tool")).toBe(true)
  })

  it("drives ReAct and DFSDT with native tool calls, and with the JSON format when the model has no tool calling", async () => {
    for (const spec of ["sim", "sim:tools=json"]) {
      for (const method of [react(), dfsdt()]) {
        const trajectory = await solve(sim(spec), method)
        expect(trajectory.finishType).toBe("give_answer")
        const tools = trajectory.events.filter((e) => isKind(e, "tool_call")).map((e) => e.data["tool"])
        expect(tools).toEqual(relevantNames())
        expect(trajectory.totals.modelCalls).toBe(relevantNames().length + 1)
        expect(trajectory.totals.guardrails).toEqual({})
      }
    }
  })

  it("records every event with its kind's data and the model spec, one Trajectory shape for every method", async () => {
    for (const spec of ["sim", "sim:tools=json,fault=0.3,seed=5"]) {
      for (const method of [smurfs(), react(), dfsdt()]) {
        const trajectory = await solve(sim(spec), method)
        expect(Trajectory.safeParse(trajectory).error).toBeUndefined()
        expect(trajectory.model).toBe(spec)
        for (const event of trajectory.events) {
          const kind = EventKind.parse(kindOf(event))
          const schema = EventData[kind] as z.ZodObject
          expect({ kind, error: schema.safeParse(event.data).error }).toEqual({ kind, error: undefined })
          // no field the kind's schema does not know
          expect(Object.keys(event.data).filter((k) => !(k in schema.shape))).toEqual([])
        }
      }
    }
  })

  it("reads the task from the calling fiber: without one it still answers validly, with generic choices", async () => {
    const model = sim("sim")
    const reply = await Effect.runPromise(
      model.model.generate({
        role: "planner",
        messages: [{ role: "user", content: "Question: what is up?", values: { query: "what is up?" } }],
        format: jsonSchemaOf(Plan)
      })
    )
    expect(Plan.parse(JSON.parse(reply.text)).subtasks).toEqual(["what is up?"])
    const withTask = await Effect.runPromise(
      Effect.provideService(
        model.model.generate({
          role: "planner",
          messages: [{ role: "user", content: "Question: what is up?", values: { query: "what is up?" } }],
          format: jsonSchemaOf(Plan)
        }),
        CurrentTask,
        query
      )
    )
    expect(Plan.parse(JSON.parse(withTask.text)).subtasks).toHaveLength(2)
  })

  it("without a CurrentTask, recognizes a ToolBench task from the query its prompts quote", async () => {
    const trajectory = await Effect.runPromise(
      smurfs()(task).pipe(Effect.provideService(LanguageModel, sim("sim").model))
    )
    expect(trajectory.finishType).toBe("give_answer")
    expect(trajectory.events.filter((e) => isKind(e, "tool_call")).map((e) => e.data["tool"])).toEqual(relevantNames())
  })

  it("injects seeded faults: the same seed gives the same faults and replies, another seed others", async () => {
    const replies = async (spec: string) => {
      const model = sim(spec)
      const trajectory = await solve(model, smurfs())
      return {
        replies: trajectory.events.filter((e) => isKind(e, "model_call")).map((e) => e.data["reply"]),
        faults: model.stats.faults,
        guardrails: trajectory.totals.guardrails
      }
    }
    const a = await replies("sim:fault=0.3,seed=7")
    const b = await replies("sim:fault=0.3,seed=7")
    const c = await replies("sim:fault=0.3,seed=8")
    expect(b).toEqual(a)
    expect(Object.values(a.faults).reduce((x, y) => x + y, 0)).toBeGreaterThan(0)
    expect(Object.keys(a.guardrails).length).toBeGreaterThan(0)
    expect(c.replies).not.toEqual(a.replies)
  })

  it("sends its injected faults as they are, not repaired by the schema", async () => {
    const allowed = task.tools.tools.map((t) => t.name)
    const choice = choiceSchema(allowed)
    const [, second] = simTaskOf(query, readRecordings(DATA)).apis
    const unknown = choice.parse(
      JSON.parse(
        (
          await ask(
            sim("sim:unknown_tool=1"),
            "executor.choose",
            "",
            `Subtask: ${subtaskFor(second!)}`,
            jsonSchemaOf(choice),
            { subtask: subtaskFor(second!) }
          )
        ).text
      )
    )
    expect(allowed).not.toContain(unknown.tool)
    const tool = task.tools.tools.find((t) => t.name === second!.name)!
    const model = sim("sim:wrong_args=1,seed=3")
    for (const user of [
      `Tool: ${tool.name}`,
      `Tool: ${tool.name}\nSubtask: again`,
      `Tool: ${tool.name}\nSubtask: once more`
    ]) {
      const args = JSON.parse(
        (
          await ask(model, "executor.args", "", user, jsonSchemaOf(tool.parameters), {
            tool: tool.name,
            subtask: user.split("Subtask: ")[1]
          })
        ).text
      ) as Record<string, unknown>
      const declared = Object.keys(tool.parameters.shape)
      const undeclared = Object.keys(args).filter((k) => !declared.includes(k))
      expect(undeclared.length > 0 || !tool.parameters.safeParse(args).success).toBe(true)
    }
    const refused = await ask(sim("sim:refusal=1"), "planner", "", "Question: hi", jsonSchemaOf(Plan), { query: "hi" })
    expect(
      Plan.safeParse(
        (() => {
          try {
            return JSON.parse(refused.text)
          } catch {
            return undefined
          }
        })()
      ).success
    ).toBe(false)
  })

  it("gives equal prompts equal replies whatever the current task, as caches expect of a model at temperature 0", async () => {
    const model = sim("sim")
    const other = { ...query, id: "other", relevant: [query.relevant[1]!] }
    const tool = task.tools.tools.find((t) => t.name !== relevantNames()[0] && t.name !== relevantNames()[1])!
    const request = {
      role: "executor.args",
      messages: [{ role: "user" as const, content: `Tool: ${tool.name}`, values: { tool: tool.name } }],
      format: jsonSchemaOf(tool.parameters)
    }
    const a = await Effect.runPromise(withCurrentTask(query)(model.model.generate(request)))
    const b = await Effect.runPromise(withCurrentTask(other)(model.model.generate(request)))
    expect(b.text).toBe(a.text)
  })

  it("reads what a prompt was rendered from (its values), never its wording", async () => {
    const model = sim("sim")
    const tool = task.tools.tools.find((t) => t.name === simTaskOf(query, readRecordings(DATA)).apis[1]!.name)!
    const format = jsonSchemaOf(tool.parameters)
    const labelled = JSON.parse(
      (await ask(model, "executor.args", "", `Tool: ${tool.name}`, format, { tool: tool.name })).text
    )
    const reworded = JSON.parse(
      (await ask(model, "executor.args", "", `Werkzeug -> ${tool.name}`, format, { tool: tool.name })).text
    )
    const proseOnly = JSON.parse((await ask(model, "executor.args", "", `Tool: ${tool.name}`, format)).text)
    expect(labelled).toMatchObject({ part_slug: "lionel-messi" })
    expect(reworded).toEqual(labelled)
    expect(proseOnly).not.toEqual(labelled)
  })

  it("takes another action than the diversity prompt's candidates (DFSDT)", async () => {
    const [first, second] = relevantNames()
    const tools = task.tools.tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: jsonSchemaOf(t.parameters)
    }))
    const step = (candidates?: Array<string>) =>
      Effect.runPromise(
        withCurrentTask(query)(
          sim("sim").model.generate({
            role: "dfsdt.step",
            messages: [
              { role: "user", content: query.query, values: { query: query.query } },
              ...(candidates ? [{ role: "user" as const, content: "diversity", values: { candidates } }] : [])
            ],
            tools
          })
        )
      )
    expect((await step()).toolCalls?.[0]?.name).toBe(first)
    expect((await step([first!])).toolCalls?.[0]?.name).toBe(second)
  })

  it("draws faults at the configured rate, only of kinds that fit the call", () => {
    let seed = 1
    const rng = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646
    const counts: Record<string, number> = {}
    const n = 20_000
    for (let i = 0; i < n; i++) {
      const kind = drawFault(
        { fault: 0.2, faults: { malformed: 0, unknown_tool: 0, wrong_args: 0.1, refusal: 0 } },
        { tool: false, args: true },
        rng
      )
      counts[kind ?? "none"] = (counts[kind ?? "none"] ?? 0) + 1
    }
    expect(counts["unknown_tool"]).toBeUndefined()
    expect((n - counts["none"]!) / n).toBeCloseTo(0.3, 1)
    expect(counts["wrong_args"]! / n).toBeCloseTo(0.2 / 3 + 0.1, 1)
  })

  it("parses its spec, and rejects unknown options with the valid keys", async () => {
    const parsed = parseSimSpec("sim:latency=100ms,per_token=0.1ms,fault=10%,seed=7,refusal=0.05,tools=json")
    expect("options" in parsed && parsed.options).toMatchObject({
      latencyMs: 100,
      promptTokenMs: 0.1,
      completionTokenMs: 0.1,
      fault: 0.1,
      seed: 7,
      tools: false
    })
    expect("options" in parsed && parsed.options.faults.refusal).toBe(0.05)
    const bad = parseSimSpec("sim:latncy=5ms")
    expect("error" in bad && bad.error.message).toContain("latency")
    expect("error" in parseSimSpec("sim:fault=2")).toBe(true)
    const exit = await Effect.runPromise(
      Effect.exit(Layer.build(simModelLayer("sim:data=/no/such/dir")).pipe(Effect.scoped))
    )
    expect(exit._tag).toBe("Failure")
  })

  it("sleeps the simulated latency per call and per token", async () => {
    const model = sim("sim:latency=2ms,per_token=0.001ms")
    await ask(model, "planner", "", `Question: ${query.query}`, jsonSchemaOf(Plan), { query: query.query })
    expect(model.stats.sleptMs).toBeCloseTo(2 + (model.stats.promptTokens + model.stats.completionTokens) * 0.001, 6)
  })

  it("tells a tool response with content from an error or an empty one", () => {
    expect(contentOf('{"error": "", "response": "ok"}')).toBe("ok")
    expect(contentOf('{"error": "boom", "response": ""}')).toBeUndefined()
    expect(contentOf('{"error": "", "response": []}')).toBeUndefined()
    expect(contentOf("")).toBeUndefined()
    expect(contentOf("plain text")).toBe("plain text")
  })
})
