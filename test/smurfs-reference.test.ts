// Smurfs under --profile reference, with a stand-in checkout of the authors' code (texts of our own).
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { chainProfileOptions, checkProfile, smurfsProfileOptions } from "../src/agents/profile.ts"
import { react } from "../src/agents/react.ts"
import { smurfs } from "../src/agents/smurfs.ts"
import { readSmurfsSource } from "../src/agents/smurfs-source.ts"
import type { Task } from "../src/agents/task.ts"
import type { GenerateRequest } from "../src/llm/language-model.ts"
import { type Script, scriptedLayer } from "../src/llm/scripted.ts"
import { modelLayer } from "../src/llm/spec.ts"
import type { Tool } from "../src/tools/tool.ts"
import { convertedAnswerOf } from "../src/trace/converters/stabletoolbench.ts"
import { isKind } from "../src/trace/events.ts"
import { startFakeOllama } from "./fake-servers/ollama.ts"

const CHECKOUT = fileURLToPath(new URL("./fixtures/smurfs-src", import.meta.url))

const weather: Tool = {
  name: "weather",
  description: "Weather of a city",
  parameters: z.object({ city: z.string() }),
  call: (args) =>
    Effect.succeed(
      args["city"] === "Paris"
        ? { ok: true, content: "Sunny in Paris" }
        : { ok: false, content: "", error: "no data for that city" }
    )
}
const broken: Tool = {
  name: "broken",
  description: "Never works",
  parameters: z.object({ q: z.string() }),
  call: () => Effect.succeed({ ok: false, content: "", error: "boom" })
}
const task: Task = {
  id: "t1",
  query: "What is the weather in Paris and in Rome?",
  tools: { name: "meteo", tools: [weather, broken] }
}

/** Run Smurfs under the reference profile with per-role scripts, recording every request. */
const runReference = (script: Record<string, Array<unknown>>) => {
  const requests: Array<GenerateRequest> = []
  const recorded: Script = Object.fromEntries(
    Object.entries(script).map(([role, replies]) => [
      role,
      replies.map((reply) => (request: GenerateRequest) => (requests.push(request), reply as string))
    ])
  )
  const options = { reportUnavailable: false, ...smurfsProfileOptions("reference", CHECKOUT) }
  return Effect.runPromise(smurfs(options)(task).pipe(Effect.provide(scriptedLayer(recorded)))).then((trajectory) => ({
    trajectory,
    requests
  }))
}

describe("Smurfs under the reference profile", () => {
  it("sends the checkout's texts filled at 0.95, reads free-text replies as the authors' code does, answers an exhausted subtask in their Sorry form and converts only the accepted path", async () => {
    const { trajectory, requests } = await runReference({
      planner: ['Plan: {"Tasks": ["Weather in Paris", "Weather in Rome"]} -- end'],
      "executor.thought": ["I look it up.", "Try the weather tool.", "Try again.", "Last try."],
      // a Python-style dict and an ID as text are read as their eval and int() read them
      "executor.choose": [
        '{"ID": 1, "Reason": "try it"}',
        "{'ID': '0', 'Reason': 'weather'}",
        '{"ID": 1, "Reason": "r"}',
        '{"ID": 0, "Reason": "r"}'
      ],
      "executor.args": ['{"q": "x"}', "Arguments: {'city': 'Paris'}", '{"q": "y"}', '{"city": "Rome"}'],
      "answerer.step": ["Paris is sunny."],
      verifier: ['{"Speak": "Paris is sunny.", "Status": "1"}'],
      "answerer.subtask": ["Nothing found for Rome."],
      "answerer.final": ["Paris is sunny; Rome is unknown."]
    })
    expect(trajectory.finishType).toBe("give_answer")
    expect(trajectory.finalAnswer).toBe("Paris is sunny; Rome is unknown.")
    // every request: their vLLM client's system text (Smurfs/model/base.py), then one user message of the
    // checkout's text, placeholders filled, at their temperature
    for (const r of requests) {
      expect(r.options?.temperature).toBe(0.95)
      expect(r.messages.map((m) => m.role)).toEqual(["system", "user"])
      expect(r.messages[0]!.content).toBe("STAND-IN system text: you are a test agent with tools.")
      expect(r.messages[1]!.content).toMatch(/STAND-IN/)
      expect(r.messages[1]!.content).not.toMatch(
        /\{(question|tool_list|previous_log|hint|api_dic|call_result|answer)\}/
      )
    }
    const of = (role: string) => requests.filter((r) => r.role === role).map((r) => r.messages[1]!.content)
    expect(of("planner")[0]).toContain(`STAND-IN PLANNER`)
    expect(of("planner")[0]).toContain(`Question: ${task.query}`)
    expect(of("planner")[0]).toContain('{"Tasks": ["step one", "step two"]}')
    expect(of("executor.thought")[0]).toContain("Task: question: Weather in Paris\n")
    expect(of("executor.thought")[0]).toContain("Hint: STAND-IN no hint yet")
    expect(of("executor.thought")[0]).toContain("So far: STAND-IN no log yet")
    expect(of("executor.thought")[0]).toContain(
      "[{'ID': '0', 'tool_name': 'weather', 'description': 'Weather of a city'}, {'ID': '1'"
    )
    // the failed tool is no longer listed at this step
    expect(of("executor.thought")[1]).not.toContain("'ID': '1'")
    expect(of("executor.choose")[0]).toContain("Question: Weather in Paristhought: I look it up.\n")
    expect(of("executor.args")[1]).toContain("Doc: {'ID': 0, 'tool_name': 'weather'")
    expect(of("answerer.step")[0]).toContain(
      `Response: [{'thought': 'Try the weather tool.', 'observation': '{"error": "", "response": "Sunny in Paris"}'}]`
    )
    expect(of("verifier")[0]).toContain("Answer: Paris is sunny.\nQuestion: Weather in Paris")
    // the second subtask's question carries the first one's answer (their task_log)
    expect(of("executor.thought")[2]).toContain(
      "question: Weather in Paris\nanswer: Paris is sunny.\nquestion: Weather in Rome\n"
    )
    expect(of("answerer.final")[0]).toContain(`Question: ${task.query}`)
    // every tool failed at the root of the second subtask: their Sorry form around the partial answer
    const answered = trajectory.events.filter((e) => isKind(e, "subtask_answered")).map((e) => String(e.data["answer"]))
    expect(answered[0]).toBe("Paris is sunny.")
    expect(answered[1]).toBe("Sorry (stand-in), the tools failed. Partial: Nothing found for Rome.")
    // the converted answer: the accepted path only (no failed call), the full response JSON, then Finish; the final answer plain
    const converted = convertedAnswerOf(trajectory)
    expect(converted.final_answer).toBe("Paris is sunny; Rome is unknown.")
    const nodes: Array<{ role: string; message: unknown }> = []
    for (let n = converted.answer_details[0]; n; n = n.next[0]) nodes.push(n)
    const tools = nodes
      .filter((n) => n.role === "tool")
      .map((n) => n.message as { name: string; arguments: string; response: string })
    expect(tools.map((t) => t.name)).toEqual(["weather", "Finish"])
    expect(JSON.parse(tools[0]!.response)).toEqual({ error: "", response: "Sunny in Paris" })
    expect(JSON.parse(tools[0]!.arguments)).toEqual({ city: "Paris" })
  })

  it("after four bad tool choices the first remaining tool is taken without a choice, and a failed verifier keeps the previous hint", async () => {
    const { trajectory, requests } = await runReference({
      planner: ['{"Tasks": ["Weather in Paris"]}'],
      "executor.thought": ["t1", "t2", "t3", "t4", "t5", "t6"],
      "executor.choose": ['{"ID": 9}', '{"ID": "x"}', '{"ID": -1}', '{"ID": 2}', '{"ID": 0}'],
      "executor.args": ["{'city': 'Paris'}", "{'city': 'Paris'}"],
      "answerer.step": ["Sunny.", "Sunny again."],
      verifier: [...Array(12).fill("no json at all"), '{"Speak": "ok", "Status": "1"}'],
      "answerer.final": ["Sunny in Paris."]
    })
    expect(trajectory.finalAnswer).toBe("Sunny in Paris.")
    expect(trajectory.events.filter((e) => isKind(e, "subtask_answered")).map((e) => e.data["answer"])).toEqual([
      "Sunny again."
    ])
    const thoughts = requests.filter((r) => r.role === "executor.thought").map((r) => r.messages[1]!.content)
    // the fifth thought sees the first remaining tool alone, as a dict, and no choice is asked for it
    expect(thoughts[4]).toContain("Tools: {'ID': '0', 'tool_name': 'weather', 'description': 'Weather of a city'}")
    expect(requests.filter((r) => r.role === "executor.choose").length).toBe(5)
    // their verifier read 12 replies that did not parse; the step counts and the hint stays the first one
    expect(thoughts[5]).toContain("Hint: STAND-IN no hint yet")
    expect(thoughts[5]).toContain("So far: [{'thought': 't5', 'answer': 'Sunny.'}]")
  })

  it("refuses without the checkout, naming what is missing and where to get it; reads the real variable names", () => {
    expect(() => checkProfile("reference", ["smurfs", "react"], { stb: undefined, smurfsSrc: undefined })).toThrow(
      /FreedomIntelligence\/Smurfs[\s\S]*--smurfs-src[\s\S]*THUNLP-MT\/StableToolBench[\s\S]*--stb/
    )
    expect(() => checkProfile("improved", ["smurfs"], { stb: undefined, smurfsSrc: undefined })).not.toThrow()
    expect(() => readSmurfsSource("/nonexistent/smurfs")).toThrow(
      /Smurfs\/agents\/planning_agent\/prompt\.py: not found[\s\S]*--smurfs-src/
    )
  })

  it("over Ollama, a reference request samples as theirs did (Smurfs 0.95, ReAct 1.0) while the model's default stays 0", async () => {
    const server = await startFakeOllama({
      chat: (body: any) =>
        body.tools
          ? { toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }] }
          : body.messages.at(-1).content.includes("PLANNER")
            ? '{"Tasks": []}'
            : "Sunny."
    })
    try {
      const layer = modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true })
      await Effect.runPromise(
        smurfs({ planner: true, ...smurfsProfileOptions("reference", CHECKOUT) })({
          ...task,
          tools: { name: "none", tools: [] }
        }).pipe(Effect.provide(layer))
      )
      await Effect.runPromise(react(chainProfileOptions("reference"))(task).pipe(Effect.provide(layer)))
      await Effect.runPromise(react({})(task).pipe(Effect.provide(layer)))
      const temperatures = server.chatRequests().map((b: any) => [b.tools ? "react" : "smurfs", b.options.temperature])
      expect(temperatures).toEqual([
        ...temperatures.filter(([m]) => m === "smurfs").map(() => ["smurfs", 0.95]),
        ["react", 1],
        ["react", 0]
      ])
      expect(temperatures.filter(([m]) => m === "smurfs").length).toBeGreaterThan(1)
    } finally {
      await server.close()
    }
  })
})
