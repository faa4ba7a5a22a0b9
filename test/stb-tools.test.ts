// Issue 32 §8: each tool's line in the task description carries the tool's own description, read from StableToolBench's
// tools folder (`--stb-tools`, a stand-in in test/fixtures/stabletoolbench/tools: their layout, our texts), not its first
// API's; without the folder the run says so once and run.json records which source was used.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import { runBenchSettings, toolDescriptionsNote, workerBenchSettings } from "../bench/app.ts"
import { silentProgress } from "../bench/progress.ts"
import { settingsDiff } from "../bench/run-settings.ts"
import { type BenchSettingsInput, benchSettings, jobSettingsOf } from "../bench/settings.ts"
import { toolLines } from "../src/agents/chain.ts"
import { run as bench } from "../src/cli/commands/bench.ts"
import { ExitCode } from "../src/cli/exit-codes.ts"
import { makeOfflineEnvironment } from "../src/tools/environments/offline.ts"
import { toolbenchLibrary } from "../src/tools/toolbench/adapter.ts"
import { pulledToolsOf, ToolsFolderError, toolsFolder } from "../src/tools/toolbench/tools-folder.ts"
import { runCapturingStderr } from "./capture-console.ts"
import { MINI_DATA } from "./data.ts"
import { type FakeOpenAI, startFakeOpenAI } from "./fake-servers/openai.ts"

const TOOLS = fileURLToPath(new URL("./fixtures/stabletoolbench/tools", import.meta.url))
const STB = fileURLToPath(new URL("./fixtures/stabletoolbench", import.meta.url))

const doc = (category: string, tool: string, api: string, description: string) => ({
  category_name: category,
  tool_name: tool,
  api_name: api,
  api_description: description,
  required_parameters: [],
  optional_parameters: []
})
const docs = [
  doc("Weather", "Meteo Now", "Current Weather", "The weather in a city right now."),
  doc("Weather", "Meteo Now", "Forecast", "Tomorrow's weather in a city."),
  doc("Data", "Number Facts", "Fact", "A fact about a number."),
  doc("Data", "Not In Folder", "Thing", "What the thing does.")
]

describe("tool lines from the tools folder", () => {
  it("a tool's own description from its file, newlines dropped; an empty one is None as theirs; a tool the folder lacks keeps its first API's", () => {
    const env = makeOfflineEnvironment()
    const withFolder = toolLines(toolbenchLibrary("t", docs, env, { toolsFolder: toolsFolder(TOOLS) }))
    expect(withFolder).toBe(
      "1.meteo_now: Current weather and forecasts for any city,updated every hour.\n" +
        "2.number_facts: None\n" +
        "3.not_in_folder: What the thing does.\n"
    )
    // before: each tool described by its first API's description
    expect(toolLines(toolbenchLibrary("t", docs, env))).toBe(
      "1.meteo_now: The weather in a city right now.\n" +
        "2.number_facts: A fact about a number.\n" +
        "3.not_in_folder: What the thing does.\n"
    )
  })

  it("a folder that is not there, or of another layout, is bad input naming it and the flag", () => {
    expect(() => toolsFolder(join(TOOLS, "nope"))).toThrow(ToolsFolderError)
    expect(() => toolsFolder(join(TOOLS, "nope"))).toThrow(/nope: not found\. Pass --stb-tools/)
    // one level too low: the category's files, no category folders
    expect(() => toolsFolder(join(TOOLS, "Weather"))).toThrow(/Weather: holds no <Category>\/<tool>\.json file/)
  })

  it("a checkout with the tools folder pulled into server/tools gives the default", () => {
    const checkout = mkdtempSync(join(tmpdir(), "smurfs-pulled-"))
    try {
      expect(pulledToolsOf(checkout)).toBeUndefined()
      cpSync(TOOLS, join(checkout, "server", "tools"), { recursive: true })
      expect(pulledToolsOf(checkout)).toBe(join(checkout, "server", "tools"))
      expect(pulledToolsOf(undefined)).toBeUndefined()
    } finally {
      rmSync(checkout, { recursive: true, force: true })
    }
  })
})

describe("bench --stb-tools", () => {
  const scratch = mkdtempSync(join(tmpdir(), "smurfs-stb-tools-"))
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))
  let server: FakeOpenAI
  const saved = process.env["OPENAI_BASE_URL"]
  beforeEach(async () => {
    server = await startFakeOpenAI(() =>
      JSON.stringify({ thought: "no", action: "Finish", action_input: { return_type: "give_up_and_restart" } })
    )
    process.env["OPENAI_BASE_URL"] = server.baseURL
  })
  afterEach(async () => {
    if (saved === undefined) delete process.env["OPENAI_BASE_URL"]
    else process.env["OPENAI_BASE_URL"] = saved
    await server.close()
  })

  const run = async (name: string, input: Partial<BenchSettingsInput>) => {
    const out = join(scratch, name)
    const settings = benchSettings({
      out,
      data: MINI_DATA.path,
      model: "openai:qwen2.5:7b",
      groups: ["G1_instruction"],
      limit: 1,
      methods: ["react"],
      toolCalling: "json",
      singleChainMaxStep: 1,
      stb: STB,
      ...input
    })
    const outcome = await Effect.runPromise(runBenchSettings(settings, silentProgress))
    expect(outcome.kind).toBe("ran")
    const system = server.chatRequests()[0]!.messages[0]!.content as string
    const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8"))
    return { settings, system, config }
  }

  it("the request's task description reads the tool's own description, and run.json records the folder", async () => {
    const { system, config, settings } = await run("with", { stbTools: TOOLS })
    // the stand-in checkout's task description, then the tool line from tools/Data/theclique.json
    expect(system).toContain(
      "Tools you have:\n1.theclique: STAND-IN TOOL TEXT: one service for concert listings, artist pages and football transfer records.\n"
    )
    expect(config.options.toolDescriptions).toBe(`tools-folder:${TOOLS}`)
    expect(toolDescriptionsNote(settings)).toBeUndefined()
    // a queue worker reads its own copy, never the coordinator's path
    const job = jobSettingsOf(settings)
    expect(job.toolDescriptions).toBe("tools-folder")
    const own = { concurrency: 1, data: MINI_DATA.path, storeDir: scratch }
    expect(() => workerBenchSettings(job, { ...own, stb: STB })).toThrow(/smurfs worker --stb-tools/)
    expect(workerBenchSettings(job, { ...own, stb: STB, stbTools: TOOLS }).stbTools).toBe(TOOLS)
  })

  it("without the folder: the first API's description, said once at the start and recorded as api-list", async () => {
    const { system, config, settings } = await run("without", {})
    expect(system).toMatch(/Tools you have:\n1\.theclique: (?!STAND-IN TOOL TEXT)\S/)
    expect(config.options.toolDescriptions).toBe("api-list")
    expect(toolDescriptionsNote(settings)).toMatch(/no StableToolBench tools folder \(--stb-tools/)
    // a run recorded before the field resumes as it was (it described tools by their first API)
    const { toolDescriptions: _dropped, ...older } = config.options
    expect(settingsDiff({ ...config, options: older }, config)).toEqual([])
  })
})

describe("smurfs bench --stb-tools (the command)", () => {
  const scratch = mkdtempSync(join(tmpdir(), "smurfs-stb-tools-cli-"))
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))
  const script = join(scratch, "model.json")
  writeFileSync(
    script,
    JSON.stringify({
      $cycle: true,
      react: [{ toolCalls: [{ name: "Finish", arguments: { return_type: "give_up_and_restart" } }] }]
    })
  )
  const argv = (out: string) => [
    ...["--data", MINI_DATA.path, "--group", "G1_instruction", "--ids", "588", "--method", "react"],
    ...["--model", `scripted:${script}`, "--stb", STB, "--out", join(scratch, out)]
  ]

  it("says once at the start that no tools folder was given, and not when one was", async () => {
    const without = await runCapturingStderr(bench, argv("without"))
    expect(without.code, without.stderr).toBe(ExitCode.Ok)
    expect(without.stderr.match(/no StableToolBench tools folder \(--stb-tools/g)).toHaveLength(1)
    const given = await runCapturingStderr(bench, [...argv("with"), "--stb-tools", TOOLS])
    expect(given.code, given.stderr).toBe(ExitCode.Ok)
    expect(given.stderr).not.toMatch(/tools folder/)
    const config = JSON.parse(readFileSync(join(scratch, "with", "run.json"), "utf8"))
    expect(config.options.toolDescriptions).toBe(`tools-folder:${TOOLS}`)
    // a folder that is not one is bad input before anything runs
    const wrong = await runCapturingStderr(bench, [...argv("wrong"), "--stb-tools", join(TOOLS, "Weather")])
    expect(wrong.code).toBe(ExitCode.BadInput)
    expect(wrong.stderr).toMatch(/holds no <Category>\/<tool>\.json file/)
  })
})
