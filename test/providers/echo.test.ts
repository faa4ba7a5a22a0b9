// A new provider is one module plus its test (issue 21 §4): the echo provider of ./echo.ts works through the registry
// (spec, layer, doctor, error wording, the CLI's --model) without spec.ts, doctor.ts or the CLI naming it.
import { Effect } from "effect"
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { run as doctor } from "../../src/cli/commands/doctor.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { normalizeModelSpec } from "../../src/cli/model-option.ts"
import { runDoctor } from "../../src/llm/doctor.ts"
import { InvalidModelSpec, ModelNotFound, ModelUnreachable } from "../../src/llm/errors.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { fromStatus } from "../../src/llm/provider-errors.ts"
import { isPortableSpec, isTestModelSpec, modelLayer, parseModelSpec, providerNames } from "../../src/llm/spec.ts"
import { unregisterEcho } from "./echo.ts"

const PROBE_REPLY = '{"ok": true, "sum": 5}'
const reply = (spec: string) =>
  Effect.runPromise(
    Effect.provide(
      Effect.flatMap(Effect.service(LanguageModel), (m) => m.generate({ role: "r", messages: [] })),
      modelLayer(spec)
    )
  )

let output: string[] = []
beforeEach(() => {
  output = []
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void output.push(args.join(" ")))
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void output.push(args.join(" ")))
})
afterEach(() => void vi.restoreAllMocks())
afterAll(() => unregisterEcho())

describe("a provider registered from its own module", () => {
  it("is parsed, listed and built by modelLayer", async () => {
    expect(await Effect.runPromise(parseModelSpec("echo:hello"))).toMatchObject({ provider: "echo", reply: "hello" })
    expect(providerNames()).toContain("echo")
    expect((await reply("echo:hello")).text).toBe("hello")
    expect(isPortableSpec("echo:x")).toBe(true)
    expect(isTestModelSpec("echo:x")).toBe(false)
    const empty = await Effect.runPromise(Effect.flip(parseModelSpec("echo:")))
    expect(empty.message).toContain('the reply after "echo:" is missing')
    // the usage of every provider, its own included, in the message of a bad spec
    expect(new InvalidModelSpec({ spec: "x", reason: "r" }).message).toContain("echo:<reply>")
  })

  it("has its doctor checks run before the structured call through its layer", async () => {
    const report = await Effect.runPromise(runDoctor(`echo:${PROBE_REPLY}`, modelLayer(`echo:${PROBE_REPLY}`)))
    expect(report.problem).toBeUndefined()
    expect(report.checks.map((c) => [c.name, c.status])).toEqual([
      ["server", "skip"],
      ["structured output", "pass"]
    ])
    const wrong = await Effect.runPromise(runDoctor("echo:not json", modelLayer("echo:not json")))
    expect(wrong.problem).toBe("failed")
  })

  it("is what the CLI's --model takes (not read as an Ollama model name), and smurfs doctor checks it", async () => {
    expect(normalizeModelSpec("echo:x")).toEqual({ spec: "echo:x" })
    expect(await doctor(["--model", `echo:${PROBE_REPLY}`])).toBe(ExitCode.Ok)
    expect(output.join("\n")).toContain(`echoes ${JSON.stringify(PROBE_REPLY)}`)
    expect(output.join("\n")).toContain("✓ structured output")
  })

  it("words its servers' errors", () => {
    expect(new ModelUnreachable({ provider: "echo", host: "http://h:1" }).message).toBe(
      "Nobody echoes at http://h:1. Start the echo server with `echo-serve`."
    )
    expect(new ModelNotFound({ provider: "echo", model: "m", available: ["a"] }).message).toBe(
      'The echo server has no "m". The server has: a.'
    )
    const site = { provider: "echo", host: "http://h:1", model: "m", role: "r", timeoutMs: 1000 }
    expect(fromStatus(site, 404, "404 page not found", undefined).message).toContain(
      "Check that ECHO_HOST points at the model server"
    )
  })
})
