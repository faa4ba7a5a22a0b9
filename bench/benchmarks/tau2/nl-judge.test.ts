import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { GenerateRequest } from "../../../src/llm/language-model.ts"
import { makeScriptedModel, type Script } from "../../../src/llm/scripted.ts"
import { silentProgress } from "../../progress.ts"
import { readRecords } from "../../run-dir.ts"
import { benchSettings } from "../../settings.ts"
import { tau2Benchmark } from "./benchmark.ts"
import { domainView, loadTau2DomainView } from "./domain-view.ts"
import { loadTau2DomainSync } from "./load.ts"
import { judgeNlAssertions, NL_JUDGE_ROLE, nlJudgePromptOf } from "./nl-judge.ts"
import { Tau2RecordData, type TranscriptMessage } from "./transcript.ts"

const FIXTURE = join(import.meta.dirname, "../../../test/fixtures/tau2")
const domain = loadTau2DomainSync(FIXTURE, "retail")
const view = domainView(domain)
// task 36: reward basis DB and NL_ASSERTION, one gold write, two assertions
const task = domain.tasks.find((t) => t.id === "36")!
const assertions = task.evaluation_criteria!.nl_assertions!
const gold = task.evaluation_criteria!.actions![0]!

const SAID = "The most expensive item is the camera; it costs $481.50."
/** A conversation that makes the gold write and tells the user about the camera. */
const messages: Array<TranscriptMessage> = [
  { role: "user", content: "Hi, I am Daiki Sanchez.", turn: 0 },
  { role: "assistant", toolCalls: [{ id: "c1", name: gold.name, arguments: gold.arguments }], turn: 1 },
  { role: "tool", id: "c1", name: gold.name, content: "{}", error: false, turn: 1 },
  { role: "assistant", content: SAID, turn: 2 },
  { role: "user", content: "###STOP###", turn: 3 }
]
const finished = { messages, termination: "user_stop" as const, db: undefined }

const verdicts = (met: ReadonlyArray<boolean>) => ({
  results: met.map((m, i) => ({ expectedOutcome: assertions[i], reasoning: `reason ${i}`, metExpectation: m }))
})

const judgeWith = (script: Script) => ({
  model: makeScriptedModel(script, "judge"),
  spec: "scripted:judge",
  prompt: nlJudgePromptOf(FIXTURE).text
})

const judged = (script: Script) => Effect.runPromise(judgeNlAssertions(judgeWith(script), messages, assertions))

const scoreWith = async (script: Script) => {
  const judgement = await judged(script)
  return view.score(task, {
    ...finished,
    ...(judgement.kind === "judged" ? { nlVerdicts: judgement.verdicts } : { nlProblem: judgement.problem })
  })
}

describe("τ²'s natural-language assertions judged by a model", () => {
  it("without a judge, reports NL_ASSERTION not evaluated and scores the database alone", () => {
    const reward = view.score(task, finished)
    expect(reward.reward).toBe(1)
    expect(reward.breakdown).toEqual({ DB: 1 })
    expect(reward.notes?.join("\n")).toContain("NL_ASSERTION not evaluated (no judge)")
  })

  it("keeps the reward when every assertion is met, and the record keeps the verdicts", async () => {
    const reward = await scoreWith([verdicts([true, true])])
    expect(reward.reward).toBe(1)
    expect(reward.breakdown).toEqual({ DB: 1, NL_ASSERTION: 1 })
    expect(reward.notes).toBeUndefined()
    expect(reward.info?.["nlAssertions"]).toEqual([
      { nl_assertion: assertions[0], met: true, justification: "reason 0" },
      { nl_assertion: assertions[1], met: true, justification: "reason 1" }
    ])
  })

  it("scores 0 when an assertion is not met", async () => {
    const reward = await scoreWith([verdicts([true, false])])
    expect(reward.reward).toBe(0)
    expect(reward.breakdown).toEqual({ DB: 1, NL_ASSERTION: 0 })
    const checks = (reward.info?.["nlAssertions"] ?? []) as Array<{ met: boolean }>
    expect(checks.map((c) => c.met)).toEqual([true, false])
  })

  it("leaves NL_ASSERTION not evaluated, saying why, when the judge's replies stay malformed", async () => {
    // the first reply and both reflections out of shape: no verdict, never a guessed one
    const judgement = await judged(["not json at all", { results: "yes" }, verdicts([true])])
    expect(judgement.kind).toBe("failed")
    const problem = judgement.kind === "failed" ? judgement.problem : ""
    expect(problem).toContain("the judge (scripted:judge) gave no verdict: MalformedOutput")
    const reward = await scoreWith(["not json at all", { results: "yes" }, verdicts([true])])
    expect(reward.reward).toBe(1)
    expect(reward.breakdown).toEqual({ DB: 1 })
    expect(reward.info?.["notEvaluated"]).toEqual(["NL_ASSERTION"])
    expect(reward.notes?.join("\n")).toContain(`NL_ASSERTION not evaluated (${problem})`)
  })

  it("gives no verdict when the judge's server fails", async () => {
    const judgement = await judged([])
    expect(judgement).toMatchObject({ kind: "failed" })
    expect(judgement.kind === "failed" && judgement.problem).toContain("ModelServerError")
  })

  it("asks with the instructions as the system message and the transcript and assertions as the user's", async () => {
    const requests: Array<GenerateRequest> = []
    const judgement = await judged([
      (request: GenerateRequest) => {
        requests.push(request)
        return verdicts([false, true])
      }
    ])
    expect(judgement.kind).toBe("judged")
    expect(requests).toHaveLength(1)
    const [request] = requests
    expect(request!.role).toBe(NL_JUDGE_ROLE)
    expect(request!.options?.temperature).toBe(0)
    expect(request!.format).toBeDefined()
    expect(request!.messages[0]).toEqual({ role: "system", content: nlJudgePromptOf(FIXTURE).text })
    const user = request!.messages[1]!.content
    // τ²'s transcript: `role: content` a line, None for a message of only tool calls
    expect(user).toContain(
      `user: Hi, I am Daiki Sanchez.\nassistant: None\ntool: {}\nassistant: ${SAID}\nuser: ###STOP###`
    )
    // the assertions as τ²'s f-string writes a list of str
    expect(user).toContain(`[${assertions.map((a) => `'${a}'`).join(", ")}]`)
  })

  it("reads τ²'s instructions from the checkout's evaluator when present, else ours", () => {
    expect(nlJudgePromptOf(FIXTURE).source).toBe("smurfs")
    const checkout = mkdtempSync(join(tmpdir(), "tau2-judge-"))
    const evaluator = join(checkout, "src", "tau2", "evaluator")
    mkdirSync(evaluator, { recursive: true })
    const file = join(evaluator, "evaluator_nl_assertions.py")
    writeFileSync(file, 'x = 1\n        system_prompt = """\n        Grade it.\n        """\n')
    expect(nlJudgePromptOf(checkout)).toEqual({ text: "\n        Grade it.\n        ", source: `tau2:${file}` })
    writeFileSync(file, "nothing here\n")
    expect(() => nlJudgePromptOf(checkout)).toThrow(/system_prompt/)
  })
})

describe("bench --tau2 --judge", () => {
  it("judges each finished conversation's assertions and records the judge and its prompt in run.json", async () => {
    const work = mkdtempSync(join(tmpdir(), "tau2-judge-run-"))
    const script = (name: string, value: unknown) => {
      const file = join(work, `${name}.json`)
      writeFileSync(file, JSON.stringify(value))
      return `scripted:${file}`
    }
    const write = { toolCalls: [{ id: "c1", name: gold.name, arguments: gold.arguments }] }
    const out = join(work, "run")
    const settings = benchSettings({
      out,
      tau2: FIXTURE,
      ids: ["36"],
      runs: 2,
      concurrency: 1,
      model: script("agent", { "tau2.agent": [write, SAID, write, SAID] }),
      userModel: script("user", { "tau2.user": ["Hi.", "###STOP###", "Hi.", "###STOP###"] }),
      // the first trial's assertions met, the second's not
      judge: script("judge", { [NL_JUDGE_ROLE]: [verdicts([true, true]), verdicts([true, false])] })
    })
    const outcome = await Effect.runPromise(tau2Benchmark(loadTau2DomainView).run(settings, silentProgress))
    expect(outcome.kind === "ran" && outcome.summary.recorded).toBe(2)
    const rewards = readRecords(out, "tau2-agent", "retail")
      .map((r) => Tau2RecordData.parse(r.benchmark))
      .sort((a, b) => a.trial - b.trial)
      .map((d) => [d.reward.reward, d.reward.breakdown])
    expect(rewards).toEqual([
      [1, { DB: 1, NL_ASSERTION: 1 }],
      [0, { DB: 1, NL_ASSERTION: 0 }]
    ])
    const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8")) as { options: Record<string, unknown> }
    expect(config.options["judge"]).toBe(settings.judge)
    expect(config.options["judgePrompt"]).toBe("smurfs")
  })
})
