import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { afterAll, describe, expect, it } from "vitest"
import { expectCallAnswers, expectGoldReplays, readTau2Answers } from "../../../test/tau2-answers.ts"
import {
  callTau2Tool,
  replayGold,
  scoreConversation,
  type Tau2DataError,
  type Tau2MessageInput,
  type Tau2Task
} from "./index.ts"
import { loadTau2Domain, loadTau2DomainSync } from "./load.ts"

const FIXTURE = join(import.meta.dirname, "../../../test/fixtures/tau2-airline")

interface PySchema {
  readonly properties: Record<string, { description: string; type?: string }>
  readonly required?: ReadonlyArray<string>
  readonly $defs?: unknown
}
type OpenAiSchema = { readonly function: { name: string; description: string; parameters: PySchema } }
const answers = readTau2Answers<OpenAiSchema>(FIXTURE)

const domain = loadTau2DomainSync(FIXTURE, "airline")

describe("the airline domain on the fixture", () => {
  it("loads the policy, the typed tasks, the splits and a database whose hash is τ²'s", () => {
    expect(domain.policy).toContain("Fixture policy")
    expect(domain.tasks.map((t) => t.id)).toEqual(["book_with_gift_card", "upgrade_and_bags", "cancel_and_compensate"])
    expect(domain.splits?.base).toHaveLength(3)
    expect(domain.hashDb(domain.freshDb())).toBe(answers.initialHash)
    // the hash is the same on every fresh database and every load
    expect(loadTau2DomainSync(FIXTURE, "airline").hashDb(domain.freshDb())).toBe(answers.initialHash)
  })

  it("replays every task's gold actions with τ²'s answers, byte for byte, and τ²'s final hash", () => {
    expectGoldReplays(domain, answers, true)
  })

  it("answers every further call (each tool's happy path and every error text) as τ² does, with τ²'s final hash", () => {
    expectCallAnswers(domain, answers)
  })

  it("fails the database check after a wrong write, and keeps conversations apart", () => {
    const task = domain.tasks.find((t) => t.id === "upgrade_and_bags")
    if (task === undefined) throw new Error("fixture task missing")
    const gold = replayGold(domain, task)
    const db = domain.freshDb()
    const tools = domain.tools(db)
    // the right upgrade but the bags paid from the credit card instead of the gift card
    callTau2Tool(tools, "update_reservation_flights", {
      reservation_id: "RES001",
      cabin: "business",
      flights: [{ flight_number: "HAT101", date: "2024-05-17" }],
      payment_id: "credit_card_1001"
    })
    expect(
      callTau2Tool(tools, "update_reservation_baggages", {
        reservation_id: "RES001",
        total_baggages: 3,
        nonfree_baggages: 2,
        payment_id: "credit_card_1001"
      }).error
    ).toBe(false)
    expect(domain.hashDb(db)).not.toBe(gold.hash)
    // neither the gold replay nor this conversation touched the next fresh database
    expect(domain.hashDb(domain.freshDb())).toBe(answers.initialHash)
  })

  it("checks argument types with the tool's schema before the tool runs", () => {
    const tools = domain.tools(domain.freshDb())
    const wrong = callTau2Tool(tools, "update_reservation_baggages", {
      reservation_id: "RES001",
      total_baggages: 1.5,
      nonfree_baggages: 0,
      payment_id: "credit_card_1001"
    })
    expect(wrong.error).toBe(true)
    expect(wrong.content).toMatch(/^Error: argument 'total_baggages' of update_reservation_baggages: /)
    const cabin = callTau2Tool(tools, "update_reservation_flights", {
      reservation_id: "RES001",
      cabin: "first",
      flights: [],
      payment_id: "credit_card_1001"
    })
    expect(cabin.content).toMatch(/^Error: argument 'cabin' of update_reservation_flights: /)
  })

  it("shows each tool as τ² does: its name, description, parameter texts and required list (and, for flat tools, the whole schema)", () => {
    const tools = domain.tools(domain.freshDb())
    expect(tools.map((t) => t.name)).toEqual(answers.openAiSchemas.map((s) => s.function.name))
    for (const [i, expected] of answers.openAiSchemas.entries()) {
      const shown = tools[i]?.openAiSchema as unknown as OpenAiSchema
      const name = expected.function.name
      expect(shown.function.description, name).toBe(expected.function.description)
      expect(shown.function.parameters.required, name).toEqual(expected.function.parameters.required)
      const describe = (p: PySchema) => Object.entries(p.properties).map(([k, v]) => [k, v.description])
      expect(describe(shown.function.parameters), name).toEqual(describe(expected.function.parameters))
      // pydantic writes nested models as $defs; the port writes them inline (see the README)
      if (expected.function.parameters.$defs === undefined) expect(shown, name).toEqual(expected)
    }
  })
})

type Call = { readonly name: string; readonly arguments: Record<string, unknown> }

/** A scripted conversation: the agent makes `calls` on its own database, says `said`, and the user stops. */
const converse = (t: Tau2Task, calls: ReadonlyArray<Call>, said: string) => {
  const tools = domain.tools(domain.initialDb(t))
  const messages: Array<Tau2MessageInput> = [{ role: "user", content: "Hi, I need a flight." }]
  calls.forEach((call, k) => {
    messages.push({ role: "assistant", content: null, tool_calls: [{ id: `call_${k}`, ...call }] })
    const answer = callTau2Tool(tools, call.name, call.arguments)
    messages.push({ role: "tool", id: `call_${k}`, content: answer.content, error: answer.error })
  })
  messages.push({ role: "assistant", content: said }, { role: "user", content: "Thanks. ###STOP###" })
  return { messages, termination: "user_stop" as const }
}

describe("scoring an airline conversation as τ²", () => {
  const t = domain.tasks.find((x) => x.id === "book_with_gift_card") as Tau2Task
  const gold = (t.evaluation_criteria?.actions ?? []).map((a) => ({ name: a.name, arguments: a.arguments }))

  it("scores 1 for the gold booking with the price told, 0 on COMMUNICATE without it", () => {
    expect(scoreConversation(domain, t, converse(t, gold, "Booked: HATHAT, 200 dollars in all."))).toMatchObject({
      reward: 1,
      breakdown: { DB: 1, COMMUNICATE: 1 }
    })
    expect(scoreConversation(domain, t, converse(t, gold, "Booked: HATHAT."))).toMatchObject({
      reward: 0,
      breakdown: { DB: 1, COMMUNICATE: 0 }
    })
  })

  it("scores 0 on DB for the same booking paid the other way round (the gift card keeps its balance)", () => {
    const booking = gold[3] as Call
    const swapped = {
      ...booking,
      arguments: {
        ...booking.arguments,
        payment_methods: [
          { payment_id: "gift_card_1002", amount: 50 },
          { payment_id: "credit_card_1001", amount: 150 }
        ]
      }
    }
    const reward = scoreConversation(domain, t, converse(t, [...gold.slice(0, 3), swapped], "200 dollars in all."))
    expect(reward.breakdown.DB).toBe(0)
    expect(reward.reward).toBe(0)
  })
})

describe("loading the airline domain", () => {
  const dirs: Array<string> = []
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  it("names the missing domain folder when the checkout has no airline data", () => {
    const checkout = mkdtempSync(join(tmpdir(), "tau2-airline-"))
    dirs.push(checkout)
    cpSync(join(FIXTURE, "../tau2/data"), join(checkout, "data"), { recursive: true })
    const error = Effect.runSync(Effect.flip(loadTau2Domain(checkout, "airline"))) as Tau2DataError
    expect(error.kind).toBe("bad-input")
    expect(error.path).toBe(join(checkout, "data", "tau2", "domains", "airline"))
    expect(error.message).toContain("no data/tau2/domains/airline/")
    // the retail domain of the same checkout still loads
    expect(loadTau2DomainSync(checkout, "retail").name).toBe("retail")
  })

  it("refuses a database that does not fit τ²'s airline schema, naming the file and the field", () => {
    const checkout = mkdtempSync(join(tmpdir(), "tau2-airline-"))
    dirs.push(checkout)
    cpSync(join(FIXTURE, "data"), join(checkout, "data"), { recursive: true })
    const dbPath = join(checkout, "data/tau2/domains/airline/db.json")
    const db = JSON.parse(readFileSync(dbPath, "utf8"))
    db.reservations.RES001.cabin = "first"
    writeFileSync(dbPath, JSON.stringify(db))
    const error = Effect.runSync(Effect.flip(loadTau2Domain(checkout, "airline"))) as Tau2DataError
    expect(error.path).toBe(dbPath)
    expect(error.problem).toContain("reservations")
  })
})
