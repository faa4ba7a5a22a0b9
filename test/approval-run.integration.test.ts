// `smurfs run --approve` on server-filesystem as a user runs it: a refused write is a failed tool result the agents
// see and work around, nothing is written; a glob that names the tool lets it through; a bad policy is bad usage.
import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ExitCode } from "../src/cli/exit-codes.ts"
import { isKind } from "../src/trace/events.ts"
import { smurfs } from "./cli/spawn.ts"
import { noteCopyFolder } from "./note-copy.ts"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A folder with a note, and a scripted model that first tries to write a file, then reads the note. */
const setup = () => {
  const folder = noteCopyFolder("smurfs-approve-run-")
  dirs.push(folder.dir)
  return folder
}

const run = (dir: string, model: string, ...extra: Array<string>) =>
  smurfs([
    "run",
    "Copy the note, then say what it says",
    "--model",
    `scripted:${model}`,
    "--tools",
    `mcp:node_modules/.bin/mcp-server-filesystem ${dir}`,
    "--json",
    ...extra
  ])

const toolCalls = (stdout: string) =>
  (
    JSON.parse(stdout) as { events: Array<{ type: string; data: { tool: string; ok: boolean; error?: string } }> }
  ).events
    .filter((e) => isKind(e as never, "tool_call"))
    .map((e) => e.data)

describe("smurfs run --approve on server-filesystem", () => {
  it("none: the write is refused as a tool result, nothing is written, the agents read the note and answer", async () => {
    const { dir, model } = setup()
    const r = await run(dir, model, "--approve", "none")
    expect(r.code, r.stderr).toBe(ExitCode.Ok)
    const [write, read] = toolCalls(r.stdout)
    expect(write).toMatchObject({ tool: "write_file", ok: false })
    expect(write!.error).toMatch(/was not approved \(--approve none; its server marks it destructive\)/)
    expect(read).toMatchObject({ tool: "read_text_file", ok: true })
    expect(JSON.parse(r.stdout).finishType).toBe("give_answer")
    expect(existsSync(join(dir, "copy.txt"))).toBe(false)
  }, 300_000)

  it("a glob naming the tool lets the write through; off a terminal with no --approve every call is made", async () => {
    for (const extra of [["--approve", "write_*"], []]) {
      const { dir, model } = setup()
      const r = await run(dir, model, ...extra)
      expect(r.code, r.stderr).toBe(ExitCode.Ok)
      expect(toolCalls(r.stdout)[0]).toMatchObject({ tool: "write_file", ok: true })
      expect(readFileSync(join(dir, "copy.txt"), "utf8")).toBe("copied")
    }
  }, 300_000)

  it("a policy that is not one is bad usage, said before anything starts", async () => {
    const { dir, model } = setup()
    const r = await run(dir, model, "--approve", "rm -rf")
    expect(r.code).toBe(ExitCode.Usage)
    expect(r.stderr).toContain('"rm -rf" is not a tool-name glob')
  }, 120_000)
})
