// A tiny τ²-shaped domain for the harness' tests: one order that the gold actions cancel, a read tool and a write tool,
// a reward from the database alone. Not τ²'s retail domain (that is the domain port's); only the shape the harness reads.
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import { z } from "zod"
import type { Tool } from "../../../src/tools/tool.ts"
import type { Tau2DomainView, Tau2TaskView } from "./port.ts"

interface Order {
  status: string
  items: Array<string>
}
export interface TestDb {
  orders: Record<string, Order>
}

const freshDb = (): TestDb => ({ orders: { "#W1": { status: "pending", items: ["keyboard"] } } })

const tools = (db: TestDb): ReadonlyArray<Tool> => [
  {
    name: "get_order_details",
    description: "Get the status and items of an order.",
    parameters: z.object({ order_id: z.string() }) as unknown as z.ZodObject<z.ZodRawShape>,
    call: (args) =>
      Effect.sync(() => {
        const order = db.orders[String(args["order_id"])]
        return order
          ? { ok: true, content: JSON.stringify(order) }
          : { ok: false, content: "Error: Order not found", error: "Order not found" }
      })
  },
  {
    name: "cancel_pending_order",
    description: "Cancel a pending order.",
    parameters: z.object({ order_id: z.string(), reason: z.string() }) as unknown as z.ZodObject<z.ZodRawShape>,
    call: (args) =>
      Effect.sync(() => {
        const order = db.orders[String(args["order_id"])]
        if (!order) return { ok: false, content: "Error: Order not found", error: "Order not found" }
        if (order.status !== "pending")
          return {
            ok: false,
            content: "Error: Non-pending order cannot be cancelled",
            error: "Non-pending order cannot be cancelled"
          }
        order.status = "cancelled"
        return { ok: true, content: JSON.stringify(order) }
      })
  }
]

export interface TestTask extends Tau2TaskView {
  readonly actions: ReadonlyArray<{ readonly name: string; readonly arguments: Record<string, unknown> }>
}

export const TEST_TASK: TestTask = {
  id: "0",
  user_scenario: {
    persona: null,
    instructions: {
      domain: "retail",
      reason_for_call: "You want to cancel your order #W1: you no longer need it.",
      known_info: "You are Ada Lovelace.",
      unknown_info: null,
      task_instructions: "Say ###STOP### once the order is cancelled."
    }
  },
  actions: [{ name: "cancel_pending_order", arguments: { order_id: "#W1", reason: "no longer needed" } }]
}

const hash = (db: TestDb) => createHash("sha256").update(JSON.stringify(db)).digest("hex")

/** Replay a task's actions on a fresh database (the gold state). */
const goldDb = (task: TestTask): TestDb => {
  const db = freshDb()
  const byName = new Map(tools(db).map((t) => [t.name, t]))
  for (const a of task.actions) Effect.runSync(byName.get(a.name)!.call(a.arguments))
  return db
}

export const testDomain: Tau2DomainView<TestDb, TestTask> = {
  name: "retail",
  policy: "You are a store's agent. Cancel pending orders when the customer asks.",
  tasks: [TEST_TASK],
  initialDb: freshDb,
  tools,
  dbHash: hash,
  goldDb,
  score: (task, conversation) => {
    if (conversation.termination !== "user_stop" && conversation.termination !== "agent_stop")
      return { reward: 0, notes: [`the conversation ended prematurely (${conversation.termination})`] }
    const db = hash(conversation.db) === hash(goldDb(task)) ? 1 : 0
    return {
      reward: db,
      breakdown: { DB: db },
      ...(db === 0 ? { notes: ["the database differs from the gold state"] } : {})
    }
  }
}

/** The test domain as a loader, as `--tau2 <dir> --domain retail` loads the real one. */
export const loadTestDomain = () => Effect.succeed(testDomain as unknown as Tau2DomainView)
