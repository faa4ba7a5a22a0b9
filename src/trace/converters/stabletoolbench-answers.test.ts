import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { DATA_EXAMPLE, lacks, skipNote } from "../../../test/data.ts"
import { ConvertedFile } from "./stabletoolbench.ts"
import { convertAnswerFile } from "./stabletoolbench-answers.ts"

const EXAMPLE = `${DATA_EXAMPLE.path}/`
const json = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"))

describe("convertAnswerFile (convert_to_answer_format.py)", () => {
  for (const [dir, method] of [
    ["virtual_chatgpt_cot", "CoT@1"],
    ["virtual_chatgpt_dfs", "DFS_woFilter_w2"]
  ] as const)
    it.skipIf(lacks(DATA_EXAMPLE))(
      `gives StableToolBench's own converted file for the data_example answers of ${dir}${skipNote(DATA_EXAMPLE)}`,
      () => {
        const answers = `${EXAMPLE}answer/${dir}/G1_instruction/`
        const ours: Record<string, unknown> = {}
        for (const file of readdirSync(answers).filter((f) => f.endsWith(".json")))
          ours[file.split("_")[0]!] = convertAnswerFile(method, json(answers + file))
        const theirs = json(`${EXAMPLE}model_predictions_converted/${dir}/G1_instruction.json`)
        expect(Object.keys(ours).sort()).toEqual(["1073", "588", "608"])
        expect(ours).toEqual(theirs)
      }
    )

  it.skipIf(lacks(DATA_EXAMPLE))(
    `keeps a newer run's {type: function} tools as they are, and the reader takes both shapes${skipNote(DATA_EXAMPLE)}`,
    () => {
      const raw = json(`${EXAMPLE}answer/virtual_chatgpt_cot/G1_instruction/1073_CoT@1.json`) as {
        answer_generation: { function: Array<unknown> }
      }
      raw.answer_generation.function = raw.answer_generation.function.map((f) => ({ type: "function", function: f }))
      const converted = convertAnswerFile("CoT@1", raw)
      expect(converted.available_tools[0]).toHaveProperty("type", "function")
      const read = ConvertedFile.parse({ "1073": converted })
      expect(read["1073"]!.available_tools.map((t) => t.name)).toContain("Finish")
    }
  )

  it("converts tool_calls replies: one tool node per call with the answering tool message, Finish without a response", () => {
    const converted = convertAnswerFile("CoT@1", {
      answer_generation: {
        valid_data: true,
        final_answer: '{"return_type": "give_answer", "final_answer": "2"}',
        function: [],
        query: "q",
        train_messages: [
          [
            { role: "system", content: "s" },
            { role: "user", content: "u" },
            {
              role: "assistant",
              content: "I call both",
              tool_calls: [
                { id: "a", function: { name: "f", arguments: "{}" } },
                { id: "b", function: { name: "g", arguments: "{}" } }
              ]
            },
            { role: "tool", tool_call_id: "a", content: "ra" },
            { role: "tool", tool_call_id: "b", content: "rb" },
            { role: "assistant", content: "So it is 2." },
            {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "c", function: { name: "Finish", arguments: "{}" } }]
            }
          ]
        ]
      }
    })
    const flat: Array<unknown> = []
    for (let n = converted.answer.answer_details[0]; n; n = n.next[0]) flat.push(n.role === "tool" ? n.message : n.role)
    expect(flat).toEqual([
      "system",
      "user",
      { name: "f", arguments: "{}", response: "ra" },
      { name: "g", arguments: "{}", response: "rb" },
      "assistant",
      { name: "Finish", arguments: "{}", response: "" }
    ])
    expect(converted.answer.total_steps).toBe(6)
  })
})
