// Guards of ours the references lack (Smurfs' model-call budget, the reference planner's 12 attempts): when one,
// not the method, ends a task or its planning, the task's trajectory and record say so and `compare` counts it.
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { describe, expect, it, vi } from "vitest"
import { z } from "zod"
import { judgeInputFromRecord } from "../bench/eval/judge-input.ts"
import { fakeRecord, writeFakeRun } from "../bench/eval/test-fixtures.ts"
import { executeTask } from "../bench/execute-task.ts"
import { collectRows } from "../bench/report/collect.ts"
import { guardLines } from "../bench/report/guards.ts"
import { renderHtml } from "../bench/report/html.ts"
import { smurfsProfileOptions } from "../src/agents/profile.ts"
import { smurfs } from "../src/agents/smurfs.ts"
import { THEIR_ATTEMPTS } from "../src/agents/smurfs-reference.ts"
import type { Task } from "../src/agents/task.ts"
import { run as compare } from "../src/cli/commands/compare.ts"
import { ExitCode } from "../src/cli/exit-codes.ts"
import type { GenerateRequest } from "../src/llm/language-model.ts"
import { type Script, scriptedLayer } from "../src/llm/scripted.ts"
import type { Tool } from "../src/tools/tool.ts"
import { captureConsole } from "./capture-console.ts"

const CHECKOUT = fileURLToPath(new URL("./fixtures/smurfs-src", import.meta.url))

const weather: Tool = {
  name: "weather",
  description: "Weather of a city",
  parameters: z.object({ city: z.string() }),
  call: () => Effect.succeed({ ok: true, content: "Sunny in Paris" })
}
const task: Task = { id: "t1", query: "What is the weather in Paris?", tools: { name: "meteo", tools: [weather] } }

const run = (options: Parameters<typeof smurfs>[0], script: Record<string, Array<string>>) => {
  const roles: Array<string> = []
  const recorded: Script = Object.fromEntries(
    Object.entries(script).map(([role, replies]) => [
      role,
      replies.map((reply) => (request: GenerateRequest) => (roles.push(request.role), reply))
    ])
  )
  return Effect.runPromise(smurfs(options)(task).pipe(Effect.provide(scriptedLayer(recorded)))).then((t) => ({
    trajectory: t,
    roles
  }))
}

const answering = {
  "executor.thought": ["Look it up."],
  "executor.choose": ['{"ID": 0, "Reason": "weather"}'],
  "executor.args": ['{"city": "Paris"}'],
  "answerer.step": ["Sunny in Paris."],
  verifier: ['{"Speak": "Sunny in Paris.", "Status": "1"}'],
  answerer: ["Sunny in Paris."],
  "answerer.final": ["Sunny in Paris."]
}

describe("guards that end a task", () => {
  it("reference: the planner's 12 unreadable replies are our bound, recorded as planner-attempts", async () => {
    const { trajectory, roles } = await run(
      { reportUnavailable: false, ...smurfsProfileOptions("reference", CHECKOUT) },
      { planner: Array.from({ length: THEIR_ATTEMPTS }, () => "no plan here"), ...answering }
    )
    expect(roles.filter((r) => r === "planner")).toHaveLength(THEIR_ATTEMPTS)
    expect(trajectory.guards).toEqual(["planner-attempts"])
    expect(trajectory.finalAnswer).toContain("Sunny")
  })

  it("a plan read at once fires no guard", async () => {
    const { trajectory } = await run(
      { reportUnavailable: false, ...smurfsProfileOptions("reference", CHECKOUT) },
      { planner: ['{"Tasks": ["Weather in Paris"]}'], ...answering }
    )
    expect(trajectory.guards).toBeUndefined()
  })

  it("the model-call budget ending the task is recorded as model-call-budget", async () => {
    const { trajectory } = await run(
      { reportUnavailable: false, maxModelCalls: 2, ...smurfsProfileOptions("reference", CHECKOUT) },
      { planner: ['{"Tasks": ["Weather in Paris", "Weather in Rome"]}'], ...answering }
    )
    expect(trajectory.guards).toEqual(["model-call-budget"])
  })

  it("compare counts the tasks a guard ended, per row and per guard", async () => {
    const dir = await writeFakeRun([
      { taskId: "1", guards: ["model-call-budget"] },
      { taskId: "2", guards: ["planner-attempts", "model-call-budget"] },
      { taskId: "3" },
      { taskId: "1", method: "react" }
    ])
    const rows = collectRows([dir])
    expect(rows.find((r) => r.method === "smurfs")?.guarded).toEqual({
      tasks: 2,
      byGuard: { "model-call-budget": 2, "planner-attempts": 1 }
    })
    expect(rows.find((r) => r.method === "react")?.guarded).toBeUndefined()
    const lines = guardLines(rows)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/smurfs · G1_instruction: 2 of 3 tasks \(model-call-budget 2, planner-attempts 1\)$/)
  })

  it("smurfs compare prints the guarded tasks below the table and gives them in --json", async () => {
    const dir = await writeFakeRun([{ taskId: "1", guards: ["model-call-budget"] }, { taskId: "2" }])
    const printed = captureConsole()
    try {
      expect(await compare([dir])).toBe(ExitCode.Ok)
      expect(await compare([dir, "--json"])).toBe(ExitCode.Ok)
    } finally {
      vi.restoreAllMocks()
    }
    const text = printed.out.join("\n")
    expect(text).toMatch(
      /Ended by a guard of ours, not the method \(docs\/fidelity\.md\):\n {2}.*smurfs · G1_instruction: 1 of 2 tasks \(model-call-budget 1\)/
    )
    const json = JSON.parse(printed.out.at(-1)!) as { rows: Array<{ guarded?: unknown }> }
    expect(json.rows[0]!.guarded).toEqual({ tasks: 1, byGuard: { "model-call-budget": 1 } })
    // and the HTML report has its own section, linked from the top
    const html = renderHtml(collectRows([dir]))
    expect(html).toContain('<a href="#guarded">Ended by a guard</a>')
    expect(html).toMatch(/<section id="guarded"[\s\S]*smurfs · G1_instruction: 1 of 2 tasks \(model-call-budget 1\)/)
    expect(renderHtml(collectRows([await writeFakeRun([{ taskId: "1" }])]))).not.toContain('id="guarded"')
  })

  it("the task record of a bench job says which guard ended it", async () => {
    const options = { reportUnavailable: false, maxModelCalls: 2, ...smurfsProfileOptions("reference", CHECKOUT) }
    const script: Script = { planner: ['{"Tasks": ["Weather in Paris", "Weather in Rome"]}'], ...answering }
    const result = await Effect.runPromise(
      executeTask(
        smurfs(options),
        task,
        {
          method: "smurfs",
          query: { group: "G1_instruction", id: "t1", query: task.query, apiList: [], relevant: [] }
        },
        { modelSpec: "scripted:test", fullTrace: false }
      ).pipe(Effect.provide(scriptedLayer(script)))
    )
    expect(result.kind).toBe("record")
    if (result.kind === "record") expect(result.record.guards).toEqual(["model-call-budget"])
  })

  it("a record's guards reach the judge input's report fields", async () => {
    expect(judgeInputFromRecord(fakeRecord({ taskId: "9", guards: ["planner-attempts"] })).cost.guards).toEqual([
      "planner-attempts"
    ])
  })
})
