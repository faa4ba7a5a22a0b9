// Run events are CloudEvents 1.0, checked with the CloudEvents SDK; every event links to its task and subtask.
import { CloudEvent, ValidationError } from "cloudevents"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { fromObservation, heightTool, percentTool, runSmurfs } from "../../test/pipeline-fixtures.ts"
import { EVENT_TYPE_PREFIX, emit, isKind, isoTime, kindOf, makeEvent, type RunEvent } from "./events.ts"
import { SIZE_CAPS } from "./size-caps.ts"
import { recording } from "./trajectory.ts"

const solved = { status: "solved", reason: "ok" }

/** Strict construction validates against the spec (required attributes, names, types). */
const asCloudEvent = (event: RunEvent) => new CloudEvent<unknown>({ ...event }, true)

describe("run events", () => {
  it("are valid CloudEvents 1.0 with reverse-DNS types and a link to their task and subtask", async () => {
    const t = await runSmurfs("What is 12% of the height of K2?", [heightTool(), percentTool()], {
      planner: [{ subtasks: ["Find the height of K2 in feet", "Compute 12% of 28251"] }],
      "executor.thought": [{ thought: "Look it up." }, { thought: "Compute." }],
      "executor.choose": [{ tool: "mountain_height" }, { tool: "percent_of" }],
      "executor.args": [{ name: "K2" }, { percent: 12, value: 28251 }],
      "answerer.step": [fromObservation((obs) => ({ answer: obs }))],
      verifier: [solved, solved],
      "answerer.final": [{ answer: "3390.12 feet" }],
      $cycle: true
    })
    expect(t.events.length).toBeGreaterThan(10)
    for (const event of t.events) {
      const ce = asCloudEvent(event)
      expect(ce.validate()).toBe(true)
      expect(ce.specversion).toBe("1.0")
      expect(event.type.startsWith(EVENT_TYPE_PREFIX)).toBe(true)
      expect(event.correlationid).toBe("task-1")
      expect(event.subject).toBe("task-1")
      // the JSON form keeps the extension attributes as top-level attributes
      expect(JSON.parse(ce.toString())["correlationid"]).toBe("task-1")
      // the spec's extension values are strings, integers or booleans (the SDK does not check the type)
      for (const key of ["correlationid", "subtask", "agent", "agentdepth", "parentsubtask"] as const)
        if (event[key] !== undefined) expect(typeof event[key] === "string" || Number.isInteger(event[key])).toBe(true)
    }
    // every event between a subtask's start and its answer carries the subtask's index
    const inSubtask = t.events.filter((e) => e.subtask !== undefined)
    expect(new Set(inSubtask.map((e) => e.subtask))).toEqual(new Set([0, 1]))
    for (const kind of ["thought", "model_call", "tool_call", "verdict", "subtask_answered"] as const)
      expect(
        t.events
          .filter((e) => isKind(e, kind) && e.data["role"] !== "planner" && e.data["role"] !== "answerer.final")
          .every((e) => e.subtask !== undefined)
      ).toBe(true)
    const toolCalls = t.events.filter((e) => isKind(e, "tool_call"))
    expect(toolCalls.map((e) => [e.data["tool"], e.subtask])).toEqual([
      ["mountain_height", 0],
      ["percent_of", 1]
    ])
    // the planner's and the final answer's events belong to the task, not to a subtask
    expect(
      t.events.filter((e) => isKind(e, "plan") || isKind(e, "final_answer")).every((e) => e.subtask === undefined)
    ).toBe(true)
  })

  it("the validator rejects what the spec forbids, so the check above can fail", () => {
    expect(
      () =>
        new CloudEvent(
          { specversion: "1.0", id: "1", source: "/smurfs", type: "dev.smurfs.plan", Bad_Name: 1 } as never,
          true
        )
    ).toThrow(ValidationError)
    expect(
      () =>
        new CloudEvent(
          { specversion: "1.0", id: "1", source: "/smurfs", type: "dev.smurfs.plan", time: "yesterday" },
          true
        )
    ).toThrow(ValidationError)
  })

  it("reads legacy `smurfs.<kind>` types of older run directories", () => {
    expect(kindOf({ type: "smurfs.tool_call" })).toBe("tool_call")
    expect(kindOf({ type: "dev.smurfs.tool_call" })).toBe("tool_call")
    expect(isKind({ type: "smurfs.plan" }, "plan")).toBe(true)
    expect(isKind({ type: "dev.smurfs.plan" }, "tool_call")).toBe(false)
  })

  it("a built event carries its defined link attributes in order, its correlation id the task's unless the link names another", () => {
    const event = makeEvent("task-1", "thought", { thought: "x" }, { subtask: 2, agent: undefined, agentdepth: 1 })
    expect(Object.keys(event)).toEqual([
      "specversion",
      "id",
      "source",
      "type",
      "time",
      "datacontenttype",
      "subject",
      "correlationid",
      "subtask",
      "agentdepth",
      "data"
    ])
    expect(event).toMatchObject({ correlationid: "task-1", subtask: 2, agentdepth: 1, data: { thought: "x" } })
    expect(makeEvent("task-1", "thought", {}, { correlationid: "top" }).correlationid).toBe("top")
    expect("correlationid" in makeEvent("task-1", "thought", {}, { correlationid: undefined })).toBe(false)
    expect(new Date(makeEvent("t", "thought", {}).time).toISOString()).toMatch(/^\d{4}-/)
  })

  it("are recorded with the emitter's data when nothing in it is too long, and with a capped copy otherwise", async () => {
    const short = { thought: "short", step: 1 }
    const long = { thought: "x".repeat(SIZE_CAPS.recordStringChars + 10), step: 2 }
    const { events } = await Effect.runPromise(
      recording("task-1", Effect.andThen(emit("thought", short), emit("thought", long)))
    )
    expect(events[0]!.data).toBe(short)
    expect(events[1]!.data).not.toBe(long)
    expect(String(events[1]!.data["thought"])).toContain("[cut: ")
    expect(long.thought.length).toBe(SIZE_CAPS.recordStringChars + 10)
  })
})

describe("isoTime", () => {
  it("writes every time as Date's toISOString does, within a second, across seconds and out of order", () => {
    const times = [
      1_764_000_000_000, 1_764_000_000_000, 1_764_000_000_007, 1_764_000_000_999, 1_764_000_001_000, 1_764_000_001_042,
      1_764_000_000_500, 0, -1, -999, -1000, -1001, 253_402_300_799_999, 253_402_300_800_000, 253_402_300_800_001
    ]
    for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString())
  })
})
