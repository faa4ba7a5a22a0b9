// A tool cannot take the CLI down or corrupt its output: stdout writes from tool modules go to stderr,
// and a tool calling process.exit fails that call, named, while the run goes on.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { smurfs } from "../cli/spawn.ts"

const TOOLS = fileURLToPath(new URL("./fixtures/unruly-tools.ts", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "smurfs-containment-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/**
 * A scripted Smurfs run of the default loop (what `smurfs run` runs) that calls `tool` with `args` and then answers:
 * one fused JSON request per step; the tool's short response is the step's answer (no Answer agent call).
 */
const script = (name: string, tool: string, args: object): string => {
  const file = join(scratch, `${name}.json`)
  writeFileSync(
    file,
    JSON.stringify({
      planner: [{ subtasks: ["Find what smurf means"] }],
      "executor.fused": [{ thought: `use ${tool}`, tool, arguments: args }],
      verifier: [{ status: "solved", reason: "answered" }],
      "answerer.subtask": [{ answer: "a smurf is a small blue creature" }],
      "answerer.final": [{ answer: "A smurf is a small blue creature." }],
      $cycle: true
    })
  )
  return file
}

interface Json {
  finishType: string
  events: Array<{ type: string; tool?: string; result?: { ok: boolean; error?: string } } & Record<string, unknown>>
}

describe("tool containment (smurfs run)", () => {
  it("a tool module printing to stdout leaves `run --json` parseable; its output goes to stderr", async () => {
    const r = await smurfs([
      "run",
      "What is a smurf?",
      "--tools",
      TOOLS,
      "--model",
      `scripted:${script("noisy", "noisy_lookup", { word: "smurf" })}`,
      "--json"
    ])
    expect(r.code, r.stderr).toBe(0)
    const t = JSON.parse(r.stdout) as Json
    expect(t.finishType).toBe("give_answer")
    expect(r.stdout).not.toContain("noisy_lookup: looking up")
    expect(r.stdout).not.toContain("raw stdout write")
    expect(r.stdout).not.toContain("unruly-tools: loaded")
    expect(r.stderr).toContain("noisy_lookup: looking up smurf")
    expect(r.stderr).toContain("noisy_lookup: raw stdout write")
    expect(r.stderr).toContain("unruly-tools: loaded")
    expect(JSON.stringify(t)).toContain("small blue creature")
  })

  it("a tool calling process.exit fails that call with the tool's name; the CLI finishes and prints its JSON", async () => {
    const r = await smurfs([
      "run",
      "What is a smurf?",
      "--tools",
      TOOLS,
      "--model",
      `scripted:${script("quit", "quitter", {})}`,
      "--json"
    ])
    expect(r.code, r.stderr).toBe(0)
    const t = JSON.parse(r.stdout) as Json
    const text = JSON.stringify(t.events)
    expect(text).toContain('tool \\"quitter\\" called process.exit(7)')
    expect(t.finishType).toBeDefined()
  })
})

describe("tool containment (smurfs tools, smurfs doctor)", () => {
  it("a tool module printing while it loads leaves `tools --json` and `doctor --tools --json` parseable", async () => {
    const listed = await smurfs(["tools", "--tools", TOOLS, "--json"])
    expect(listed.code, listed.stderr).toBe(0)
    expect((JSON.parse(listed.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain(
      "noisy_lookup"
    )
    expect(listed.stderr).toContain("unruly-tools: loaded")
    const checked = await smurfs(["doctor", "--tools", TOOLS, "--json"])
    expect(checked.code, checked.stderr).toBe(0)
    expect((JSON.parse(checked.stdout) as { tools: Array<{ ok: boolean }> }).tools.every((c) => c.ok)).toBe(true)
    expect(checked.stderr).toContain("unruly-tools: loaded")
  })
})
