// The improved Smurfs prompts laid out for a server's prefix cache (issue 23): every request of a task starts with
// one prefix, each step is one exchange that later agents continue, and the log of subtasks is only appended to.
import { describe, expect, it } from "vitest"
import { eventsOf, fromObservation, heightTool, percentTool, runSmurfs } from "./pipeline-fixtures.ts"

interface Call {
  readonly role: string
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly reply: string
}

/** A request as a chat template lays it out, near enough: each message framed by its role, in order. */
const flat = (messages: Call["messages"]) => messages.map((m) => `<${m.role}>${m.content}</${m.role}>`).join("")

const commonPrefix = (a: string, b: string) => {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

/** Where `marker` ends in the first request's text. */
const through = (call: Call, marker: string) => {
  const at = flat(call.messages).indexOf(marker)
  expect(at, `"${marker}" in the ${call.role} request`).toBeGreaterThanOrEqual(0)
  return at + marker.length
}

const query = "What is 12% of the height of Mount Everest in feet?"
const first = "Find the height of Mount Everest in feet"
const second = "Compute 12% of 29032 feet"
const solved = { status: "solved", reason: "the answer gives what was asked" }

describe("smurfs improved layout", () => {
  it("continues each step's exchange, and shares the task's prefix and log across subtasks", async () => {
    const t = await runSmurfs(query, [heightTool(), percentTool()], {
      planner: [{ subtasks: [first, second] }],
      "executor.thought": [
        { thought: "Look up the height." },
        { thought: "Try again." },
        { thought: "Compute the percentage." }
      ],
      // the first step looks up the wrong mountain, so the subtask takes a second step after a pending verdict
      "executor.choose": [{ tool: "mountain_height" }, { tool: "mountain_height" }, { tool: "percent_of" }],
      "executor.args": [{ name: "K2" }, { name: "Mount Everest" }, { percent: 12, value: 29032 }],
      "answerer.step": [fromObservation((obs) => ({ answer: obs }))],
      verifier: [{ status: "pending", reason: "no height", hint: "use the full name" }, solved, solved],
      "answerer.final": [{ answer: "3483.84 feet" }],
      $cycle: true
    })
    expect(t.finishType).toBe("give_answer")
    const calls = eventsOf(t, "model_call").filter((d) => d["ok"] === true) as unknown as Array<Call>
    expect(calls.map((c) => c.role)).toEqual([
      "planner",
      ...["executor.thought", "executor.choose", "executor.args", "answerer.step", "verifier"],
      ...["executor.thought", "executor.choose", "executor.args", "answerer.step", "verifier"],
      ...["executor.thought", "executor.choose", "executor.args", "answerer.step", "verifier"],
      "answerer.final"
    ])
    // one system message (system text and tools) for every role, the planner's and the final answer's too
    expect(new Set(calls.map((c) => flat(c.messages.slice(0, 1)))).size).toBe(1)
    calls.forEach((call, i) => {
      const previous = calls[i - 1]
      if (previous === undefined) return
      const shared = commonPrefix(flat(previous.messages), flat(call.messages))
      if (call.role === "executor.thought" && previous.role === "planner")
        // the question ends the planner's prefix; the subtask's log follows it
        expect(shared).toBeGreaterThanOrEqual(through(previous, `Question: ${query}\n\n`))
      else if (call.role === "executor.thought" && i === 11)
        // a new subtask: the log up to the previous subtask's entry, which then gets its answer appended
        expect(shared).toBeGreaterThanOrEqual(through(previous, `Subtasks:\n1. ${first}\n`))
      else if (call.role === "executor.thought")
        // a new step of the same subtask: the subtask's prefix up to its steps, which the new step extends
        expect(shared).toBeGreaterThanOrEqual(through(previous, "Steps taken for subtask 1 so far:\n"))
      else if (call.role === "answerer.final")
        expect(shared).toBeGreaterThanOrEqual(through(previous, `2. ${second}\n`))
      else {
        // thought -> tool -> arguments -> answer -> verdict: the previous request and its reply, then only the new end
        const before = flat([...previous.messages, { role: "assistant", content: previous.reply }])
        expect(flat(call.messages).startsWith(before), `${call.role} continues ${previous.role}`).toBe(true)
        expect(call.messages.length).toBeGreaterThan(previous.messages.length)
      }
    })
    // the final answer reads the whole log: each subtask with its answer, numbered as the executors saw it
    expect(calls.at(-1)!.messages.at(-1)!.content).toContain(
      `Subtasks:\n1. ${first}\n   Answer: Mount Everest is 29032 feet high.\n2. ${second}\n   Answer: 3483.84\n`
    )
  })
})
