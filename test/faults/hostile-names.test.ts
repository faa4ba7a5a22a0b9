// Names from data never choose where a file goes: traversal and absolute query ids stay inside the run
// directory, distinct ids get distinct files, and two queries with one id are refused, never merged.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { Cause, Effect, Exit } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import type { BenchQuery } from "../../bench/datasets.ts"
import { readRecords } from "../../bench/run-dir.ts"
import { RUN_FORMAT_VERSION } from "../../bench/run-format.ts"
import { runBench } from "../../bench/runner.ts"
import { run } from "../../src/cli/commands/bench.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { scriptedLayer } from "../../src/llm/scripted.ts"
import { fromSafeName, PathOutsideRoot, pathInside, safeName } from "../../src/trace/file-names.ts"
import { answering } from "../answering-method.ts"
import { runCapturingStderr } from "../capture-console.ts"

const SCRIPT = fileURLToPath(new URL("../../examples/bench-script.json", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "smurfs-hostile-names-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Every file under `dir`, relative to it. */
const tree = (dir: string): Array<string> =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((f) => statSync(join(dir, f)).isFile())
        .sort()
    : []

const bench = (argv: Array<string>) => runCapturingStderr(run, argv)

const runQueries = (runDir: string, queries: ReadonlyArray<BenchQuery>, method: string) =>
  Effect.runPromiseExit(
    runBench({
      runDir,
      config: {
        formatVersion: RUN_FORMAT_VERSION,
        packageVersion: "test",
        createdAt: "2026-01-01T00:00:00.000Z",
        data: "memory",
        groups: [...new Set(queries.map((q) => q.group))],
        methods: [method],
        model: "m",
        envs: [],
        toolset: "all",
        concurrency: 1,
        options: {}
      },
      queries,
      methods: [{ name: method, method: answering }],
      taskOf: (q) => ({ id: q.id, query: q.query, tools: { name: q.id, tools: [] } }),
      concurrency: 1,
      resume: false,
      modelSpec: "m"
    }).pipe(Effect.provide(scriptedLayer({ "*": [] } as never)))
  )

const query = (id: string, text = `query ${id}`) => ({
  query: text,
  query_id: id,
  api_list: [
    {
      category_name: "Data",
      tool_name: "Search Tool",
      api_name: "search",
      api_description: "search",
      required_parameters: [],
      optional_parameters: [],
      method: "GET"
    }
  ]
})

const dataset = (name: string, queries: ReadonlyArray<object>, group = "G1_instruction") => {
  const dir = join(scratch, name, "data")
  mkdirSync(join(dir, "queries"), { recursive: true })
  writeFileSync(join(dir, "queries", `${group}.json`), JSON.stringify(queries))
  return dir
}

describe("safeName", () => {
  it("keeps ordinary ids readable and turns anything else into one inert segment", () => {
    expect(safeName("12345")).toBe("12345")
    expect(safeName("G1_instruction")).toBe("G1_instruction")
    for (const hostile of [
      "..",
      ".",
      "../../../../tmp/victim",
      "/etc/passwd",
      "C:\\Windows\\x",
      "a/b",
      "x.json.tmp-1-abc",
      "",
      "\u0000",
      "é/ü"
    ]) {
      const encoded = safeName(hostile)
      expect(encoded, hostile).toMatch(/^[A-Za-z0-9_%~-]+$/)
      expect(encoded).not.toMatch(/^\.+$/)
      expect(fromSafeName(encoded)).toBe(hostile)
    }
  })

  it("never maps two distinct names to one file, long names included", () => {
    const names = [
      "a/b",
      "a%2Fb",
      "a_b",
      "a-b",
      "a.b",
      "A.b",
      "",
      "%",
      "x".repeat(300),
      `${"x".repeat(299)}y`,
      "é".repeat(200),
      "%41",
      "A"
    ]
    const encoded = names.map(safeName)
    expect(new Set(encoded).size).toBe(names.length)
    for (const e of encoded) expect(Buffer.byteLength(e)).toBeLessThanOrEqual(200)
  })

  it("pathInside refuses a path that leaves its root", () => {
    expect(pathInside("/run", "tasks", "x.json")).toBe("/run/tasks/x.json")
    expect(() => pathInside("/run", "..", "victim.json")).toThrow(PathOutsideRoot)
    expect(() => pathInside("/run", "/etc/passwd")).not.toThrow() // join keeps it under /run
    expect(() => pathInside("/run", "a", "../../b")).toThrow(PathOutsideRoot)
    expect(() => pathInside("/run", ".")).toThrow(PathOutsideRoot)
  })
})

describe("a traversal or absolute query id", () => {
  it("writes nothing outside the run directory, and its record keeps the id", async () => {
    const sandbox = join(scratch, "traversal")
    const victimDir = join(sandbox, "victim")
    mkdirSync(victimDir, { recursive: true })
    writeFileSync(join(victimDir, "precious.json"), "keep me")
    const out = join(sandbox, "deep", "er", "run")
    const depth = relative(join(out, "tasks", "react", "G1_instruction"), victimDir)
    const ids = [`${depth}/precious`, join(victimDir, "absolute"), "..", ".", "a/b", "a%2Fb"]
    const data = dataset(
      "traversal",
      ids.map((id) => query(id))
    )
    const before = tree(sandbox).filter((f) => !f.startsWith("deep"))

    const { code, stderr } = await bench([
      "--data",
      data,
      "--group",
      "G1_instruction",
      "--method",
      "react",
      "--model",
      `scripted:${SCRIPT}`,
      "--out",
      out
    ])
    expect(code, stderr).toBe(ExitCode.Ok)
    // nothing changed or appeared outside the run directory (the data folder aside, which the test wrote)
    expect(tree(sandbox).filter((f) => !f.startsWith("deep") && !f.startsWith("data"))).toEqual(
      before.filter((f) => !f.startsWith("data"))
    )
    expect(readFileSync(join(victimDir, "precious.json"), "utf8")).toBe("keep me")
    expect(existsSync(join(victimDir, "absolute.json"))).toBe(false)
    // every id has its own record, one level deep, named by safeName
    const files = readdirSync(join(out, "tasks", "react", "G1_instruction")).sort()
    expect(files).toEqual(ids.map((id) => `${safeName(id)}.json`).sort())
    expect(
      readRecords(out, "react", "G1_instruction")
        .map((r) => r.taskId)
        .sort()
    ).toEqual([...ids].sort())
    // the converted file keys predictions by the original ids
    const converted = JSON.parse(
      readFileSync(join(out, "converted", "react", "G1_instruction.json"), "utf8")
    ) as Record<string, unknown>
    expect(Object.keys(converted).sort()).toEqual([...ids].sort())
  })

  it("hostile group and method names stay inside the run directory too", async () => {
    const sandbox = join(scratch, "group")
    const out = join(sandbox, "deep", "run")
    const group = "../../../escaped"
    const method = "../../method"
    const queries: Array<BenchQuery> = [{ group, id: "../1", query: "q", apiList: [], relevant: [] }]
    const exit = await runQueries(out, queries, method)
    expect(exit._tag).toBe("Success")
    expect(tree(sandbox).every((f) => f.startsWith(join("deep", "run")))).toBe(true)
    expect(tree(join(out, "tasks"))).toEqual([join(safeName(method), safeName(group), `${safeName("../1")}.json`)])
    expect(readRecords(out, method, group).map((r) => [r.method, r.group, r.taskId])).toEqual([[method, group, "../1"]])
  })
})

describe("two queries with one id in a group", () => {
  it("are refused by the runner too, whatever loaded them", async () => {
    const out = join(scratch, "duplicates-runner", "run")
    const q = (query: string): BenchQuery => ({ group: "G", id: "7", query, apiList: [], relevant: [] })
    const exit = await runQueries(out, [q("first"), q("second")], "count")
    expect(exit._tag).toBe("Failure")
    expect(String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : "")).toContain(
      "G/7 is given twice (queries #1 and #2"
    )
    expect(existsSync(out)).toBe(false)
  })

  it("are refused with the id and both positions (exit 3), and nothing runs", async () => {
    const data = dataset("duplicates", [query("7", "first"), query("8"), query("7", "second")])
    const out = join(scratch, "duplicates", "run")
    const { code, stderr } = await bench([
      "--data",
      data,
      "--group",
      "G1_instruction",
      "--method",
      "react",
      "--model",
      `scripted:${SCRIPT}`,
      "--out",
      out
    ])
    expect(code).toBe(ExitCode.BadInput)
    expect(stderr).toContain('"7"')
    expect(stderr).toContain("#1 and #3")
    expect(tree(join(out, "tasks"))).toEqual([])
  })

  it("ids that differ only in letter case are refused too: on macOS and Windows their records would share one file", async () => {
    const data = dataset("case", [query("q-A", "first"), query("8"), query("q-a", "second")])
    const out = join(scratch, "case", "run")
    const { code, stderr } = await bench([
      "--data",
      data,
      "--group",
      "G1_instruction",
      "--method",
      "react",
      "--model",
      `scripted:${SCRIPT}`,
      "--out",
      out
    ])
    expect(code).toBe(ExitCode.BadInput)
    expect(stderr).toContain('"q-A" and "q-a" differ only in letter case')
    expect(stderr).toContain("#1 and #3")
    expect(tree(join(out, "tasks"))).toEqual([])
    // the runner refuses them whatever loaded them
    const q = (id: string): BenchQuery => ({ group: "G", id, query: id, apiList: [], relevant: [] })
    const exit = await runQueries(join(scratch, "case-runner", "run"), [q("Ab"), q("aB")], "count")
    expect(String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : "")).toContain(
      "G/Ab and G/aB differ only in letter case"
    )
  })
})
