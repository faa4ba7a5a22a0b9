// `smurfs run --toolset retrieve[:k]` (issue 13 point 7): the task gets the top k of its library for the
// query, the Smurfs executor retrieves again per subtask, and the trajectory records every set. The scripts answer the
// default loop `smurfs run` runs (the fused executor's JSON requests, short responses as the steps' answers);
// test/bench-retrieve.test.ts runs the paper's three requests per step with retrieval.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it, vi } from "vitest"
import { kindOf } from "../../src/trace/events.ts"
import { MINI_DATA } from "../data.ts"
import { repo, smurfs } from "./spawn.ts"

vi.setConfig({ testTimeout: 300_000 })

const scratch = mkdtempSync(join(tmpdir(), "smurfs-run-retrieve-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const script = (name: string, replies: Record<string, unknown>) => {
  const path = join(scratch, `${name}.json`)
  writeFileSync(path, JSON.stringify(replies))
  return path
}

type Event = { type: string; data: Record<string, unknown> }
const eventsOf = (stdout: string, kind: string): Array<Record<string, unknown>> =>
  (JSON.parse(stdout) as { events: Array<Event> }).events.filter((e) => kindOf(e) === kind).map((e) => e.data)
const names = (retrieval: Record<string, unknown>) => (retrieval["tools"] as Array<{ name: string }>).map((t) => t.name)

const fakeMcp = `mcp:${process.execPath} ${join(repo, "test/fake-servers/mcp.ts")}`

describe("smurfs run --toolset retrieve", () => {
  it("a --tools library (an MCP server) is the corpus: the task sees the query's top k, each subtask its own", async () => {
    const model = script("mcp", {
      planner: [{ subtasks: ["Add the numbers 2 and 3", "Echo the text hello back"] }],
      "executor.fused": [
        { thought: "Add them.", tool: "add", arguments: { a: 2, b: 3 } },
        { thought: "Echo it.", tool: "echo", arguments: { text: "hello" } }
      ],
      verifier: [
        { status: "solved", reason: "The sum." },
        { status: "solved", reason: "The echo." }
      ],
      "answerer.final": [{ answer: "2 + 3 = 5, and the echo says hello." }]
    })
    const r = await smurfs([
      "run",
      "Add the numbers 2 and 3",
      "--tools",
      fakeMcp,
      "--toolset",
      "retrieve:2",
      "--model",
      `scripted:${model}`,
      "--json"
    ])
    expect(r.code, r.stderr).toBe(0)
    const [started] = eventsOf(r.stdout, "task_started")
    // the task's own set: 2 of the server's 20 tools, the adder first
    expect((started!["tools"] as Array<string>).filter((t) => t !== "ask_user")).toHaveLength(2)
    expect((started!["tools"] as Array<string>)[0]).toBe("add")
    const retrievals = eventsOf(r.stdout, "retrieval")
    expect(retrievals.map((e) => [e["scope"], e["query"], e["k"], e["mode"]])).toEqual([
      ["task", "Add the numbers 2 and 3", 2, "lexical"],
      ["subtask", "Add the numbers 2 and 3", 2, "lexical"],
      ["subtask", "Echo the text hello back", 2, "lexical"]
    ])
    // the task's set with its scores, as the task saw it
    expect(names(retrievals[0]!)).toEqual((started!["tools"] as Array<string>).filter((t) => t !== "ask_user"))
    expect((retrievals[0]!["tools"] as Array<{ score: number }>)[0]!.score).toBeGreaterThan(0)
    expect(names(retrievals[1]!)[0]).toBe("add")
    expect(names(retrievals[2]!)[0]).toBe("echo")
    // the second subtask called a tool the query's own set did not hold: it was retrieved for that subtask
    expect(started!["tools"]).not.toContain("echo")
    const calls = eventsOf(r.stdout, "tool_call")
    expect(calls.map((c) => [c["tool"], c["ok"], c["content"]])).toEqual([
      ["add", true, "5"],
      ["echo", true, "hello"]
    ])

    const live = await smurfs([
      "run",
      "Add 2 and 3",
      "--tools",
      fakeMcp,
      "--toolset",
      "retrieve:2",
      "--model",
      `scripted:${model}`
    ])
    expect(live.code, live.stderr).toBe(0)
    expect(live.stderr).toMatch(/tools retrieved for the task \(lexical, top 2\): add/)
    expect(live.stderr).toMatch(/tools retrieved for the subtask \(lexical, top 2\): echo$/m)
  })

  it("a ToolBench task (--query-id) retrieves from every API under --data, as smurfs bench does", async () => {
    const model = script("toolbench", {
      $cycle: true,
      planner: [
        {
          subtasks: [
            "Find popular sites for the query 'birthday party ideas'",
            "Find the main keywords of the query 'birthday party ideas'"
          ]
        }
      ],
      "executor.fused": [
        {
          thought: "Use the best tool offered.",
          tool: "popularsitesforquery_for_keyword_analysis",
          arguments: { q: "birthday party ideas" }
        },
        {
          thought: "Use the best tool offered.",
          tool: "querykeywords_for_keyword_analysis",
          arguments: { q: "birthday party ideas" }
        }
      ],
      answerer: [{ answer: "Found it." }],
      verifier: [{ status: "solved", reason: "Answered." }]
    })
    const r = await smurfs(
      [
        "run",
        "--query-id",
        "1073",
        "--env",
        "offline",
        "--toolset",
        "retrieve:3",
        "--model",
        `scripted:${model}`,
        "--json"
      ],
      { env: { SMURFS_DATA: MINI_DATA.path } }
    )
    expect(r.code, r.stderr).toBe(0)
    const [started] = eventsOf(r.stdout, "task_started")
    const set = (started!["tools"] as Array<string>).filter((t) => t !== "ask_user")
    // the same set smurfs bench records for this task (test/bench-retrieve.test.ts)
    expect(set).toHaveLength(3)
    expect(set).toEqual(
      expect.arrayContaining(["popularsitesforquery_for_keyword_analysis", "querykeywords_for_keyword_analysis"])
    )
    const retrievals = eventsOf(r.stdout, "retrieval")
    expect(retrievals.map((e) => e["scope"])).toEqual(["task", "subtask", "subtask"])
    expect(names(retrievals[0]!)).toEqual(set)
    expect(names(retrievals[1]!)[0]).toBe("popularsitesforquery_for_keyword_analysis")
    expect(names(retrievals[2]!)).toContain("querykeywords_for_keyword_analysis")
  })

  it("a query the retriever finds no tool for runs on the whole (small) library, and the run says so", async () => {
    const query = "Will the xylophone quokka zigzag?"
    const model = script("nothing-retrieved", {
      $cycle: true,
      planner: [{ subtasks: ["Compute 1 + 1"] }],
      "executor.fused": [
        { thought: "The calculator computes it.", tool: "calculator", arguments: { expression: "1 + 1" } }
      ],
      verifier: [{ status: "solved", reason: "Computed." }],
      "answerer.final": [{ answer: "2" }]
    })
    const r = await smurfs([
      "run",
      query,
      "--tools",
      "demo",
      "--toolset",
      "retrieve:2",
      "--model",
      `scripted:${model}`,
      "--json"
    ])
    expect(r.code, r.stderr).toBe(0)
    const [started] = eventsOf(r.stdout, "task_started")
    const tools = (started!["tools"] as Array<string>).filter((t) => t !== "ask_user")
    expect(tools.length).toBeGreaterThan(2)
    const [warning] = eventsOf(r.stdout, "error").filter((e) => e["tag"] === "NoToolRetrieved")
    expect(warning!["error"]).toContain(`lexical retrieval found no tool for "${query}"; the whole library (`)
    const live = await smurfs([
      "run",
      query,
      "--tools",
      "demo",
      "--toolset",
      "retrieve:2",
      "--model",
      `scripted:${model}`
    ])
    expect(live.stderr).toContain(`warning: lexical retrieval found no tool for "${query}"`)
  })

  it("refuses retrieval options without retrieve, relevant without a task, and says what a bad embedding spec should be", async () => {
    const embed = await smurfs(["run", "q", "--embed", "ollama:nomic-embed-text"])
    expect(embed.code).toBe(2)
    expect(embed.stderr).toContain("--toolset retrieve[:k]")
    const relevant = await smurfs(["run", "q", "--toolset", "relevant"])
    expect(relevant.code).toBe(2)
    expect(relevant.stderr).toContain("--query-id")
    const k = await smurfs(["run", "q", "--toolset", "retrieve:0"])
    expect(k.code).toBe(2)
    expect(k.stderr).toContain("retrieve[:k]")
    const spec = await smurfs(["run", "q", "--toolset", "retrieve", "--embed", "nomic", "--model", "sim"])
    expect(spec.code).toBe(3)
    expect(spec.stderr).toMatch(/ollama:<model>|openai:<model>/)
  })
})
