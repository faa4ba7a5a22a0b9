// Escape sequences in what a model or tool returns reach no terminal raw: `run` (live view and answer),
// `show` and `tools` print them as visible text; `run --json` stays exact JSON.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { visibleText } from "../../src/trace/visible-text.ts"
import { demoQuery, demoScript, smurfs } from "../cli/spawn.ts"

const TITLE = "\u001b]0;pwned\u0007"
const CLIPBOARD = "\u001b]52;c;cm0gLXJmIH4=\u0007"
const CLEAR = "\u001b[2J"
const HOSTILE = `${TITLE}${CLIPBOARD}${CLEAR}`

const scratch = mkdtempSync(join(tmpdir(), "smurfs-escapes-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/**
 * The demo script, with escape sequences in a step's thought, a verdict's hint and the final answer. `smurfs run`
 * runs the default loop: the fused executor's JSON reply carries the thought, and the tools' short responses are the
 * steps' answers (no Answer agent call), so the model's text shown per step is the thought and the verdict (a hint:
 * the verifier's reply has no reason).
 */
const script = (() => {
  const demo = JSON.parse(readFileSync(demoScript, "utf8"))
  demo["executor.fused"][0].thought = `Mount Everest is 8849 m high ${HOSTILE}(look it up).`
  demo["verifier"][0].hint = `Convert 8849 m to feet ${CLEAR}${TITLE}with convert_units.`
  demo["answerer.final"][0].answer = `About 3483.86 feet ${HOSTILE}done.`
  const file = join(scratch, "hostile-script.json")
  writeFileSync(file, JSON.stringify(demo))
  return file
})()

const expectNoRawEscape = (label: string, text: string) => {
  expect(text.includes("\u001b"), `${label} holds a raw ESC`).toBe(false)
  expect(text.includes("\u0007"), `${label} holds a raw BEL`).toBe(false)
}

describe("ESC sequences from data", () => {
  it("are written visibly as \\x1b in the shown text", () => {
    expect(visibleText(`a${TITLE}b\tc\nd\u202ee`)).toBe("a\\x1b]0;pwned\\x07b\tc\nd\\u202ee")
  })

  it("smurfs run: the live view and the final answer show them as visible text", async () => {
    const r = await smurfs(["run", demoQuery, "--model", `scripted:${script}`, "--tools", "demo"])
    expect(r.code, r.stderr).toBe(0)
    expectNoRawEscape("stdout", r.stdout)
    expectNoRawEscape("stderr", r.stderr)
    expect(r.stdout).toContain("About 3483.86 feet \\x1b]0;pwned\\x07\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2Jdone.")
    expect(r.stderr).toContain("to feet \\x1b[2J\\x1b]0;pwned\\x07with convert_units")
    expect(r.stderr).toContain("8849 m high \\x1b]0;pwned")
  }, 30_000)

  it("smurfs run --json stays exact JSON, and smurfs show of it shows them as visible text", async () => {
    const r = await smurfs(["run", demoQuery, "--model", `scripted:${script}`, "--tools", "demo", "--json"])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).finalAnswer).toBe(`About 3483.86 feet ${HOSTILE}done.`)
    const file = join(scratch, "trajectory.json")
    writeFileSync(file, r.stdout)
    const shown = await smurfs(["show", file])
    expect(shown.code, shown.stderr).toBe(0)
    expectNoRawEscape("show", shown.stdout)
    expect(shown.stdout).toContain("Answer: About 3483.86 feet \\x1b]0;pwned\\x07")
    expect(shown.stdout).toContain("8849 m high \\x1b]0;pwned")
  }, 30_000)

  it("smurfs tools shows a tool description's escape sequences as visible text", async () => {
    const module = fileURLToPath(new URL("./fixtures/escape-tools.ts", import.meta.url))
    const r = await smurfs(["tools", "--tools", module])
    expect(r.code, r.stderr).toBe(0)
    expectNoRawEscape("tools", r.stdout)
    expect(r.stdout).toContain("Looks harmless.\\x1b]0;pwned\\x07\\x1b[2J")
  }, 30_000)
})
