import { describe, expect, it } from "vitest"
import {
  BENCH_SETTINGS_VERSION,
  benchSettings,
  InvalidBenchSettings,
  JobSettings,
  jobSettingsOf,
  pathsOf
} from "./settings.ts"

describe("BenchSettings", () => {
  it("fills every default from the one schema: a caller gives only the run directory", () => {
    const settings = benchSettings({ out: "/runs/a" })
    expect(settings).toMatchObject({
      methods: ["smurfs"],
      envs: ["replay", "offline"],
      toolset: "all",
      concurrency: 4,
      resume: false,
      force: false,
      toolCalling: "auto"
    })
    expect(pathsOf(settings).storeDir).toBe("/runs/a/simulated")
  })

  it("refuses an unknown method, a bad toolset and rules across fields, naming each", () => {
    expect(() => benchSettings({ out: "/r", methods: ["smurfz" as never] })).toThrow(InvalidBenchSettings)
    expect(() => benchSettings({ out: "/r", toolset: "some" })).toThrow(/toolset must be/)
    expect(() => benchSettings({ out: "/r", force: true })).toThrow(/--force only applies with --resume/)
    expect(() => benchSettings({ out: "/r", rerank: true })).toThrow(/--toolset retrieve/)
  })

  it("smurfs' executor: fused by default (three-call under reference), three-call on request and carried by a job; fused under reference is refused", () => {
    const byDefault = benchSettings({ out: "/r" })
    expect(byDefault.executor).toBe("fused")
    expect(jobSettingsOf(byDefault).executor).toBe("fused")
    expect(benchSettings({ out: "/r", profile: "reference" }).executor).toBe("three-call")
    const threeCall = benchSettings({ out: "/r", executor: "three-call" })
    expect(threeCall.executor).toBe("three-call")
    expect(jobSettingsOf(threeCall).executor).toBe("three-call")
    expect(JobSettings.safeParse(jobSettingsOf(threeCall)).success).toBe(true)
    expect(() => benchSettings({ out: "/r", executor: "fast" as never })).toThrow(InvalidBenchSettings)
    expect(() => benchSettings({ out: "/r", executor: "fused", profile: "reference" })).toThrow(
      /--executor fused is an option of the improved profile[\s\S]*--profile improved/
    )
  })

  it("a job carries the run options only: no endpoints, folders or checkout paths; the prompt texts by name", () => {
    const settings = benchSettings({
      out: "/r",
      model: "ollama:m",
      endpoints: ["http://gpu:11434"],
      callCache: "/cache",
      responses: "/r.jsonl",
      stb: "/stb",
      stbTools: "/tools",
      tries: 3
    })
    const job = jobSettingsOf(settings)
    expect(job).toMatchObject({
      model: "ollama:m",
      tries: 3,
      prompts: "stabletoolbench",
      toolDescriptions: "tools-folder"
    })
    expect(JSON.stringify(job)).not.toMatch(/gpu|\/cache|r\.jsonl|\/stb|\/tools/)
    // without a tools folder the job is what it was before the field (a worker of before reads it)
    expect("toolDescriptions" in jobSettingsOf(benchSettings({ out: "/r" }))).toBe(false)
    expect(JobSettings.safeParse({ ...job, endpoints: ["http://evil"] }).success).toBe(false)
    expect(JobSettings.safeParse({ ...job, callCache: "/elsewhere" }).success).toBe(false)
    expect(BENCH_SETTINGS_VERSION).toBe(1)
  })
})
