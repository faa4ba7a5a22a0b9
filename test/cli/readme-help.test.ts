// The command reference (docs/cli.md, linked from the README) says what `smurfs <command> --help` says, line by line, for every command.
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { CLI_DOC, helpOf, locate } from "../../scripts/readme-help.ts"
import { commandNames } from "../../src/cli/main.ts"

const FIX = "run `node scripts/readme-help.ts` to rewrite the reference from --help"

/** The first difference between the reference's block and the help, named by its line in docs/cli.md, or undefined when equal. */
const firstDifference = (readme: string, command: string, help: string): string | undefined => {
  const at = locate(readme, command)
  if (at === undefined) return `docs/cli.md has no <!-- help:${command} --> block for \`smurfs ${command}\`; ${FIX}`
  const lines = readme.split("\n")
  // the markers enclose a ```text fence
  const inside = lines.slice(at.start + 1, at.end - 2)
  const wanted = help.split("\n")
  for (let i = 0; i < Math.max(inside.length, wanted.length); i++) {
    if (inside[i] !== wanted[i]) {
      const where = `docs/cli.md line ${at.start + 2 + i} (smurfs ${command} --help line ${i + 1})`
      if (inside[i] === undefined) return `${where}: the reference lacks ${JSON.stringify(wanted[i])}; ${FIX}`
      if (wanted[i] === undefined)
        return `${where}: the reference has ${JSON.stringify(inside[i])} but --help ends before it; ${FIX}`
      return `${where}: the reference says ${JSON.stringify(inside[i])} but --help says ${JSON.stringify(wanted[i])}; ${FIX}`
    }
  }
  return undefined
}

describe("the command reference (docs/cli.md)", () => {
  const reference = readFileSync(CLI_DOC, "utf8")
  it.concurrent.each(commandNames())("matches `smurfs %s --help`", async (command) => {
    expect(firstDifference(reference, command, await helpOf(command))).toBeUndefined()
  })

  it("names the differing line when they drift", () => {
    const text = ["x", "<!-- help:demo -->", "```text", "usage: demo", "  --a  one", "```", "<!-- /help:demo -->"].join(
      "\n"
    )
    expect(firstDifference(text, "demo", "usage: demo\n  --a  one")).toBeUndefined()
    expect(firstDifference(text, "demo", "usage: demo\n  --a  two")).toBe(
      `docs/cli.md line 5 (smurfs demo --help line 2): the reference says "  --a  one" but --help says "  --a  two"; ${FIX}`
    )
    expect(firstDifference(text, "demo", "usage: demo\n  --a  one\n  --b  new")).toContain(
      "docs/cli.md line 6 (smurfs demo --help line 3): the reference lacks"
    )
  })
})
