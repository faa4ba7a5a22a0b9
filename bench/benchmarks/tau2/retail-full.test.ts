// The gold replay of all of τ²'s retail tasks from the checkout beside the repository (../shared/tau2), compared with
// what τ²'s own Python answered (test/fixtures/tau2/retail-gold-by-tau2.json) when the checkout is that commit.
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { lacks, skipNote, TAU2_CHECKOUT } from "../../../test/data.ts"
import { callTau2Tool, replayGold, scoreConversation, type Tau2MessageInput, type Tau2Task } from "./index.ts"
import { loadTau2DomainSync } from "./load.ts"

interface GoldByTau2 {
  readonly commit: string
  readonly initialHash: string
  readonly tasks: Record<string, { results: Array<{ contentSha256: string; error: boolean }>; hash: string }>
}
const byTau2 = JSON.parse(
  readFileSync(join(import.meta.dirname, "../../../test/fixtures/tau2/retail-gold-by-tau2.json"), "utf8")
) as GoldByTau2
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/**
 * The gold actions with one write's first item id replaced: an exchange's or a change's new item by another available
 * variant of the same product, a return's item by another item of the same order.
 */
const wrongWrite = (
  domain: ReturnType<typeof loadTau2DomainSync>,
  task: Tau2Task
): { calls: Array<{ name: string; arguments: Record<string, unknown> }>; changed: number } | undefined => {
  const actions = task.evaluation_criteria?.actions ?? []
  const calls = actions.map((a) => ({ name: a.name, arguments: { ...a.arguments } }))
  const db = domain.freshDb()
  const tools = domain.tools(db)
  for (const [index, call] of calls.entries()) {
    const key =
      "new_item_ids" in call.arguments ? "new_item_ids" : "item_ids" in call.arguments ? "item_ids" : undefined
    const ids = key === undefined ? [] : (call.arguments[key] as Array<string>)
    if (key !== undefined && ids.length > 0) {
      const item = JSON.parse(callTau2Tool(tools, "get_item_details", { item_id: ids[0] }).content) as {
        item_id?: string
      }
      if (item.item_id === undefined) continue
      const order = JSON.parse(
        callTau2Tool(tools, "get_order_details", { order_id: call.arguments["order_id"] }).content
      )
      const productId = (order.items as Array<{ item_id: string; product_id: string }>).find(
        (i) => i.item_id === (call.arguments["item_ids"] as Array<string>)[0]
      )?.product_id
      const product = JSON.parse(callTau2Tool(tools, "get_product_details", { product_id: productId }).content) as {
        variants: Record<string, { available: boolean }>
      }
      // another available variant that is in neither list, so the tool accepts the call and writes something else
      const other = Object.entries(product.variants).find(
        ([id, v]) => v.available && !ids.includes(id) && !(call.arguments["item_ids"] as Array<string>).includes(id)
      )?.[0]
      // a return: another item of the same order
      const otherInOrder = (order.items as Array<{ item_id: string }>).find((i) => !ids.includes(i.item_id))?.item_id
      const replacement = key === "item_ids" ? otherInOrder : other
      if (replacement === undefined) continue
      call.arguments[key] = [replacement, ...ids.slice(1)]
      return { calls, changed: index }
    }
  }
  return undefined
}

describe.skipIf(lacks(TAU2_CHECKOUT))(`τ²'s retail tasks, all of them${skipNote(TAU2_CHECKOUT)}`, () => {
  const checkout = TAU2_CHECKOUT.path
  const commitFile = join(checkout, "COMMIT")
  const sameCommit = existsSync(commitFile) && readFileSync(commitFile, "utf8").trim() === byTau2.commit

  it("replays every task's gold actions; each answer and each final hash is τ²'s, the same on a second run", () => {
    const domain = loadTau2DomainSync(checkout, "retail")
    expect(domain.tasks).toHaveLength(114)
    const first = domain.tasks.map((task) => replayGold(domain, task))
    const again = loadTau2DomainSync(checkout, "retail")
    const second = again.tasks.map((task) => replayGold(again, task))
    expect(second.map((g) => g.hash)).toEqual(first.map((g) => g.hash))
    let actions = 0
    for (const gold of first) {
      const expected = byTau2.tasks[gold.taskId]
      for (const [k, step] of gold.steps.entries()) {
        actions += 1
        // every action runs; the few τ² answers with an error (a product id given as an item id...) are errors here too
        if (sameCommit)
          expect(
            { sha: sha256(step.message.content), error: step.message.error },
            `task ${gold.taskId} action ${k} ${step.action.name}`
          ).toEqual({ sha: expected?.results[k]?.contentSha256, error: expected?.results[k]?.error })
      }
      if (sameCommit) expect(gold.hash, `task ${gold.taskId}`).toBe(expected?.hash)
    }
    expect(actions).toBe(550)
    if (sameCommit) expect(domain.hashDb(domain.freshDb())).toBe(byTau2.initialHash)
  })

  it("fails the database check of every task whose gold write takes another item id", () => {
    const domain = loadTau2DomainSync(checkout, "retail")
    let checked = 0
    for (const task of domain.tasks) {
      const wrong = wrongWrite(domain, task)
      if (wrong === undefined) continue
      const db = domain.initialDb(task)
      const tools = domain.tools(db)
      const messages: Array<Tau2MessageInput> = []
      let accepted = true
      wrong.calls.forEach((call, k) => {
        const answer = callTau2Tool(tools, call.name, call.arguments)
        if (k === wrong.changed) accepted = !answer.error
        messages.push({ role: "assistant", tool_calls: [{ id: `c${k}`, ...call }] })
        messages.push({ role: "tool", id: `c${k}`, content: answer.content })
      })
      // a gold write that τ² itself refuses (task 64 exchanges an order that is not delivered) writes nothing either way
      if (!accepted) continue
      const right = (task.evaluation_criteria?.actions ?? []).flatMap((a, k) => [
        { role: "assistant" as const, tool_calls: [{ id: `g${k}`, name: a.name, arguments: a.arguments }] },
        { role: "tool" as const, id: `g${k}`, content: "" }
      ])
      const score = scoreConversation(domain, task, { messages, termination: "user_stop" })
      expect(score.dbCheck?.dbMatch, `task ${task.id}`).toBe(false)
      expect(score.breakdown.DB).toBe(0)
      expect(scoreConversation(domain, task, { messages: right, termination: "user_stop" }).dbCheck?.dbMatch).toBe(true)
      checked += 1
    }
    // 87 tasks write items; at the fixture's commit 8 are left: their gold write fails in τ² too, or a return takes
    // back every item of its order
    if (sameCommit) expect(checked).toBe(79)
    else expect(checked).toBeGreaterThan(50)
  })
})
