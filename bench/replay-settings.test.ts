// A replay runs a recorded run's settings (issue 33): Smurfs' executor as recorded, and the paper's three requests for
// a smurfs run from before --executor (its run.json records none), whatever today's default.
import { describe, expect, it } from "vitest"
import { replaySettingsOf } from "./replay.ts"
import type { RunConfig } from "./run-format.ts"
import { benchSettings } from "./settings.ts"

const config = (methods: ReadonlyArray<string>, options: Record<string, unknown>) =>
  ({
    formatVersion: 1,
    packageVersion: "0",
    createdAt: "",
    data: "d",
    groups: ["G1"],
    methods,
    model: "sim",
    envs: ["replay"],
    toolset: "all",
    concurrency: 1,
    options
  }) as unknown as RunConfig

describe("replay settings of a recorded run", () => {
  const given = benchSettings({ out: "/runs/replay" })

  it("keep the executor a run recorded, and take three-call for a smurfs run that recorded none", () => {
    expect(replaySettingsOf(config(["smurfs"], { executor: "fused" }), given).executor).toBe("fused")
    expect(replaySettingsOf(config(["smurfs"], { executor: "three-call" }), given).executor).toBe("three-call")
    expect(replaySettingsOf(config(["smurfs", "react"], {}), given).executor).toBe("three-call")
  })
})
