import { Data, Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { captureConsole } from "../../test/capture-console.ts"
import { ModelUnreachable, Overloaded } from "../llm/errors.ts"
import { RunDirError } from "../trace/fs-problem.ts"
import { ExitCode, exitCodeOf } from "./exit-codes.ts"
import { BadInput, UsageError } from "./options.ts"
import { bugReport, runProgram } from "./run-program.ts"

let err: Array<string>
beforeEach(() => void ({ err } = captureConsole()))
afterEach(() => vi.restoreAllMocks())

describe("exitCodeOf", () => {
  it("reads the code from the error's kind; anything without one is a bug (1)", () => {
    expect(exitCodeOf(new UsageError("x"))).toBe(ExitCode.Usage)
    expect(exitCodeOf(new BadInput("x"))).toBe(ExitCode.BadInput)
    expect(exitCodeOf(new RunDirError({ path: "p", problem: "q", hint: "h" }))).toBe(ExitCode.BadInput)
    expect(exitCodeOf(new ModelUnreachable({ provider: "ollama", host: "h" }))).toBe(ExitCode.ModelUnavailable)
    // bench used to end with 1 on these and run with 4: one answer now
    expect(exitCodeOf(new Overloaded({ status: 503, host: "h" }))).toBe(ExitCode.ModelUnavailable)
    expect(exitCodeOf(new TypeError("undefined is not a function"))).toBe(ExitCode.Failure)
    expect(exitCodeOf({ kind: "nonsense" })).toBe(ExitCode.Failure)
  })
})

describe("runProgram", () => {
  it("succeeds with the program's code; a failure says its message (and hint) and ends with its kind's code", async () => {
    expect(await runProgram(Effect.succeed(7), { command: "t" })).toBe(7)
    const down = new ModelUnreachable({ provider: "ollama", host: "http://127.0.0.1:1" })
    expect(await runProgram(Effect.fail(down), { command: "t", hint: () => "then rerun" })).toBe(
      ExitCode.ModelUnavailable
    )
    expect(err).toEqual([`smurfs t: ${down.message}`, "then rerun"])
  })

  it("a defect is a bug: exit 1, the first frame, how to see the rest", async () => {
    expect(await runProgram(Effect.die(new TypeError("boom")), { command: "t" })).toBe(ExitCode.Failure)
    const said = err.join("\n")
    expect(said).toMatch(/^smurfs t: unexpected error: TypeError: boom\n\s*at /)
    expect(said).toContain("This is a bug in smurfs")
    expect(said).toContain("SMURFS_DEBUG=1")
  })

  it("SMURFS_DEBUG=1 shows the whole stack", () => {
    const error = new Error("boom")
    const short = bugReport("t", error, undefined, {})
    const long = bugReport("t", error, undefined, { SMURFS_DEBUG: "1" })
    expect(long.split("\n").length).toBeGreaterThan(short.split("\n").length)
  })

  it("SIGINT and SIGTERM interrupt the program: 130 and the command's own line; its listeners are gone after", async () => {
    const listeners = [process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      const said: Array<string> = []
      const running = runProgram(Effect.never, { command: "t", interrupted: () => said.push("kept what was done") })
      process.emit(signal, signal)
      expect(await running).toBe(ExitCode.Interrupted)
      expect(said).toEqual(["kept what was done"])
    }
    expect([process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]).toEqual(listeners)
  })
})

describe("the type checker knows every failure", () => {
  it("a new error class that says no kind does not compile at a command's edge", () => {
    // biome-ignore lint/complexity/noBannedTypes: an error class with no fields, as a user might write one
    class Unlisted extends Data.TaggedError("Unlisted")<{}> {}
    // checked by `tsc --noEmit` (test files are type-checked): the line below must fail to compile
    const unchecked = () => {
      // @ts-expect-error Unlisted has no `kind`: the edge could not give it an exit code
      void runProgram(Effect.fail(new Unlisted()), { command: "t" })
    }
    expect(typeof unchecked).toBe("function")
  })
})
