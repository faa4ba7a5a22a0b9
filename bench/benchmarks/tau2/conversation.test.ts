import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describe, expect, it } from "vitest"
import type { SmurfsOptions } from "../../../src/agents/smurfs-options.ts"
import { LanguageModel, type LanguageModelShape } from "../../../src/llm/language-model.ts"
import { ModelTask } from "../../../src/llm/model-task.ts"
import { makeScriptedModel, type Script, scriptedLayer } from "../../../src/llm/scripted.ts"
import { paperLoop } from "../../../test/pipeline-fixtures.ts"
import type { TaskRecord } from "../../run-format.ts"
import { runConversationTask } from "./conversation-task.ts"
import { agentInstructionOf } from "./conversers.ts"
import { rewardLabels } from "./harness.ts"
import { testDomain } from "./test-domain.ts"
import { Tau2RecordData } from "./transcript.ts"
import { conversationHtml } from "./transcript-html.ts"
import { conversationLines } from "./transcript-text.ts"
import { userView } from "./user-simulator.ts"

const GUIDELINES = "Play a customer. <PERSONA_GUIDELINES>Say ###STOP### when done."

const job = (method: string, run?: number) => ({
  method,
  query: { group: "retail", id: "0", query: "", apiList: [], relevant: [] },
  ...(run === undefined ? {} : { run })
})

/** One conversation of `method` with scripted agent and user replies; its record and its τ² data. */
const converse = async (method: string, agent: Script, user: Script, smurfs?: SmurfsOptions) => {
  const result = await Effect.runPromise(
    runConversationTask(job(method), {
      domain: testDomain as never,
      guidelines: GUIDELINES,
      agentInstruction: agentInstructionOf("/nonexistent").text,
      userModel: makeScriptedModel(user, "user"),
      userModelSpec: "scripted:user",
      modelSpec: "scripted:agent",
      smurfs,
      fullTrace: true
    }).pipe(Effect.provide(scriptedLayer(agent, "agent")))
  )
  if (result.kind !== "record") throw new Error(result.error)
  return { record: result.record as TaskRecord, data: Tau2RecordData.parse(result.record.benchmark) }
}

const cancel = {
  toolCalls: [{ id: "c1", name: "cancel_pending_order", arguments: { order_id: "#W1", reason: "no longer needed" } }]
}

describe("a τ² conversation (tau2-agent)", () => {
  it("performs the gold actions, is stopped by the user and scores 1, with the write recorded", async () => {
    const { record, data } = await converse(
      "tau2-agent",
      { "tau2.agent": [cancel, "Your order #W1 is cancelled."] },
      { "tau2.user": ["Please cancel my order #W1, I no longer need it.", "Thanks! ###STOP###"] }
    )
    expect(data.termination).toBe("user_stop")
    expect(data.reward.reward).toBe(1)
    expect(record.error ?? "").toBe("")
    expect(record.finishType).toBe("give_answer")
    expect(data.messages.map((m) => m.role)).toEqual(["assistant", "user", "assistant", "tool", "assistant", "user"])
    const tool = data.messages[3]!
    expect(tool.role === "tool" && tool.writes).toEqual([
      {
        table: "orders",
        key: "#W1",
        before: { status: "pending", items: ["keyboard"] },
        after: { status: "cancelled", items: ["keyboard"] }
      }
    ])
    expect(data.goldDiff).toEqual([])
    expect(data.dbHash).toBe(data.goldHash)
    const html = conversationHtml(record)
    expect(html).toContain("equals the gold state")
    expect(html).toContain("call cancel_pending_order")
    expect(html).toMatch(/cancel_pending_order returned, wrote 1 entry/)
    // the agent's tool call is counted in the record's totals; the user's model calls apart
    expect(record.totals.toolCalls).toBe(1)
    expect(record.totals.modelCalls).toBe(2)
    expect(data.userTotals.modelCalls).toBe(2)
  })

  it("stops early (the user leaves before anything is done) and scores 0, the gold diff naming the order", async () => {
    const { record, data } = await converse(
      "tau2-agent",
      { "tau2.agent": ["Why do you want to cancel it?"] },
      { "tau2.user": ["Please cancel my order #W1.", "Never mind. ###STOP###"] }
    )
    expect(data.termination).toBe("user_stop")
    expect(data.reward.reward).toBe(0)
    expect(record.error).toMatch(/reward 0/)
    expect(data.goldDiff).toEqual([{ path: ["orders", "#W1", "status"], gold: "cancelled", actual: "pending" }])
    // what `smurfs show` prints of it
    expect(conversationLines(record)).toEqual([
      "Conversation:",
      "  agent: Hi! How can I help you today?",
      "  user: Please cancel my order #W1.",
      "  agent: Why do you want to cancel it?",
      "  user: Never mind. ###STOP###",
      "Reward 0 (DB 0): not solved; ended: user_stop (the user said Never mind. ###STOP###)",
      "  the database differs from the gold state",
      "Database: 1 field differs from the gold state",
      '  orders.#W1.status: gold "cancelled", final "pending"'
    ])
    // the transcript page: every message, the reward, and the database against the gold state field by field
    const html = conversationHtml(record)
    expect(html).toContain("Reward 0")
    expect(html).toContain("Why do you want to cancel it?")
    expect(html).toContain("differs from the gold state in 1 field")
    expect(html).toMatch(
      /<td>orders\/#W1<\/td><td>status<\/td><td class="gold">&quot;cancelled&quot;<\/td><td class="final">&quot;pending&quot;<\/td>/
    )
  })

  it("is one task for the server: the agent's and the user's requests carry the same task key (lanes, slots)", async () => {
    const seen: Array<string | undefined> = []
    // a model that notes the task each request runs in, then answers as the scripted one
    const noting = (model: LanguageModelShape): LanguageModelShape => ({
      ...model,
      generate: (request) =>
        Effect.flatMap(Effect.service(ModelTask), (task) => {
          seen.push(task?.key)
          return model.generate(request)
        })
    })
    const agent = makeScriptedModel({ "tau2.agent": [cancel, "Your order #W1 is cancelled."] }, "agent")
    const user = makeScriptedModel({ "tau2.user": ["Please cancel my order #W1.", "Thanks! ###STOP###"] }, "user")
    const result = await Effect.runPromise(
      runConversationTask(job("tau2-agent"), {
        domain: testDomain as never,
        guidelines: GUIDELINES,
        agentInstruction: "x",
        userModel: noting(user),
        userModelSpec: "scripted:user",
        modelSpec: "scripted:agent",
        fullTrace: false
      }).pipe(Effect.provide(Layer.succeed(LanguageModel, noting(agent))))
    )
    expect(result.kind).toBe("record")
    expect(seen.length).toBeGreaterThanOrEqual(4)
    expect(new Set(seen)).toEqual(new Set(["tau2-agent retail/0#0"]))
  })

  it("ends at the step limit as max_steps, which scores 0 whatever the database", async () => {
    const result = await Effect.runPromise(
      runConversationTask(job("tau2-agent"), {
        domain: testDomain as never,
        guidelines: GUIDELINES,
        agentInstruction: "x",
        userModel: makeScriptedModel({ "tau2.user": ["cancel #W1"], $cycle: true }, "user"),
        userModelSpec: "scripted:user",
        modelSpec: "scripted:agent",
        fullTrace: false,
        limits: { maxSteps: 6 }
      }).pipe(
        Effect.provide(
          scriptedLayer({
            "tau2.agent": [{ toolCalls: [{ name: "get_order_details", arguments: { order_id: "#W1" } }] }],
            $cycle: true
          })
        )
      )
    )
    const data = Tau2RecordData.parse(result.kind === "record" ? result.record.benchmark : undefined)
    expect(data.termination).toBe("max_steps")
    // τ² checks the limit only when no tool result is awaited: user 1, call 2, result 3, call 4, result 5, call 6, result 7
    expect(data.steps).toBe(7)
    expect(data.reward.reward).toBe(0)
  })

  it("shows the user only the agent's texts, roles flipped (τ²'s flip_roles)", () => {
    const view = userView([
      { role: "assistant", content: "Hi! How can I help you today?", turn: 0 },
      { role: "user", content: "cancel #W1", turn: 1 },
      { role: "assistant", toolCalls: [{ id: "a", name: "get_order_details", arguments: {} }], turn: 2 },
      { role: "tool", id: "a", name: "get_order_details", content: "{}", error: false, turn: 3 },
      { role: "assistant", content: "Done.", turn: 4 }
    ])
    expect(view).toEqual([
      { role: "user", content: "Hi! How can I help you today?" },
      { role: "assistant", content: "cancel #W1" },
      { role: "user", content: "Done." }
    ])
  })
})

describe("a conversation whose model server fails", () => {
  it("is an error record (not a result: --resume redoes it), whoever's server failed", async () => {
    // the agent's script runs out after its first reply: its server "fails" on the second call
    const { record } = await converse(
      "tau2-agent",
      { "tau2.agent": [{ toolCalls: [{ name: "get_order_details", arguments: { order_id: "#W1" } }] }] },
      { "tau2.user": ["Cancel #W1.", "###STOP###"] }
    )
    expect(record.finishType).toBe("error")
    expect(record.error).toMatch(/ran out of replies for role "tau2.agent"/)
    expect(rewardLabels(record)).toBeUndefined()
    const user = await converse("tau2-agent", { "tau2.agent": ["How can I help?"] }, { "tau2.user": ["Cancel #W1."] })
    expect(user.record.finishType).toBe("error")
    expect(user.data.termination).toBe("user_error")
    expect(user.record.error).toMatch(/^the user simulator's model \(scripted:user\) failed: /)
  })
})

describe("a τ² conversation (smurfs chat)", () => {
  it("routes the request to the pipeline, whose ask_user is a message to the user and whose tool call is the conversation's", async () => {
    const { data, record } = await converse(
      "chat",
      {
        "chat.intent": [{ intent: "task", task: "Cancel order #W1" }],
        planner: [{ subtasks: ["Cancel order #W1"] }],
        "executor.thought": [{ thought: "Ask why." }, { thought: "Cancel it." }],
        "executor.choose": [{ tool: "ask_user" }, { tool: "cancel_pending_order" }],
        "executor.args": [{ question: "Why do you want to cancel?" }, { order_id: "#W1", reason: "no longer needed" }],
        "answerer.step": [{ answer: "The customer no longer needs it." }, { answer: "The order is cancelled." }],
        verifier: [
          { status: "pending", reason: "not cancelled yet", hint: "cancel it" },
          { status: "solved", reason: "ok" }
        ],
        "answerer.final": [{ answer: "Your order #W1 is cancelled." }]
      },
      { "tau2.user": ["Please cancel my order #W1.", "I no longer need it.", "Thanks ###STOP###"] },
      // the script answers the paper's requests per step (thought, tool, arguments, step answer)
      paperLoop()
    )
    const texts = data.messages.map(
      (m) => `${m.role}:${m.role === "tool" ? m.name : (m.content ?? ("toolCalls" in m ? m.toolCalls?.[0]?.name : ""))}`
    )
    expect(record.error ?? "").toBe("")
    expect(record.finishType).toBe("give_answer")
    expect(texts).toContain("assistant:Why do you want to cancel?")
    expect(texts).toContain("user:I no longer need it.")
    expect(texts).toContain("tool:cancel_pending_order")
    expect(data.termination).toBe("user_stop")
    expect(data.reward.reward).toBe(1)
  })
})

describe("the agent's instruction", () => {
  it("is τ²'s AGENT_INSTRUCTION when the checkout has their code, else ours", () => {
    const dir = mkdtempSync(join(tmpdir(), "tau2-src-"))
    mkdirSync(join(dir, "src", "tau2", "agent"), { recursive: true })
    writeFileSync(
      join(dir, "src", "tau2", "agent", "llm_agent.py"),
      'X = 1\nAGENT_INSTRUCTION = """\nTheir words.\n""".strip()\n'
    )
    expect(agentInstructionOf(dir)).toEqual({
      text: "Their words.",
      source: `tau2:${join(dir, "src", "tau2", "agent", "llm_agent.py")}`
    })
    expect(agentInstructionOf(join(dir, "none")).source).toBe("smurfs")
  })
})
