// `smurfs bench --toolset retrieve:k`: tasks retrieve their tools from the pooled corpus; the Smurfs
// executor retrieves per subtask; the sets are recorded in run.json and in the trajectories.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { run } from "../src/cli/commands/bench.ts"
import { ExitCode } from "../src/cli/exit-codes.ts"
import { kindOf } from "../src/trace/events.ts"
import { runCapturingStderr } from "./capture-console.ts"
import { FULL_DATA, lacks, skipNote } from "./data.ts"

const DATA = FULL_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-bench-retrieve-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const bench = (argv: Array<string>) => runCapturingStderr(run, argv)

/** The executor picks the first tool it is offered (the retrieved set's best), whatever it is. */
const script = {
  $cycle: true,
  planner: [
    {
      subtasks: [
        "Find popular sites for the query 'birthday party ideas'",
        "Find the main keywords of the query 'birthday party ideas'"
      ]
    }
  ],
  "executor.thought": [{ thought: "Use the best tool offered." }],
  "executor.args": [{ query: "birthday party ideas", q: "birthday party ideas" }],
  answerer: [{ answer: "Found it." }],
  verifier: [{ status: "solved", reason: "Answered." }],
  react: [
    {
      text: "Done.",
      toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "Here it is." } }]
    }
  ]
}

describe("smurfs bench --toolset retrieve", () => {
  it.skipIf(lacks(FULL_DATA))(
    `records each task's retrieved set in run.json, per-subtask sets in the smurfs trajectory, and the set react saw${skipNote(FULL_DATA)}`,
    async () => {
      const out = join(scratch, "run")
      const scriptFile = join(scratch, "script.json")
      // the choice names the tool lexical retrieval ranks first for the first subtask
      writeFileSync(
        scriptFile,
        JSON.stringify({ ...script, "executor.choose": [{ tool: "popularsitesforquery_for_keyword_analysis" }] })
      )
      const { code, stderr } = await bench([
        "--data",
        DATA,
        "--group",
        "G1_instruction",
        "--ids",
        "1073",
        "--method",
        "smurfs,react",
        // the script answers the paper's three requests per step (its choice names the tool retrieval ranks first)
        "--executor",
        "three-call",
        "--env",
        "offline",
        "--toolset",
        "retrieve:3",
        "--model",
        `scripted:${scriptFile}`,
        "--out",
        out
      ])
      expect(stderr).not.toContain("crashed")
      expect(code).toBe(ExitCode.Ok)
      const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8"))
      expect(config.toolset).toBe("retrieve:3")
      expect(config.options.retrieval).toMatchObject({ k: 3, mode: "lexical", embed: null, corpusApis: 2479 })
      const set: Array<string> = config.retrieval.sets["G1_instruction/1073"]
      expect(set).toHaveLength(3)
      expect(set).toEqual(
        expect.arrayContaining(["popularsitesforquery_for_keyword_analysis", "querykeywords_for_keyword_analysis"])
      )

      const react = JSON.parse(readFileSync(join(out, "tasks", "react", "G1_instruction", "1073.json"), "utf8"))
      expect(react.availableTools).toEqual(set)

      const smurfs = JSON.parse(readFileSync(join(out, "tasks", "smurfs", "G1_instruction", "1073.json"), "utf8"))
      const retrievals = smurfs.events
        .filter((e: { type: string }) => kindOf(e) === "retrieval")
        .map((e: { data: unknown }) => e.data)
      expect(retrievals).toHaveLength(3)
      expect(retrievals.map((r: { scope: string; query: string }) => [r.scope, r.query])).toEqual([
        ["task", react.query],
        ["subtask", script.planner[0]!.subtasks[0]],
        ["subtask", script.planner[0]!.subtasks[1]]
      ])
      // the task's own set, as run.json records it, with the scores it was ranked by
      expect(retrievals[0].tools.map((t: { name: string }) => t.name)).toEqual(set)
      expect(retrievals[0].tools.every((t: { score?: number }) => typeof t.score === "number")).toBe(true)
      for (const r of retrievals) expect(r.tools.length).toBeLessThanOrEqual(3)
      expect(retrievals[1].tools[0].name).toBe("popularsitesforquery_for_keyword_analysis")
      expect(retrievals[2].tools.map((t: { name: string }) => t.name)).toContain("querykeywords_for_keyword_analysis")
      const call = smurfs.events.find((e: { type: string }) => kindOf(e) === "tool_call")
      expect(call.data.tool).toBe("popularsitesforquery_for_keyword_analysis")
    },
    300_000
  )

  it("refuses a malformed --toolset and --embed without retrieval", async () => {
    const bad = await bench(["--out", join(scratch, "bad"), "--toolset", "retrieve:0"])
    expect(bad.code).toBe(ExitCode.Usage)
    expect(bad.stderr).toContain("retrieve[:k]")
    const embed = await bench(["--out", join(scratch, "bad"), "--embed", "ollama:nomic-embed-text"])
    expect(embed.code).toBe(ExitCode.Usage)
    expect(embed.stderr).toContain("--toolset retrieve")
  })
})
