import { describe, expect, it } from "vitest"
import { profileRecord } from "../src/agents/profile.ts"
import type { RunConfig } from "./run-format.ts"
import { settingsDiff } from "./run-settings.ts"

const config = (options: Record<string, unknown>) =>
  ({
    formatVersion: 1,
    packageVersion: "0",
    createdAt: "",
    data: "d",
    groups: ["G1"],
    methods: ["react"],
    model: "m",
    envs: ["replay"],
    toolset: "all",
    options
  }) as unknown as RunConfig

describe("settingsDiff and the options recorded since the profiles", () => {
  const now = { profile: profileRecord("improved", undefined, {}), temperature: 0, seed: 42, numCtx: 8192 }

  it("a run from before they were recorded resumes at the defaults without a difference", () => {
    expect(settingsDiff(config({}), config(now))).toEqual([])
  })

  it("an option recorded as null stays null", () => {
    expect(settingsDiff(config({ ...now, think: null }), config({ ...now, think: null }))).toEqual([])
  })

  it("but not with another profile or temperature", () => {
    const diff = settingsDiff(
      config({}),
      config({ ...now, profile: profileRecord("reference", undefined, {}), temperature: 0.5 })
    )
    expect(diff.map((d) => d.split(":")[0])).toEqual(["profile", "temperature"])
  })

  it("Smurfs' executor tells runs apart only when one of them has smurfs (issue 33: the default became fused)", () => {
    const withMethods = (methods: ReadonlyArray<string>, options: Record<string, unknown>) =>
      ({ ...config(options), methods }) as RunConfig
    // a react run recorded the three-call default before; a react run now records no executor
    expect(
      settingsDiff(withMethods(["react"], { ...now, executor: "three-call" }), withMethods(["react"], now))
    ).toEqual([])
    expect(
      settingsDiff(
        withMethods(["smurfs", "react"], { ...now, executor: "three-call" }),
        withMethods(["smurfs", "react"], { ...now, executor: "fused" })
      ).map((d) => d.split(":")[0])
    ).toEqual(["executor"])
  })
})
