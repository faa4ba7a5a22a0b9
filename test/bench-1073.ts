// Test helper: `smurfs bench` of one react task, query 1073 of the mini data's G1_instruction, whose tool has recorded
// responses for some arguments only: the command's arguments, scripted models that call that tool, and the record.
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { MINI_DATA } from "./data.ts"

/** Query 1073's tool. */
export const CALL_1073 = "popularsitesforquery_for_keyword_analysis"

/** `smurfs bench` arguments of query 1073 alone, by react, with `model`, into `out`. */
export const bench1073 = (model: string, out: string, data: string = MINI_DATA.path): Array<string> => [
  "--data",
  data,
  "--group",
  "G1_instruction",
  "--method",
  "react",
  "--ids",
  "1073",
  "--model",
  model,
  "--out",
  out
]

/** The model under test calls query 1073's tool with arguments nothing recorded, then answers. */
export const UNRECORDED_CALL = {
  $cycle: true,
  react: [
    { text: "Look it up.", toolCalls: [{ name: CALL_1073, arguments: { q: "zzz unrecorded" } }] },
    {
      text: "Done.",
      toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "Popular sites: zzz.com" } }]
    }
  ]
}

/** A simulator model that answers every call. */
export const ANSWERING_SIMULATOR = {
  $cycle: true,
  "tool.simulate": [{ error: "", response: "zzz.com is the most popular site" }]
}

/** Write `value` as JSON to `dir/name` (a scripted model's file); returns its path. */
export const writeScript = (dir: string, name: string, value: object): string => {
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify(value))
  return file
}

export interface ToolCallData {
  readonly [key: string]: unknown
}

/** The react record of query 1073 in run directory `out`. */
export const record1073 = (out: string) =>
  JSON.parse(readFileSync(join(out, "tasks", "react", "G1_instruction", "1073.json"), "utf8"))

/** The data of the tool calls of that record, in order. */
export const toolCalls1073 = (out: string): Array<ToolCallData> =>
  (record1073(out).events as Array<{ type: string; data: ToolCallData }>)
    .filter((e) => e.type.endsWith("tool_call"))
    .map((e) => e.data)
