// `smurfs bench --lanes <auto|n|off>` and `--lane-grace <ms>` to the run's settings (issue 33).
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { describe, expect, it } from "vitest"
import { UsageError } from "../options.ts"
import { COMMAND, settingsOf } from "./bench.ts"

const out = join(mkdtempSync(join(tmpdir(), "smurfs-lanes-")), "run")
const settingsFrom = (...args: Array<string>) =>
  settingsOf(parseArgs({ args: ["--out", out, ...args], options: COMMAND.options, strict: true }) as never)

describe("bench --lanes", () => {
  it("is auto unless given: a number of lanes, or off", () => {
    expect(settingsFrom().lanes).toBe("auto")
    expect(settingsFrom("--lanes", "4").lanes).toBe(4)
    expect(settingsFrom("--lanes", "off").lanes).toBe("off")
    expect(settingsFrom("--lane-grace", "500").laneGraceMs).toBe(500)
    expect(settingsFrom("--lane-grace", "0").laneGraceMs).toBe(0)
  })

  it("refuses anything else with a usage error naming what it takes", () => {
    expect(() => settingsFrom("--lanes", "0")).toThrow(UsageError)
    expect(() => settingsFrom("--lanes", "some")).toThrow(/auto, off or a number of lanes/)
    expect(() => settingsFrom("--lane-grace=-1")).toThrow(UsageError)
  })
})
