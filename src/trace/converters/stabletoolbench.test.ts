import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { type AnswerNode, availableTool, type ConvertibleRun, readConverted, toConverted } from "./stabletoolbench.ts"

const finish = {
  name: "Finish",
  description: "finish",
  parameters: { type: "object", properties: { return_type: { type: "string" } }, required: ["return_type"] }
}
const lookup = {
  name: "lookup_for_db",
  description: "Look up",
  parameters: {
    type: "object",
    properties: { key: { type: "string" }, page: { type: "integer" } },
    required: ["key"],
    additionalProperties: false
  }
}

const flatten = (nodes: ReadonlyArray<AnswerNode>): Array<AnswerNode> => nodes.flatMap((n) => [n, ...flatten(n.next)])

const smurfsRun = (finishType: "give_answer" | "give_up"): ConvertibleRun => ({
  taskId: "7",
  method: "smurfs",
  query: "What is under key a?",
  finalAnswer: finishType === "give_answer" ? "a is 1" : "",
  finishType,
  events: [
    { type: "smurfs.plan", data: { subtasks: ["look up a"] } },
    { type: "smurfs.thought", data: { thought: "look up a" } },
    {
      type: "smurfs.tool_call",
      data: { tool: "lookup_for_db", args: { key: "a" }, ok: true, content: '{"error": "", "response": "1"}' }
    },
    { type: finishType === "give_answer" ? "smurfs.final_answer" : "smurfs.give_up", data: { answer: "a is 1" } }
  ]
})

describe("toConverted", () => {
  it("writes a method without a recorded chain from its thoughts and tool calls, ending in a Finish call", () => {
    const converted = toConverted(smurfsRun("give_answer"), [lookup], finish)
    const nodes = flatten(converted.answer.answer_details)
    // as convert_to_answer_format.py writes an answered run: no text node beside a call, one Finish node with the answer
    expect(nodes.map((n) => n.role)).toEqual(["system", "user", "tool", "tool"])
    expect(nodes[2]!.message).toEqual({
      name: "lookup_for_db",
      arguments: '{\n  "key": "a"\n}',
      response: '{"error": "", "response": "1"}'
    })
    expect(nodes[3]!.message).toMatchObject({ name: "Finish", response: "" })
    expect(JSON.parse((nodes[3]!.message as { arguments: string }).arguments)).toEqual({
      return_type: "give_answer",
      final_answer: "a is 1"
    })
    expect(converted.answer.total_steps).toBe(4)
    expect(converted.answer.method).toBe("smurfs")
    expect(JSON.parse(converted.answer.final_answer)).toEqual({ return_type: "give_answer", final_answer: "a is 1" })
  })

  it("leaves a give-up without a Finish answer and with an empty final_answer", () => {
    const converted = toConverted(smurfsRun("give_up"), [lookup], finish)
    const nodes = flatten(converted.answer.answer_details)
    expect(nodes.at(-1)!.message).toMatchObject({ name: "lookup_for_db" })
    expect(converted.answer.final_answer).toBe("")
    // a run without an answer is written from its tree, where the text before a call is a thought node
    expect(nodes.map((n) => n.role)).toEqual(["system", "user", "assistant", "tool"])
  })

  it("writes a baseline's reply without a call as an assistant node, and drops the text beside a call when answered", () => {
    const chain = [
      { thought: "hmm", tool: "", arguments: "", response: "" },
      { thought: "look up", tool: "lookup_for_db", arguments: "{}", response: "r" },
      { thought: "done", tool: "Finish", arguments: "{}", response: "" }
    ]
    const run: ConvertibleRun = {
      ...smurfsRun("give_answer"),
      events: [{ type: "dev.smurfs.final_answer", data: { answer: "a is 1", chain, method: "CoT@1" } }]
    }
    const nodes = flatten(toConverted(run, [lookup], finish).answer.answer_details)
    expect(
      nodes.map((n) => (n.role === "tool" ? (n.message as { name: string }).name : `${n.role}:${String(n.message)}`))
    ).toEqual(["system:", "user:", "assistant:hmm", "lookup_for_db", "Finish"])
  })

  it("lists tools in StableToolBench's shape: optional names for API functions, Finish last and without them", () => {
    const converted = toConverted(smurfsRun("give_answer"), [lookup], finish)
    expect(converted.available_tools.map((t) => t.name)).toEqual(["lookup_for_db", "Finish"])
    expect(converted.available_tools[0]!.parameters).toEqual({
      type: "object",
      properties: lookup.parameters.properties,
      required: ["key"],
      optional: ["page"]
    })
    expect(availableTool(finish).parameters).not.toHaveProperty("optional")
  })
})

describe("readConverted", () => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-conv-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("reads back what the converter writes", async () => {
    const file = join(dir, "ok.json")
    writeFileSync(file, JSON.stringify({ "7": toConverted(smurfsRun("give_answer"), [lookup], finish) }))
    const read = await Effect.runPromise(readConverted(file))
    expect(read["7"]!.answer.total_steps).toBe(4)
  })

  it("fails with the path and what is wrong for a missing or malformed file", async () => {
    const missing = await Effect.runPromiseExit(readConverted(join(dir, "nope.json")))
    expect(Exit.isFailure(missing) && JSON.stringify(missing.cause)).toContain("ConvertedFormatError")
    const bad = join(dir, "bad.json")
    writeFileSync(bad, JSON.stringify({ "1": { query: "q" } }))
    const malformed = await Effect.runPromiseExit(readConverted(bad))
    expect(Exit.isFailure(malformed)).toBe(true)
    const error = Exit.isFailure(malformed)
      ? (malformed.cause as unknown as { reasons: Array<{ error: Error }> }).reasons[0]!.error
      : undefined
    expect(error?.message).toContain(bad)
    expect(error?.message).toContain("available_tools")
  })
})
