import { join } from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import { captureConsole } from "../../../test/capture-console.ts"
import { MINI_DATA } from "../../../test/data.ts"
import { ExitCode } from "../exit-codes.ts"
import { run } from "./tools.ts"

const capture = () => {
  const { out, err } = captureConsole()
  return { out: () => out.join("\n"), err: () => err.join("\n") }
}

afterEach(() => vi.restoreAllMocks())

describe("smurfs tools", () => {
  it("lists the demo tools with their parameters by default", async () => {
    const io = capture()
    expect(await run([])).toBe(ExitCode.Ok)
    expect(io.out()).toContain("demo: 5 tools")
    expect(io.out()).toContain(
      "calculator\n  Evaluate an arithmetic expression and return its value.\n  - expression: string (required)"
    )
    expect(io.out()).toMatch(/- attribute: string {2}Which fact/)
  })

  it("prints JSON with the JSON Schema of each tool", async () => {
    const io = capture()
    expect(await run(["--json", "--tools", "demo"])).toBe(ExitCode.Ok)
    const listed = JSON.parse(io.out()) as {
      library: string
      tools: Array<{ name: string; parameters: { required: string[] } }>
    }
    expect(listed.library).toBe("demo")
    expect(listed.tools.find((t) => t.name === "convert_units")!.parameters.required).toEqual(["value", "from", "to"])
  })

  it("lists a StableToolBench query's APIs", async () => {
    const io = capture()
    const file = join(MINI_DATA.path, "queries", "G1_instruction.json")
    expect(await run(["--tools", file, "--query-id", "1073"])).toBe(ExitCode.Ok)
    expect(io.out()).toContain("toolbench:1073: 3 tools")
    expect(io.out()).toContain("- q: string (required)  The user's search query string.")
  })

  it("exits with BadInput for a bad source and Usage for a bad flag", async () => {
    const io = capture()
    expect(await run(["--tools", "/no/such/file.json"])).toBe(ExitCode.BadInput)
    expect(io.err()).toContain("does not exist")
    expect(await run(["--nope"])).toBe(ExitCode.Usage)
    expect(await run(["--help"])).toBe(ExitCode.Ok)
    expect(io.out()).toContain("usage: smurfs tools")
  })
})
