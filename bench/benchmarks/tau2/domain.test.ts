import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { afterAll, describe, expect, it } from "vitest"
import { expectCallAnswers, expectGoldReplays, readTau2Answers } from "../../../test/tau2-answers.ts"
import { callTau2Tool, type Tau2DataError } from "./index.ts"
import { loadTau2Domain, loadTau2DomainSync } from "./load.ts"

const FIXTURE = join(import.meta.dirname, "../../../test/fixtures/tau2")

const answers = readTau2Answers(FIXTURE)

const domain = loadTau2DomainSync(FIXTURE, "retail")

describe("the retail domain on the fixture", () => {
  it("loads the policy, the typed tasks, the splits and a database whose hash is τ²'s", () => {
    expect(domain.policy).toContain("Fixture policy")
    expect(domain.tasks.map((t) => t.id)).toEqual(["0", "10", "14", "22", "36", "38", "40", "44", "105"])
    const task38 = domain.tasks.find((t) => t.id === "38")
    expect(task38?.evaluation_criteria?.reward_basis).toEqual(["DB", "NL_ASSERTION"])
    expect(task38?.evaluation_criteria?.communicate_info?.length).toBeGreaterThan(0)
    expect(typeof task38?.user_scenario.instructions === "object").toBe(true)
    expect(domain.splits?.base).toHaveLength(9)
    expect(domain.hashDb(domain.freshDb())).toBe(answers.initialHash)
  })

  it("replays every task's gold actions with τ²'s answers, byte for byte, and τ²'s final hash", () => {
    expectGoldReplays(domain, answers)
  })

  it("answers every further call (argument errors, each error text, calculate, writes of no items) as τ² does", () => {
    expectCallAnswers(domain, answers)
  })

  it("gives each conversation its own database: one's writes are not seen by another or by the next fresh one", () => {
    const a = domain.freshDb()
    const b = domain.freshDb()
    const cancel = callTau2Tool(domain.tools(a), "cancel_pending_order", {
      order_id: "#W9300146",
      reason: "no longer needed"
    })
    expect(cancel.error).toBe(false)
    const status = (db: unknown) =>
      JSON.parse(callTau2Tool(domain.tools(db), "get_order_details", { order_id: "#W9300146" }).content).status
    expect(status(a)).toBe("cancelled")
    expect(status(b)).toBe("pending")
    expect(status(domain.freshDb())).toBe("pending")
    expect(domain.hashDb(b)).toBe(answers.initialHash)
    expect(domain.hashDb(a)).not.toBe(answers.initialHash)
  })

  it("describes each tool to a model exactly as τ²'s openai_schema does (same text, same key order)", () => {
    const tools = domain.tools(domain.freshDb())
    expect(tools).toHaveLength(answers.openAiSchemas.length)
    for (const tool of tools)
      expect(JSON.stringify(tool.openAiSchema), tool.name).toBe(
        JSON.stringify(answers.openAiSchemas.find((s) => s.function.name === tool.name))
      )
  })

  it("is a smurfs Tool: zod parameters, a call that never fails, τ²'s OpenAI schema and its type", async () => {
    const tools = domain.tools(domain.freshDb())
    expect(tools.map((t) => t.name)).toEqual([
      "calculate",
      "cancel_pending_order",
      "exchange_delivered_order_items",
      "find_user_id_by_name_zip",
      "find_user_id_by_email",
      "get_order_details",
      "get_product_details",
      "get_item_details",
      "get_user_details",
      "list_all_product_types",
      "modify_pending_order_address",
      "modify_pending_order_items",
      "modify_pending_order_payment",
      "modify_user_address",
      "return_delivered_order_items",
      "transfer_to_human_agents"
    ])
    const exchange = tools.find((t) => t.name === "exchange_delivered_order_items")
    expect(exchange?.mutatesState).toBe(true)
    expect(exchange?.parameters.safeParse({ order_id: "#W1", item_ids: ["1"] }).success).toBe(false)
    expect(exchange?.openAiSchema).toMatchObject({
      type: "function",
      function: {
        name: "exchange_delivered_order_items",
        parameters: {
          required: ["order_id", "item_ids", "new_item_ids", "payment_method_id"],
          title: "parameters",
          type: "object",
          properties: { item_ids: { items: { type: "string" }, title: "Item Ids", type: "array" } }
        }
      }
    })
    const find = tools.find((t) => t.name === "find_user_id_by_email")
    expect(find?.type).toBe("read")
    const missing = await Effect.runPromise(find!.call({ email: "nobody@example.com" }))
    expect(missing).toEqual({ ok: false, content: "Error: User not found", error: "User not found" })
    expect(find?.run(null as never)).toEqual({
      content: "Error: the arguments of find_user_id_by_email must be a JSON object",
      error: true
    })
    const wrongType = await Effect.runPromise(find!.call({ email: 42 }))
    expect(wrongType.ok).toBe(false)
    expect(wrongType.content).toMatch(/^Error: argument 'email' of find_user_id_by_email/)
  })
})

describe("loading a checkout", () => {
  const dirs: Array<string> = []
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })
  const copy = () => {
    const dir = mkdtempSync(join(tmpdir(), "tau2-fixture-"))
    dirs.push(dir)
    cpSync(FIXTURE, dir, { recursive: true })
    return dir
  }
  const retail = (dir: string, file: string) => join(dir, "data", "tau2", "domains", "retail", file)
  const failure = (dir: string, name = "retail") =>
    Effect.runSync(Effect.flip(loadTau2Domain(dir, name))) as Tau2DataError

  it("names the missing file and says what to point --tau2 at", () => {
    const e = failure(join(tmpdir(), "no-such-tau2-checkout"))
    expect(e.kind).toBe("bad-input")
    expect(e.message).toMatch(/policy\.md: no policy \(policy\.md\) here\. Point --tau2 at a checkout/)
  })

  it("names the file and the place where the database does not fit τ²'s schema", () => {
    const dir = copy()
    const text = readFileSync(retail(dir, "db.json"), "utf8").replace('"price": 54.04', '"price": "cheap"')
    writeFileSync(retail(dir, "db.json"), text)
    const e = failure(dir)
    expect(e.message).toContain("db.json: does not fit τ²'s schema at products.")
    expect(e.message).toContain("price")
  })

  it("refuses an unknown top-level field of the database, as RetailDB forbids extras", () => {
    const dir = copy()
    const text = readFileSync(retail(dir, "db.json"), "utf8").replace(
      '{\n  "products"',
      '{\n  "extra": 1,\n  "products"'
    )
    writeFileSync(retail(dir, "db.json"), text)
    expect(failure(dir).message).toMatch(/db\.json: does not fit τ²'s schema.*extra/)
  })

  it("names a task file that is not JSON, and one whose task lacks its scenario", () => {
    const dir = copy()
    writeFileSync(retail(dir, "tasks.json"), "[{")
    expect(failure(dir).message).toMatch(/tasks\.json: is not valid JSON/)
    writeFileSync(retail(dir, "tasks.json"), JSON.stringify([{ id: "1" }]))
    expect(failure(dir).message).toMatch(/tasks\.json: does not fit τ²'s schema at 0\.user_scenario/)
  })

  it("refuses a directory where a file should be, and an unknown domain", () => {
    const dir = copy()
    rmSync(retail(dir, "policy.md"))
    mkdirSync(retail(dir, "policy.md"))
    expect(failure(dir).message).toMatch(/policy\.md: cannot read the policy.*a directory/)
    rmSync(retail(dir, "policy.md"), { recursive: true })
    writeFileSync(retail(dir, "policy.md"), "a policy")
    rmSync(retail(dir, "split_tasks.json"))
    mkdirSync(retail(dir, "split_tasks.json"))
    expect(failure(dir).message).toMatch(/split_tasks\.json: cannot read the task splits.*a directory/)
    rmSync(retail(dir, "split_tasks.json"), { recursive: true })
    expect(loadTau2DomainSync(dir, "retail").splits).toBeUndefined()
    expect(failure(FIXTURE, "banking").message).toMatch(/no τ² domain "banking".*Choose one of: retail/)
  })
})
