// Issue 32 §9: under `reference` ReAct and DFSDT keep the history as StableToolBench writes it, with the texts read from a
// stand-in checkout (test/fixtures/stabletoolbench: their layout, our texts): a hallucinated function name renamed to
// invalid_hallucination_function_name with their observation (no list of valid names), and DFSDT's diversity prompt with
// their candidates' JSON and DFS.py's former-observation line, unfenced.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { partialCheckoutNote } from "../bench/app.ts"
import { benchSettings } from "../bench/settings.ts"
import { stabletoolbenchBaselinePrompts } from "../src/agents/baseline-prompts.ts"
import { HALLUCINATED_NAME } from "../src/agents/chain.ts"
import { dfsdt } from "../src/agents/dfsdt.ts"
import { chainProfileOptions } from "../src/agents/profile.ts"
import { react } from "../src/agents/react.ts"
import type { Method, Task } from "../src/agents/task.ts"
import type { GenerateRequest } from "../src/llm/language-model.ts"
import { type Script, scriptedLayer } from "../src/llm/scripted.ts"
import type { Tool } from "../src/tools/tool.ts"
import { MINI_DATA } from "./data.ts"

const STB = fileURLToPath(new URL("./fixtures/stabletoolbench", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "smurfs-reference-history-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const weather: Tool = {
  name: "weather_for_meteo",
  description: "Weather of a city",
  parameters: z.object({ city: z.string() }),
  call: () => Effect.succeed({ ok: true, content: "Sunny" })
}
const task: Task = { id: "t1", query: "Weather in Paris?", tools: { name: "meteo", tools: [weather] } }
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] })
const lookUp = call("weather_for_meteo", { city: "Paris" })
const hallucinate = call("nope", { q: "x" })
const giveUp = call("Finish", { return_type: "give_up_and_restart" })
const answer = call("Finish", { return_type: "give_answer", final_answer: "Sunny" })

const requestsOf = async (method: Method, script: Array<unknown>) => {
  const requests: Array<GenerateRequest> = []
  const recorded: Script = script.map((reply) => (r: GenerateRequest) => (requests.push(r), reply as object))
  const trajectory = await Effect.runPromise(method(task).pipe(Effect.provide(scriptedLayer(recorded))))
  return { requests, trajectory }
}

const options = (profile: "reference" | "improved", stb = STB) => ({
  prompts: stabletoolbenchBaselinePrompts(stb),
  ...chainProfileOptions(profile)
})

describe("reference history (issue 32 §9)", () => {
  it("DFSDT: the hallucinated call renamed with their observation, then their diversity candidates and former observation", async () => {
    const { requests, trajectory } = await requestsOf(dfsdt({ ...options("reference"), giveUpBackLength: 1 }), [
      lookUp,
      hallucinate,
      giveUp,
      answer
    ])
    expect(trajectory.finalAnswer).toBe("Sunny")
    // the third request continues from the hallucinated call: renamed in the reply and in the tool message
    const third = requests[2]!.messages
    const reply = third.at(-2)!
    expect(reply.toolCalls?.map((c) => c.name)).toEqual([HALLUCINATED_NAME])
    const observation = '{"error": "STAND-IN unknown function nope!", "response": ""}'
    expect(third.at(-1)).toMatchObject({ role: "tool", toolName: HALLUCINATED_NAME, content: observation })
    // the fourth expands the same state again: the give-up listed as their DFS.py lists it, then their observation line
    const candidates =
      "[\n  {\n" +
      '    "name": "Finish",\n' +
      '    "arguments": "{\\n  \\"return_type\\": \\"give_up_and_restart\\"\\n}",\n' +
      '    "function_output": "{\\"response\\":\\"STAND-IN gave up\\"}",\n' +
      '    "mento-carlo-action-value": 0.0\n' +
      "  }\n]\n" +
      `STAND-IN AGAIN, the last observation: ${observation}\n`
    expect(requests[3]!.messages.at(-1)!.content).toBe(
      "STAND-IN DIVERSITY: earlier tries from here failed.\nYour earlier actions from this state were:\n" +
        `${candidates}\nSTAND-IN DIVERSITY END: choose something else this time.`
    )
  })

  it("ReAct renames a hallucinated call in the conversation it sends on, as their single_chain does", async () => {
    const { requests } = await requestsOf(react(options("reference")), [hallucinate, answer])
    const second = requests[1]!.messages
    expect(second.at(-2)!.toolCalls?.map((c) => c.name)).toEqual([HALLUCINATED_NAME])
    expect(second.at(-1)!.content).toBe('{"error": "STAND-IN unknown function nope!", "response": ""}')
  })

  it("improved keeps the name, lists the valid functions and fences the candidates, with the same checkout", async () => {
    const { requests } = await requestsOf(dfsdt({ ...options("improved"), giveUpBackLength: 1 }), [
      lookUp,
      hallucinate,
      giveUp,
      answer
    ])
    const third = requests[2]!.messages
    expect(third.at(-2)!.toolCalls?.map((c) => c.name)).toEqual(["nope"])
    expect(third.at(-1)!.content).toContain("Use one of: weather_for_meteo, Finish")
    expect(requests[3]!.messages.at(-1)!.content).not.toContain("STAND-IN AGAIN")
    expect(requests[3]!.messages.at(-1)!.content).not.toContain("mento-carlo-action-value")
  })

  it("a checkout without DFS.py (a partial copy): our observation line, unfenced; one without rapidapi.py's texts is refused", async () => {
    const partial = join(scratch, "partial")
    cpSync(STB, partial, { recursive: true })
    rmSync(join(partial, "toolbench/inference/Algorithms/DFS.py"))
    const { requests } = await requestsOf(dfsdt({ ...options("reference", partial), giveUpBackLength: 1 }), [
      lookUp,
      hallucinate,
      giveUp,
      answer
    ])
    const diversity = requests[3]!.messages.at(-1)!.content
    expect(diversity).toContain("Your last observation in this state, once more")
    expect(diversity).not.toContain("```observation")
    // the bench says so once at its start
    const settings = (stb: string) =>
      benchSettings({ out: scratch, data: MINI_DATA.path, methods: ["dfsdt"], profile: "reference", stb })
    expect(partialCheckoutNote(settings(partial))).toMatch(/has no toolbench\/inference\/Algorithms\/DFS\.py/)
    expect(partialCheckoutNote(settings(STB))).toBeUndefined()
    const changed = join(scratch, "changed")
    cpSync(STB, changed, { recursive: true })
    const rapid = join(changed, "toolbench/inference/Downstream_tasks/rapidapi.py")
    writeFileSync(rapid, readFileSync(rapid, "utf8").replace("unknown function {action_name}", "unknown function"))
    expect(() => stabletoolbenchBaselinePrompts(changed)).toThrow(
      /rapidapi\.py: no f-string with \{action_name\} found/
    )
  })
})
