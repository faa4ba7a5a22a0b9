// Issue 32 §11: the judge as ToolEval asks it, read from the request bodies a fake OpenAI server received, with the
// stand-in checkout (test/fixtures/stabletoolbench: their layout, our texts): the win round's re-judge asks for no reason
// (their check_is_solved with return_reason=False), each function's description and the reason's description are
// theirs, and every request carries their config's max_tokens.
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import { judgeInputFromRecord } from "../bench/eval/judge-input.ts"
import { judgePrompts } from "../bench/eval/judge-prompts.ts"
import { judgePass } from "../bench/eval/pass-rate.ts"
import { rngFor } from "../bench/eval/rng.ts"
import { fakeRecord } from "../bench/eval/test-fixtures.ts"
import { judgeRound } from "../bench/eval/win-rate.ts"
import { modelLayer } from "../src/llm/spec.ts"
import { jsonSchemaOf } from "../src/llm/structured.ts"
import { type FakeOpenAI, startFakeOpenAI } from "./fake-servers/openai.ts"

const STB = fileURLToPath(new URL("./fixtures/stabletoolbench", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "smurfs-judge-reference-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const candidate = judgeInputFromRecord(
  fakeRecord({
    taskId: "7",
    query: "Weather in Paris?",
    finalAnswer: "Sunny, 18 C.",
    calls: [{ tool: "weather_for_meteo", ok: true, content: "sunny" }]
  })
)
const reference = judgeInputFromRecord(
  fakeRecord({ taskId: "7", method: "react", query: "Weather in Paris?", finalAnswer: "Rainy.", calls: [] })
)

let server: FakeOpenAI
const saved = process.env["OPENAI_BASE_URL"]
beforeEach(async () => {
  // every status function answers Unsure, so each check is followed by the trajectory's parse; the select picks 1
  server = await startFakeOpenAI((body) => {
    const properties = body.response_format.json_schema.schema.properties
    const reason = "reason" in properties ? { reason: "because" } : {}
    return JSON.stringify("index" in properties ? { index: 1, ...reason } : { answer_status: "Unsure", ...reason })
  })
  process.env["OPENAI_BASE_URL"] = server.baseURL
})
afterEach(async () => {
  if (saved === undefined) delete process.env["OPENAI_BASE_URL"]
  else process.env["OPENAI_BASE_URL"] = saved
  await server.close()
})

const judged = <A, E>(effect: Effect.Effect<A, E, never>) => Effect.runPromise(effect)
const schemaOf = (body: { response_format: { json_schema: { schema: Record<string, any> } } }) =>
  body.response_format.json_schema.schema

describe("the judge as ToolEval asks it (issue 32 §11)", () => {
  it("a win round's re-judge asks for no reason; the pass rate and the select ask for theirs; every request has their max_tokens and descriptions", async () => {
    const prompts = judgePrompts(STB)
    const layer = modelLayer("openai:qwen2.5:7b")
    const round = await judged(
      judgeRound(
        {
          candidate,
          reference,
          candidateStatus: undefined,
          referenceStatus: undefined,
          rejudge: true,
          rng: rngFor(0, "x")
        },
        { prompts }
      ).pipe(Effect.provide(layer))
    )
    expect(round.stage).toBe("judge")
    const pass = await judged(judgePass(candidate, { prompts }).pipe(Effect.provide(layer)))
    expect(pass).toMatchObject({ label: "Unsure", reason: "because" })
    const bodies = server.chatRequests()
    const fns = bodies.map((b) => b.messages[0].content.trim().split(":")[0])
    expect(fns).toEqual([
      ...["STAND-IN CHECK", "STAND-IN PARSE", "STAND-IN CHECK", "STAND-IN PARSE", "STAND-IN SELECT"],
      ...["STAND-IN CHECK", "STAND-IN PARSE"]
    ])
    // the re-judge: their function's description, and no reason asked
    for (const body of bodies.slice(0, 4)) {
      expect(schemaOf(body).required).toEqual(["answer_status"])
      expect("reason" in schemaOf(body).properties).toBe(false)
    }
    expect(schemaOf(bodies[0]!).description).toBe("STAND-IN FUNCTION CHECK: the status of the answer")
    expect(schemaOf(bodies[1]!).description).toBe("STAND-IN FUNCTION PARSE: the status of the trajectory")
    // the select and the pass rate's checks: the reason as their tooleval.py describes it
    for (const body of [bodies[4]!, bodies[5]!, bodies[6]!]) {
      expect(schemaOf(body).required).toContain("reason")
      expect(schemaOf(body).properties.reason).toEqual({ type: "string", description: "STAND-IN REASON: why." })
    }
    expect(schemaOf(bodies[4]!).description).toBe("STAND-IN FUNCTION SELECT: the better answer")
    for (const body of bodies) expect(body).toMatchObject({ max_tokens: 777, temperature: 0.3 })
  })

  it("a checkout without registered_cls/tooleval.py (a partial copy) describes the reason in our words", () => {
    const partial = join(scratch, "partial")
    cpSync(STB, partial, { recursive: true })
    rmSync(join(partial, "toolbench/tooleval/evaluators/registered_cls/tooleval.py"))
    const reason = (dir: string) =>
      (jsonSchemaOf(judgePrompts(dir).status.check_answer_status)["properties"] as Record<string, unknown>)["reason"]
    expect(reason(partial)).toEqual({ type: "string", description: "The reason for the decision." })
    expect(reason(STB)).toEqual({ type: "string", description: "STAND-IN REASON: why." })
  })
})
