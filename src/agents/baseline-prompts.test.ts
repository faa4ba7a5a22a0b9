import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { lacks, STB_CHECKOUT, skipNote } from "../../test/data.ts"
import type { GenerateRequest } from "../llm/language-model.ts"
import { type Script, scriptedLayer } from "../llm/scripted.ts"
import { loadTemplate } from "../text/prompt-template.ts"
import { STB_FILES, StbFilesError, stbDirOf } from "../text/stabletoolbench-files.ts"
import type { Tool } from "../tools/tool.ts"
import { baselinePrompts, smurfsBaselinePrompts } from "./baseline-prompts.ts"
import { dfsdt } from "./dfsdt.ts"
import { finishSpec } from "./finish.ts"
import { react } from "./react.ts"
import type { Task } from "./task.ts"

const STB = STB_CHECKOUT.path
const theirs = (file: string) => readFileSync(`${STB}/${file}`, "utf8")

const weather: Tool = {
  name: "weather_for_meteo",
  description: "Weather of a city",
  parameters: z.object({ city: z.string() }),
  call: () => Effect.succeed({ ok: true, content: "Sunny" }),
  meta: { stdTool: "meteo" }
}
const task: Task = { id: "t1", query: "Weather in Paris?", tools: { name: "meteo", tools: [weather] } }
const search = { toolCalls: [{ name: "weather_for_meteo", arguments: { city: "Paris" } }] }
const giveUp = { toolCalls: [{ name: "Finish", arguments: { return_type: "give_up_and_restart" } }] }
const finish = { toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "Sunny" } }] }

const requestsOf = async (method: "react" | "dfsdt", stb: string | undefined, script: Array<unknown>) => {
  const requests: Array<GenerateRequest> = []
  const recorded: Script = script.map((reply) => (r: GenerateRequest) => (requests.push(r), reply as object))
  const prompts = baselinePrompts(stb)
  const m = method === "react" ? react({ prompts }) : dfsdt({ prompts, giveUpBackLength: 1 })
  await Effect.runPromise(m(task).pipe(Effect.provide(scriptedLayer(recorded))))
  return requests
}

/** The body of a Python triple-quoted constant, cut out of the file by hand (independently of the reader under test). */
const constantBody = (file: string, name: string, quote: string) =>
  theirs(file)
    .split(new RegExp(`${name}\\s*=\\s*${quote}`))[1]!
    .split(quote)[0]!
const SYSTEM_FIRST_LINE = lacks(STB_CHECKOUT)
  ? ""
  : constantBody(STB_FILES.react, "FORMAT_INSTRUCTIONS_SYSTEM_FUNCTION", '"""').split("\n")[0]!

describe("baseline prompts", () => {
  it("our wording and its Finish function are built once and shared by every chain", () => {
    expect(smurfsBaselinePrompts()).toBe(smurfsBaselinePrompts())
    expect(finishSpec()).toBe(finishSpec(smurfsBaselinePrompts()))
    expect(finishSpec().description).toBe(loadTemplate("react-finish").user)
  })

  it.skipIf(lacks(STB_CHECKOUT))(
    `with --stb, ReAct sends StableToolBench's system and user prompts, task description and Finish texts${skipNote(STB_CHECKOUT)}`,
    async () => {
      const [request] = await requestsOf("react", STB, [finish])
      const [system, user] = request!.messages
      expect(system!.content.startsWith(SYSTEM_FIRST_LINE)).toBe(true)
      // the task description of rapidapi.py, then their numbered tool line
      const taskFirstLine = theirs(STB_FILES.rapidapi).split("self.task_description = f'''")[1]!.split("\n")[0]!
      expect(system!.content).toContain(`Task description: ${taskFirstLine}`)
      expect(system!.content.endsWith("1.meteo: None\n")).toBe(true)
      expect(user!.content).toBe(
        constantBody(STB_FILES.react, "FORMAT_INSTRUCTIONS_USER_FUNCTION", '"""').replace(
          "{input_description}",
          task.query
        )
      )
      const finishSpec = request!.tools!.find((t) => t.name === "Finish")!
      expect(theirs(STB_FILES.rapidapi)).toContain(`"description": "${finishSpec.description}"`)
    }
  )

  it.skipIf(lacks(STB_CHECKOUT))(
    `with --stb, DFSDT's diversity prompt is theirs${skipNote(STB_CHECKOUT)}`,
    async () => {
      const requests = await requestsOf("dfsdt", STB, [search, giveUp, finish])
      const diversity = requests[2]!.messages.at(-1)!.content
      const body = constantBody(STB_FILES.treeSearch, "DIVERSITY_PROMPT", "'''")
      expect(diversity.startsWith(body.split("{previous_candidate}")[0]!)).toBe(true)
      expect(diversity.endsWith(body.split("{previous_candidate}")[1]!)).toBe(true)
      expect(diversity).toContain('"name": "Finish"')
    }
  )

  it.skipIf(lacks(STB_CHECKOUT))(
    `without --stb, our own wording goes out and none of theirs${skipNote(STB_CHECKOUT)}`,
    async () => {
      const [request] = await requestsOf("react", undefined, [finish])
      const system = request!.messages[0]!.content
      expect(system).not.toContain(SYSTEM_FIRST_LINE)
      expect(system.startsWith(loadTemplate("react").system.split("\n")[0]!)).toBe(true)
      expect(request!.tools!.find((t) => t.name === "Finish")!.description).toBe(loadTemplate("react-finish").user)
      expect(theirs(STB_FILES.rapidapi)).not.toContain(loadTemplate("react-finish").user.slice(0, 40))
      const requests = await requestsOf("dfsdt", undefined, [search, giveUp, finish])
      expect(requests[2]!.messages.at(-1)!.content).not.toContain(
        constantBody(STB_FILES.treeSearch, "DIVERSITY_PROMPT", "'''").slice(0, 40)
      )
    }
  )

  it("our wording states the same rules: short thoughts, irreversible states, one condition per try, always Finish, give up when calls keep failing", () => {
    const ours = [
      loadTemplate("react").system,
      loadTemplate("react-task").user,
      loadTemplate("react-finish").user
    ].join("\n")
    for (const rule of [
      "five sentences",
      "cannot be undone",
      "one condition per attempt",
      'Always call the "Finish" function',
      "give_up_and_restart",
      "keep failing",
      "never by the name of the tool"
    ])
      expect(ours).toContain(rule)
  })

  it("a folder without StableToolBench's files is refused with the path and what to pass", () => {
    expect(() => baselinePrompts("/nonexistent/stb")).toThrow(StbFilesError)
    expect(() => baselinePrompts("/nonexistent/stb")).toThrow(/ReAct_prompts\.py: not found\. Pass --stb/)
  })

  it("reads the folder from --stb, else SMURFS_STB", () => {
    expect(stbDirOf("/a", { SMURFS_STB: "/b" })).toBe("/a")
    expect(stbDirOf(undefined, { SMURFS_STB: "/b" })).toBe("/b")
    expect(stbDirOf(undefined, {})).toBeUndefined()
  })
})
