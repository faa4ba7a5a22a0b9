// The settings file's keys and the short flags, as every command reads them.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { COMMAND as BENCH } from "./commands/bench.ts"
import { COMMAND as RUN } from "./commands/run.ts"
import { COMMAND as TOOLS } from "./commands/tools.ts"
import { COMMAND as SEARCH } from "./commands/tools-search.ts"
import { COMMAND as WORKER } from "./commands/worker.ts"
import { ConfigError, checkSettingsKeys, parseCommand } from "./options.ts"

const dir = mkdtempSync(join(tmpdir(), "smurfs-settings-keys-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const withSettings = (settings: unknown): string => {
  const cwd = mkdtempSync(join(dir, "project-"))
  writeFileSync(join(cwd, "smurfs.config.json"), JSON.stringify(settings))
  return cwd
}

describe("smurfs.config.json's keys", () => {
  it("a misspelled setting is bad input with a did-you-mean, not ignored", async () => {
    const error = await checkSettingsKeys(RUN, withSettings({ modle: "ollama:qwen2.5:7b" })).catch((e) => e)
    expect(error).toBeInstanceOf(ConfigError)
    expect(error.message).toContain('no command has a setting "modle" (did you mean "model"?)')
  })

  it("a misspelled section too", async () => {
    const error = await checkSettingsKeys(RUN, withSettings({ bnech: { concurrency: 4 } })).catch((e) => e)
    expect(error).toBeInstanceOf(ConfigError)
    expect(error.message).toContain('no command is named "bnech" (did you mean "bench"?)')
  })

  it("another command's setting or section is fine: one file serves every command", async () => {
    await expect(
      checkSettingsKeys(RUN, withSettings({ model: "x", judge: "ollama:qwen2.5:32b", bench: { concurrency: 4 } }))
    ).resolves.toBeUndefined()
  })
})

describe("short flags", () => {
  it("-m is --model and -t is --tools wherever the command has them, as in run", () => {
    const cwd = dir
    expect(parseCommand(BENCH, ["-m", "sim", "--out", "o"], { cwd, env: {} }).values.model).toBe("sim")
    expect(parseCommand(WORKER, ["-m", "sim"], { cwd, env: {} }).values.model).toBe("sim")
    expect(parseCommand(TOOLS, ["-t", "demo"], { cwd, env: {} }).values.tools).toEqual(["demo"])
    expect(parseCommand(SEARCH, ["q", "-t", "demo"], { cwd, env: {} }).values.tools).toEqual(["demo"])
    expect(parseCommand(RUN, ["q", "-m", "sim", "-t", "demo"], { cwd, env: {} }).values).toMatchObject({
      model: "sim",
      tools: ["demo"]
    })
  })
})
