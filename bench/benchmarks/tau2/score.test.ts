import { join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  callTau2Tool,
  computePassHatKs,
  diffTau2Db,
  passHatK,
  replayGold,
  scoreConversation,
  type Tau2Domain,
  type Tau2MessageInput,
  type Tau2Task,
  type Tau2Termination
} from "./index.ts"
import { loadTau2DomainSync } from "./load.ts"

const domain = loadTau2DomainSync(join(import.meta.dirname, "../../../test/fixtures/tau2"), "retail")
const task = (id: string): Tau2Task => {
  const found = domain.tasks.find((t) => t.id === id)
  if (found === undefined) throw new Error(`no task ${id} in the fixture`)
  return found
}

type Call = { readonly name: string; readonly arguments: Record<string, unknown> }

/**
 * A scripted conversation: the user asks, the agent makes `calls` one message each on its own live database (each
 * answered by the tool), says `said`, and the conversation ends by `termination`.
 */
const converse = (
  d: Tau2Domain,
  t: Tau2Task,
  calls: ReadonlyArray<Call>,
  said: ReadonlyArray<string> = [],
  termination: Tau2Termination = "user_stop"
) => {
  const db = d.initialDb(t)
  const tools = d.tools(db)
  const messages: Array<Tau2MessageInput> = [{ role: "user", content: "Hi, I need help with an order." }]
  calls.forEach((call, k) => {
    messages.push({ role: "assistant", content: null, tool_calls: [{ id: `call_${k}`, ...call }] })
    const answer = callTau2Tool(tools, call.name, call.arguments)
    messages.push({ role: "tool", id: `call_${k}`, content: answer.content, error: answer.error })
  })
  for (const text of said) messages.push({ role: "assistant", content: text })
  messages.push({ role: "user", content: "Thanks. ###STOP###" })
  return { conversation: { messages, termination }, db }
}

const goldCalls = (t: Tau2Task): Array<Call> =>
  (t.evaluation_criteria?.actions ?? []).map((a) => ({ name: a.name, arguments: a.arguments }))

describe("scoring a conversation as τ²", () => {
  it("scores 1 when the conversation makes the gold actions (NL_ASSERTION counts 1 without assertions, as theirs)", () => {
    const t = task("0")
    const { conversation, db } = converse(domain, t, goldCalls(t))
    const reward = scoreConversation(domain, t, conversation)
    expect(reward.reward).toBe(1)
    expect(reward.breakdown).toEqual({ DB: 1, NL_ASSERTION: 1 })
    expect(reward.notEvaluated).toEqual([])
    expect(reward.dbCheck?.dbMatch).toBe(true)
    expect(reward.dbCheck?.predictedHash).toBe(domain.hashDb(db))
    expect(reward.replayMismatches).toEqual([])
  })

  it("scores 0 when the conversation stops before the write", () => {
    const t = task("0")
    const { conversation } = converse(domain, t, goldCalls(t).slice(0, 4))
    const reward = scoreConversation(domain, t, conversation)
    expect(reward.reward).toBe(0)
    expect(reward.breakdown.DB).toBe(0)
    expect(reward.dbCheck?.predictedHash).toBe(domain.hashDb(domain.freshDb()))
  })

  it("scores 0 for a write of another item id that the tool accepts", () => {
    const t = task("0")
    const calls = goldCalls(t)
    const exchange = calls[4] as Call
    calls[4] = { ...exchange, arguments: { ...exchange.arguments, new_item_ids: ["6342039236", "7747408585"] } }
    const { conversation } = converse(domain, t, calls)
    expect(conversation.messages.at(-2)).toMatchObject({ role: "tool", error: false })
    const reward = scoreConversation(domain, t, conversation)
    expect(reward.reward).toBe(0)
    expect(reward.dbCheck?.dbMatch).toBe(false)
  })

  it("scores 0 with τ²'s note when the conversation ended otherwise than by the agent or the user", () => {
    const t = task("0")
    const { conversation } = converse(domain, t, goldCalls(t), [], "max_steps")
    expect(scoreConversation(domain, t, conversation)).toMatchObject({
      reward: 0,
      rewardBasis: null,
      note: "Simulation terminated prematurely. Termination reason: max_steps"
    })
  })

  it("leaves NL assertions unevaluated without a judge, and multiplies a judge's verdicts in", () => {
    const t = task("38")
    const { conversation } = converse(domain, t, goldCalls(t))
    const unjudged = scoreConversation(domain, t, conversation)
    expect(unjudged.notEvaluated).toEqual(["NL_ASSERTION"])
    expect(unjudged.breakdown).toEqual({ DB: 1 })
    expect(unjudged.reward).toBe(1)
    const verdicts = (t.evaluation_criteria?.nl_assertions ?? []).map((a, k) => ({
      nl_assertion: a,
      met: k === 0,
      justification: "judged"
    }))
    const judged = scoreConversation(domain, t, conversation, { nlAssertions: verdicts })
    expect(judged.notEvaluated).toEqual([])
    expect(judged.breakdown).toEqual({ DB: 1, NL_ASSERTION: 0 })
    expect(judged.reward).toBe(0)
  })

  it("checks communicated information as τ²: lower case, commas removed, in the agent's messages only", () => {
    const base = task("38")
    const t: Tau2Task = {
      ...base,
      evaluation_criteria: { ...base.evaluation_criteria, reward_basis: ["DB", "COMMUNICATE"] }
    }
    const told = converse(domain, t, goldCalls(t), ["The most expensive item is the CAMERA, at $481.50."])
    expect(scoreConversation(domain, t, told.conversation)).toMatchObject({
      reward: 1,
      breakdown: { DB: 1, COMMUNICATE: 1 }
    })
    const commas = converse(domain, t, goldCalls(t), ["The camera costs 481,50."]) // "48150" after the commas go
    const reward = scoreConversation(domain, t, commas.conversation)
    expect(reward.reward).toBe(0)
    expect(reward.communicateChecks).toEqual([
      {
        info: "camera",
        met: true,
        justification: "Information 'camera' communicated in the message:\n 'The camera costs 481,50.'"
      },
      { info: "481.50", met: false, justification: "Information '481.50' not communicated." }
    ])
    const byUser = told.conversation.messages.map((m) =>
      m.role === "assistant" && m.content ? { ...m, role: "user" as const } : m
    )
    expect(scoreConversation(domain, t, { ...told.conversation, messages: byUser }).breakdown.COMMUNICATE).toBe(0)
  })

  it("matches actions on their compared arguments when ACTION is in the basis", () => {
    const base = task("0")
    const actions = (base.evaluation_criteria?.actions ?? []).map((a) =>
      a.name === "find_user_id_by_name_zip" ? { ...a, compare_args: ["zip"] } : a
    )
    const t: Tau2Task = {
      ...base,
      evaluation_criteria: { ...base.evaluation_criteria, actions, reward_basis: ["DB", "ACTION"] }
    }
    const calls = goldCalls(t)
    calls[0] = {
      name: "find_user_id_by_name_zip",
      arguments: { first_name: "YUSUF", last_name: "Rossi", zip: "19122" }
    }
    const sameZip = scoreConversation(domain, t, converse(domain, t, calls).conversation)
    expect(sameZip.breakdown).toEqual({ DB: 1, ACTION: 1 })
    calls[1] = { name: "get_order_details", arguments: { order_id: "#W2378156 " } }
    const otherOrder = scoreConversation(domain, t, converse(domain, t, calls).conversation)
    expect(otherOrder.breakdown).toEqual({ DB: 1, ACTION: 0 })
    expect(otherOrder.actionChecks?.filter((c) => !c.actionMatch).map((c) => c.action.action_id)).toEqual(["0_1"])
    expect(otherOrder.actionChecks?.[4]?.toolType).toBe("write")
  })

  it("reports a recorded write answer that the replay does not give, and scores a malformed transcript 0", () => {
    const t = task("0")
    const { conversation } = converse(domain, t, goldCalls(t))
    const messages = conversation.messages.map((m, k) =>
      k === conversation.messages.length - 2 ? { ...m, content: '{"status": "forged"}' } : m
    )
    const reward = scoreConversation(domain, t, { ...conversation, messages })
    expect(reward.replayMismatches?.map((m) => m.call.name)).toEqual(["exchange_delivered_order_items"])
    expect(reward.reward).toBe(1)
    const orphan = [{ role: "tool" as const, id: "x", content: "?" }, ...conversation.messages]
    expect(scoreConversation(domain, t, { ...conversation, messages: orphan })).toMatchObject({
      reward: 0,
      note: "The transcript cannot be scored: Tool message not expected. Tool messages should always follow a tool call."
    })
  })

  it("uses a gold replay handed in rather than computing another", () => {
    const t = task("0")
    const gold = { ...replayGold(domain, t), hash: "not-the-gold-hash" }
    expect(scoreConversation(domain, t, converse(domain, t, goldCalls(t)).conversation, { gold }).reward).toBe(0)
  })
})

describe("pass^k as τ² estimates it", () => {
  it("is C(successes, k) / C(trials, k)", () => {
    expect(passHatK(3, 2, 1)).toBeCloseTo(2 / 3, 12)
    expect(passHatK(3, 2, 2)).toBeCloseTo(1 / 3, 12)
    expect(passHatK(3, 2, 3)).toBe(0)
    expect(passHatK(4, 2, 2)).toBeCloseTo(1 / 6, 12)
    expect(passHatK(8, 8, 4)).toBe(1)
    expect(() => passHatK(2, 2, 3)).toThrow("Number of trials 2 is less than k 3.")
  })

  it("averages each task's pass^k over tasks, k up to the fewest trials, infrastructure errors left out", () => {
    const trials = [
      { taskId: "a", reward: 1 },
      { taskId: "a", reward: 0.9999995 },
      { taskId: "a", reward: 0 },
      { taskId: "b", reward: 1 },
      { taskId: "b", reward: 0.5 },
      { taskId: "b", reward: 0 },
      { taskId: "b", reward: 1, termination: "infrastructure_error" as const }
    ]
    const metrics = computePassHatKs(trials)
    expect(metrics.maxK).toBe(3)
    expect(metrics.passHatKs[1]).toBeCloseTo((2 / 3 + 1 / 3) / 2, 12)
    expect(metrics.passHatKs[2]).toBeCloseTo((1 / 3 + 0) / 2, 12)
    expect(metrics.passHatKs[3]).toBe(0)
    expect(metrics.infraErrors).toBe(1)
    expect(metrics.trials).toBe(6)
    expect(metrics.avgReward).toBeCloseTo((1 + 0.9999995 + 0 + 1 + 0.5 + 0) / 6, 12)
    const fewer = computePassHatKs([...trials, { taskId: "c", reward: 1 }, { taskId: "c", reward: 1 }])
    expect(fewer.maxK).toBe(2)
    expect(Object.keys(fewer.passHatKs)).toEqual(["1", "2"])
    expect(fewer.passHatKs[2]).toBeCloseTo((1 / 3 + 0 + 1) / 3, 12)
  })
})

describe("the database diff against the gold state", () => {
  it("lists what a wrong exchange wrote differently, and nothing for the gold conversation", () => {
    const t = task("0")
    const gold = replayGold(domain, t)
    expect(diffTau2Db(gold.db, converse(domain, t, goldCalls(t)).db)).toEqual([])
    const calls = goldCalls(t)
    const exchange = calls[4] as Call
    calls[4] = { ...exchange, arguments: { ...exchange.arguments, new_item_ids: ["6342039236", "7747408585"] } }
    const changes = diffTau2Db(gold.db, converse(domain, t, calls).db)
    expect(changes.map((c) => c.path.join("."))).toEqual([
      "orders.#W2378156.exchange_new_items.0",
      "orders.#W2378156.exchange_price_difference"
    ])
    expect(changes[0]).toEqual({
      path: ["orders", "#W2378156", "exchange_new_items", "0"],
      gold: "7706410293",
      actual: "6342039236"
    })
    const early = diffTau2Db(gold.db, converse(domain, t, calls.slice(0, 4)).db)
    expect(early.find((c) => c.path.at(-1) === "status")).toEqual({
      path: ["orders", "#W2378156", "status"],
      gold: "exchange requested",
      actual: "delivered"
    })
  })
})
