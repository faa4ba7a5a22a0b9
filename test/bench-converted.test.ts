// Our converted predictions for StableToolBench's three example tasks, side by side with their own file.
import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { loadQueries } from "../bench/datasets.ts"
import { taskOf } from "../bench/tasks.ts"
import { baselinePrompts } from "../src/agents/baseline-prompts.ts"
import { dfsdt } from "../src/agents/dfsdt.ts"
import { finishSpec } from "../src/agents/finish.ts"
import { react } from "../src/agents/react.ts"
import type { GenerateRequest } from "../src/llm/language-model.ts"
import { scriptedLayer } from "../src/llm/scripted.ts"
import { makeOfflineEnvironment } from "../src/tools/environments/offline.ts"
import { toolSpecs } from "../src/tools/library.ts"
import { toolbenchLibrary } from "../src/tools/toolbench/adapter.ts"
import type { ApiDocInput } from "../src/tools/toolbench/api-doc.ts"
import {
  type AnswerNode,
  type ConvertedFile,
  readConverted,
  toConverted
} from "../src/trace/converters/stabletoolbench.ts"
import { DATA_EXAMPLE, lacks, MINI_DATA, STB_CHECKOUT, skipNote } from "./data.ts"

const DATA = MINI_DATA.path
const EXAMPLE = `${DATA_EXAMPLE.path}/model_predictions_converted/`

/** Call the task's first function, then answer (dfsdt: call it twice, give up, then answer from the first call's state). */
const script = (giveUpFirst: boolean) => {
  let n = 0
  const first = (r: GenerateRequest) => ({
    toolCalls: [{ name: r.tools![0]!.name, arguments: {} }],
    text: "Let me call the first function."
  })
  const answer = () => ({
    toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "Here you are." } }],
    text: "Done."
  })
  const giveUp = () => ({ toolCalls: [{ name: "Finish", arguments: { return_type: "give_up_and_restart" } }] })
  const plan = giveUpFirst ? [first, first, giveUp, answer] : [first, answer]
  return { $cycle: true, "*": [(r: GenerateRequest) => plan[n++ % plan.length]!(r)] }
}

// StableToolBench's own texts (the Finish description in available_tools) come from their files, as with --stb.
const prompts = baselinePrompts(lacks(STB_CHECKOUT) ? undefined : STB_CHECKOUT.path)

const convert = async (method: "react" | "dfsdt") => {
  const queries = await Effect.runPromise(
    loadQueries({ dir: DATA, groups: ["G1_instruction"], ids: ["1073", "588", "608"] })
  )
  const env = makeOfflineEnvironment()
  const file: ConvertedFile = {}
  for (const query of queries) {
    const task = taskOf(query, "all", (name, docs) => toolbenchLibrary(name, docs as ReadonlyArray<ApiDocInput>, env))
    const run = method === "react" ? react({ prompts }) : dfsdt({ prompts })
    const trajectory = await Effect.runPromise(
      run(task).pipe(Effect.provide(scriptedLayer(script(method === "dfsdt") as never)))
    )
    file[query.id] = toConverted({ ...trajectory, method }, toolSpecs(task.tools), finishSpec(prompts))
  }
  return file
}

const keysDeep = (node: AnswerNode): Array<string> => [
  Object.keys(node).sort().join(","),
  ...node.next.flatMap(keysDeep)
]
const chain = (node: AnswerNode): Array<AnswerNode> => [node, ...(node.next[0] ? chain(node.next[0]) : [])]
const roles = (node: AnswerNode): Array<string> => chain(node).map((n) => n.role)
const count = (nodes: ReadonlyArray<AnswerNode>): number => nodes.reduce((n, node) => n + 1 + count(node.next), 0)
const last = (node: AnswerNode): AnswerNode => (node.next[0] ? last(node.next[0]) : node)

describe.skipIf(lacks(DATA_EXAMPLE, STB_CHECKOUT))(
  `StableToolBench converted format${skipNote(DATA_EXAMPLE, STB_CHECKOUT)}`,
  () => {
    for (const [method, theirsDir, methodName] of [
      ["react", "virtual_chatgpt_cot", "CoT@1"],
      ["dfsdt", "virtual_chatgpt_dfs", "DFS_woFilter_w2"]
    ] as const)
      it(`${method}: same queries, keys, nesting and available_tools as StableToolBench's ${theirsDir}`, async () => {
        const theirs = await Effect.runPromise(readConverted(`${EXAMPLE}${theirsDir}/G1_instruction.json`))
        const rawTheirs = JSON.parse(readFileSync(`${EXAMPLE}${theirsDir}/G1_instruction.json`, "utf8")) as Record<
          string,
          Record<string, unknown>
        >
        const ours = await convert(method)
        // what we write round-trips through the reader other tools use
        const roundTrip = JSON.parse(JSON.stringify(ours)) as unknown
        expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort())
        for (const id of Object.keys(theirs)) {
          const o = ours[id]!
          const t = theirs[id]!
          expect(Object.keys(o).sort()).toEqual(Object.keys(rawTheirs[id]!).sort())
          expect(Object.keys(o.answer).sort()).toEqual(Object.keys(t.answer).sort())
          expect(o.query).toBe(t.query)
          expect(o.answer.method).toBe(methodName)
          // available tools: same functions in the same order, same JSON Schema shape, Finish included
          expect(o.available_tools).toEqual(t.available_tools)
          // answer_details: one root chain system -> user -> ..., every node {role, message, next}, ending in Finish
          expect(o.answer.answer_details).toHaveLength(1)
          expect(roles(o.answer.answer_details[0]!).slice(0, 2)).toEqual(["system", "user"])
          expect(new Set(keysDeep(o.answer.answer_details[0]!))).toEqual(new Set(["message,next,role"]))
          const end = last(o.answer.answer_details[0]!)
          expect(end.role).toBe("tool")
          expect(Object.keys(end.message).sort()).toEqual(["arguments", "name", "response"])
          expect(end.message).toMatchObject({ name: "Finish", response: "" })
          expect(o.answer.total_steps).toBe(count(o.answer.answer_details))
          expect(JSON.parse(o.answer.final_answer)).toEqual({
            return_type: "give_answer",
            final_answer: "Here you are."
          })
          // a tool step carries the function's response as StableToolBench's {"error", "response"} text
          const toolNode = chain(o.answer.answer_details[0]!).find((n) => n.role === "tool")!
          expect((toolNode.message as { name: string }).name).not.toBe("Finish")
          expect(JSON.parse((toolNode.message as { response: string }).response)).toHaveProperty("error")
        }
        expect(Object.keys(roundTrip as object)).toHaveLength(3)
      })
  }
)
