// Each method's own tools in one run: under --profile reference Smurfs gets the task's relevant APIs (as the
// authors' inference.py builds them) and StableToolBench's baselines the whole api_list.
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { modelLayer } from "../src/llm/spec.ts"
import { MINI_DATA } from "../test/data.ts"
import { runBenchSettings, taskBuilder, workerBenchSettings } from "./app.ts"
import { loadQueries, toolDocsOf } from "./datasets.ts"
import { methodToolsetOf } from "./method-toolsets.ts"
import { silentProgress } from "./progress.ts"
import { RunConfig } from "./run-format.ts"
import { settingsDiff } from "./run-settings.ts"
import { benchSettings, jobSettingsOf } from "./settings.ts"

const CHECKOUT = fileURLToPath(new URL("../test/fixtures/smurfs-src", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "smurfs-toolsets-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("a toolset per method", () => {
  it("reference: smurfs relevant, react/dfsdt all; a method's own entry and --toolset relevant win", () => {
    const reference = benchSettings({ out: "/r", profile: "reference" })
    expect(["smurfs", "react", "dfsdt"].map((m) => methodToolsetOf(reference, m))).toEqual(["relevant", "all", "all"])
    const improved = benchSettings({ out: "/r" })
    expect(methodToolsetOf(improved, "smurfs")).toBe("all")
    const own = benchSettings({ out: "/r", profile: "reference", methodToolsets: { smurfs: "all", react: "relevant" } })
    expect([methodToolsetOf(own, "smurfs"), methodToolsetOf(own, "react")]).toEqual(["all", "relevant"])
    expect(methodToolsetOf(benchSettings({ out: "/r", toolset: "relevant", profile: "reference" }), "react")).toBe(
      "relevant"
    )
    expect(() => benchSettings({ out: "/r", toolset: "retrieve", methodToolsets: { smurfs: "all" } })).toThrow(
      /--method-toolset/
    )
  })

  it("one reference run gives smurfs the relevant APIs and react the api_list, and run.json records each", async () => {
    const out = join(scratch, "reference")
    const settings = benchSettings({
      out,
      data: MINI_DATA.path,
      model: "sim",
      groups: ["G1_instruction"],
      limit: 2,
      methods: ["smurfs", "react"],
      profile: "reference",
      smurfsSrc: CHECKOUT
    })
    const outcome = await Effect.runPromise(runBenchSettings(settings, silentProgress))
    expect(outcome.kind).toBe("ran")
    const config = RunConfig.parse(JSON.parse(readFileSync(join(out, "run.json"), "utf8")))
    expect(config.toolsets).toEqual({ smurfs: "relevant", react: "all" })
    const queries = await Effect.runPromise(loadQueries({ dir: MINI_DATA.path, groups: ["G1_instruction"], limit: 2 }))
    let differ = 0
    for (const query of queries) {
      const tools = (method: string) =>
        (
          JSON.parse(readFileSync(join(out, "tasks", method, query.group, `${query.id}.json`), "utf8")) as {
            availableTools: Array<string>
          }
        ).availableTools.filter((t) => t !== "Finish")
      const all = toolDocsOf(query, "all").length
      const relevant = toolDocsOf(query, "relevant").length
      expect(tools("react").length).toBeGreaterThanOrEqual(all)
      expect(tools("smurfs")).toHaveLength(relevant)
      if (relevant < all) differ++
    }
    expect(differ).toBeGreaterThan(0)
    // resuming with smurfs on the whole list is another run
    const whole = { ...config, toolsets: { smurfs: "all", react: "all" } }
    expect(settingsDiff(config, whole).join("\n")).toMatch(/each method's toolset/)
  })

  it("a queue worker builds each method's task on the method's toolset the job carries", async () => {
    const job = jobSettingsOf(
      benchSettings({ out: "/coordinator/run", model: "sim", profile: "reference", methods: ["smurfs", "react"] })
    )
    const worker = workerBenchSettings(job, { concurrency: 1, data: MINI_DATA.path, storeDir: join(scratch, "sim") })
    const [query] = await Effect.runPromise(loadQueries({ dir: MINI_DATA.path, groups: ["G1_instruction"], limit: 1 }))
    if (query === undefined) throw new Error("the mini data has a G1_instruction query")
    const taskOf = await Effect.runPromise(taskBuilder(worker).pipe(Effect.provide(modelLayer("sim"))))
    const names = async (method: string) =>
      (await Effect.runPromise(taskOf(query, undefined, method))).tools.tools.map((t) => t.name)
    expect(toolDocsOf(query, "relevant").length).toBeLessThan(toolDocsOf(query, "all").length)
    expect(await names("smurfs")).toHaveLength(toolDocsOf(query, "relevant").length)
    expect(await names("react")).toHaveLength(toolDocsOf(query, "all").length)
  })
})
