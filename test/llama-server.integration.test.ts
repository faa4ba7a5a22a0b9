// smurfs' OpenAI-compatible client against a real llama.cpp `llama-server` (issue 33): `--slot-affinity auto` reads its
// slots from /props, each task's requests land on the slot named by `id_slot` and reuse what it holds, and structured
// replies (`response_format: json_schema`) are accepted. Runs only with SMURFS_LLAMA_SERVER=<path to llama-server>
// (built locally from llama.cpp's tools/server; CI builds none), on the tiny generated model, one thread.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeTinyGguf } from "../scripts/tiny-gguf.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import { withModelTask } from "../src/llm/model-task.ts"
import { llamaServerSlots } from "../src/llm/openai.ts"
import { type ModelOptions, modelLayer } from "../src/llm/spec.ts"
import { type LlamaServer, llamaServerMetrics, llamaServerProblem, startLlamaServer } from "./llama-server.ts"

const binary = process.env["SMURFS_LLAMA_SERVER"]
const skipped =
  binary === undefined
    ? "SMURFS_LLAMA_SERVER is not set (the path of a llama-server built locally, see docs/performance.md)"
    : llamaServerProblem(binary)

/** What every task's prompt opens with (as a method's system text does): the slots' similarity sees it. */
const SHARED = Array.from({ length: 30 }, (_, i) => `Rule ${i}: answer briefly and name the tool you used.`).join(" ")

/** A task's prompt: the shared opening, then its own text, then `content`. */
const messages = (key: string, content: string) => [
  {
    role: "system" as const,
    content: `${SHARED} ${Array.from({ length: 30 }, (_, i) => `Fact ${i} of task ${key}: ${(i * 7919) % 1000}.`).join(" ")}`
  },
  { role: "user" as const, content }
]

/** One request of the calling task; resolves with the prompt tokens it sent. */
const ask = (key: string, content: string) =>
  Effect.flatMap(Effect.service(LanguageModel), (m) =>
    Effect.map(
      m.generate({ role: "executor.thought", messages: messages(key, content), options: { maxTokens: 4 } }),
      (reply) => reply.usage.promptTokens
    )
  )

/**
 * Task `outer`'s first request, all of task `inner` (two requests), then `outer`'s second request; resolves with the
 * prompt tokens of `outer`'s first request and the tokens its second one reused (llamacpp:prompt_tokens_cached_total).
 */
const interleaved = (server: () => LlamaServer, outer: string, inner: string) =>
  withModelTask(outer)(
    Effect.gen(function* () {
      const sent = yield* ask(outer, "first question")
      yield* withModelTask(inner)(Effect.andThen(ask(inner, "first question"), ask(inner, "second question")))
      const cached = () =>
        Effect.promise(() => llamaServerMetrics(server())).pipe(Effect.map((m) => m["prompt_tokens_cached_total"]!))
      const before = yield* cached()
      yield* ask(outer, "second question")
      return { sent, reused: (yield* cached()) - before }
    })
  )

interface Slot {
  readonly id: number
  readonly prompt?: string
}

describe.skipIf(skipped !== undefined)(
  `a real llama-server${skipped === undefined ? "" : ` (skipped: ${skipped})`}`,
  { timeout: 120_000 },
  () => {
    let dir: string
    let server: LlamaServer
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "smurfs-llama-server-"))
      server = await startLlamaServer({
        binary: binary!,
        model: writeTinyGguf(join(dir, "tiny.gguf")),
        slots: 2,
        ctxPerSlot: 4096,
        // slots only: the host-memory prompt cache would hide which slot kept what; --no-jinja: on the Jinja path this
        // server refuses every json_schema reply format with the tiny model's template (docs/performance.md)
        extra: ["--cache-ram", "0", "--no-jinja"]
      })
    }, 120_000)
    afterAll(async () => {
      await server?.stop()
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    const run = <A, E>(effect: Effect.Effect<A, E, LanguageModel>, options: ModelOptions = {}) =>
      Effect.runPromise(
        Effect.provide(effect, modelLayer("openai:tiny", { baseURL: server.baseURL, apiKey: "none", ...options }))
      )
    const slots = async () => (await (await fetch(`${server.root}/slots`)).json()) as Array<Slot>

    it("reads the slots from /props", async () => {
      expect(
        await llamaServerSlots({
          model: "tiny",
          baseURL: server.baseURL,
          apiKey: "none",
          numCtx: 4096,
          timeoutMs: 10_000,
          seed: 1,
          temperature: 0
        })
      ).toBe(2)
    })

    it("keeps each task on the slot it names, where its next request finds its whole prompt", async () => {
      // pinned: a takes slot 0, b (a still running) slot 1, so a's second request reuses all of a's first prompt
      const { sent, reused } = await run(
        interleaved(() => server, "a", "b"),
        { slotAffinity: "auto" }
      )
      const [zero, one] = await slots()
      expect(zero?.prompt).toContain("task a:")
      expect(zero?.prompt).toContain("second question")
      expect(one?.prompt).toContain("task b:")
      expect(reused).toBeGreaterThan(sent * 0.95)
    })

    it("without affinity the server gives the second task the first one's slot (the shared opening is similar)", async () => {
      const { sent, reused } = await run(interleaved(() => server, "c", "d"))
      // c's second request found only the shared opening: d's first request had taken c's slot
      expect(reused).toBeLessThan(sent * 0.75)
      expect(reused).toBeGreaterThan(sent * 0.25)
    })

    it("answers a structured request (response_format json_schema) with JSON of that schema", async () => {
      const schema = {
        type: "object",
        properties: { answer: { type: "string", maxLength: 20 } },
        required: ["answer"],
        additionalProperties: false
      }
      const reply = await run(
        Effect.flatMap(Effect.service(LanguageModel), (m) =>
          m.generate({
            role: "executor.thought",
            messages: [{ role: "user", content: "Reply with an answer." }],
            format: schema,
            options: { maxTokens: 64 }
          })
        )
      )
      const parsed = JSON.parse(reply.text) as { answer?: unknown }
      expect(typeof parsed.answer).toBe("string")
    })
  }
)
