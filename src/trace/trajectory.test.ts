import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { emit, type RunEvent } from "./events.ts"
import { RecordPrompts, recording } from "./trajectory.ts"

const call = emit("model_call", {
  role: "planner",
  model: "m",
  promptTokens: 3,
  completionTokens: 1,
  durationMs: 1,
  attempt: 1,
  ok: true,
  messages: [{ role: "user", content: "the prompt" }],
  reply: "the reply"
})

describe("recorded prompts", () => {
  it("are kept by default", async () => {
    const { events } = await Effect.runPromise(recording("t", call))
    expect(events[0]!.data).toMatchObject({ messages: [{ role: "user", content: "the prompt" }], reply: "the reply" })
  })

  it("without RecordPrompts, a model call is recorded without its prompt, which a listener still sees", async () => {
    const seen: Array<RunEvent> = []
    const { events } = await Effect.runPromise(
      recording("t", call, (e) => void seen.push(e)).pipe(Effect.provideService(RecordPrompts, false))
    )
    expect(events).toHaveLength(1)
    expect(events[0]!.data).not.toHaveProperty("messages")
    expect(events[0]!.data).toMatchObject({ role: "planner", promptTokens: 3, reply: "the reply" })
    expect(seen[0]!.data).toMatchObject({ messages: [{ role: "user", content: "the prompt" }] })
  })
})
