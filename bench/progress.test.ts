import { describe, expect, it, vi } from "vitest"
import { estimateRemaining, fitProgressLine, formatDuration, makeProgress, wrapToWidth } from "./progress.ts"

const capture = (isTTY = false) => {
  let text = ""
  const stream = { isTTY, write: (s: string) => ((text += s), true) } as unknown as NodeJS.WriteStream
  return { stream, text: () => text }
}

describe("progress", () => {
  it("counts one task as one", () => {
    const out = capture()
    const progress = makeProgress({ stream: out.stream, now: () => 0 })
    progress.start(1, 0)
    progress.stop()
    expect(out.text().split("\n")[0]).toBe("1 task")
  })

  it("prints one line per task, says answered (not solved), and gives an ETA only once it can estimate one", () => {
    const out = capture()
    let clock = 0
    const progress = makeProgress({ stream: out.stream, now: () => clock })
    progress.start(4, 1)
    clock = 1500
    progress.taskDone({
      method: "react",
      group: "G1_tool",
      taskId: "7",
      finishType: "give_answer",
      modelCalls: 3,
      tokens: 1200,
      wallMs: 1500
    })
    clock = 3000
    progress.taskDone({
      method: "react",
      group: "G1_tool",
      taskId: "8",
      finishType: "give_up",
      modelCalls: 2,
      tokens: 800,
      wallMs: 500
    })
    progress.stop()
    const lines = out.text().trim().split("\n")
    expect(lines[0]).toBe("4 tasks, 1 already done")
    expect(lines[1]).toBe("[2/4] react G1_tool/7 answered 3 calls 1200 tokens 1.5s | answered 1 | ETA estimating")
    // two tasks in 3 s, one left: 1.5 s
    expect(lines[2]).toBe("[3/4] react G1_tool/8 give_up 2 calls 800 tokens 0.5s | answered 1 | ETA 2s")
    expect(out.text()).not.toContain("solved")
    expect(progress.totals?.()).toEqual({ finished: 2, answered: 1, modelCalls: 5, tokens: 2000, wallMs: 3000 })
  })

  it('in a terminal, the bar says "ETA estimating" until it can estimate, then the time left (never cli-progress\'s INF)', () => {
    // cli-progress redraws on its own timer, at most ten times a second
    vi.useFakeTimers()
    try {
      const out = capture(true)
      let clock = 0
      const progress = makeProgress({ stream: out.stream, now: () => clock })
      progress.start(4, 0)
      progress.modelCall?.(100)
      clock = 1000
      progress.taskDone({
        method: "react",
        group: "G1",
        taskId: "1",
        finishType: "give_answer",
        modelCalls: 1,
        tokens: 100,
        wallMs: 1000
      })
      vi.advanceTimersByTime(1000)
      const early = out.text()
      expect(early).toContain("1/4 tasks | answered 1 | model calls 1 | tokens 100 | ETA estimating")
      clock = 2000
      progress.taskDone({
        method: "react",
        group: "G1",
        taskId: "2",
        finishType: "give_answer",
        modelCalls: 0,
        tokens: 0,
        wallMs: 1000
      })
      vi.advanceTimersByTime(1000)
      // two tasks in 2 s, two left: 2 s
      expect(out.text().slice(early.length)).toContain("2/4 tasks | answered 2 | model calls 1 | tokens 100 | ETA 2s")
      progress.stop()
      expect(out.text()).not.toMatch(/ETA (INF|\d+(?![\dsmh]))/)
    } finally {
      vi.useRealTimers()
    }
  })

  it("counts model calls and tokens as they happen, not when a task ends", () => {
    const out = capture()
    const progress = makeProgress({ stream: out.stream, now: () => 0 })
    progress.start(1, 0)
    progress.modelCall?.(100)
    progress.modelCall?.(50)
    expect(progress.totals?.()).toMatchObject({ modelCalls: 2, tokens: 150, finished: 0 })
    // the task's own totals are not added twice
    progress.taskDone({
      method: "smurfs",
      group: "G1",
      taskId: "1",
      finishType: "give_answer",
      modelCalls: 2,
      tokens: 150,
      wallMs: 10
    })
    expect(progress.totals?.()).toMatchObject({ modelCalls: 2, tokens: 150, finished: 1, answered: 1 })
  })

  it("counts the calls of tasks run by queue workers as the workers report them, and adds only what the record counts beyond", () => {
    const out = capture()
    const progress = makeProgress({ stream: out.stream, now: () => 0 })
    progress.start(2, 0)
    const a = { method: "smurfs", group: "G1", taskId: "a" }
    progress.taskCalls?.(a, 2, 100)
    progress.taskCalls?.(a, 3, 150)
    // a report that arrives late (older than the last) changes nothing
    progress.taskCalls?.(a, 1, 50)
    expect(progress.totals?.()).toMatchObject({ modelCalls: 3, tokens: 150, finished: 0 })
    // the task made two more calls after its last report: the record's totals bring the count up to them
    progress.taskDone({ ...a, finishType: "give_answer", modelCalls: 5, tokens: 250, wallMs: 10 })
    expect(progress.totals?.()).toMatchObject({ modelCalls: 5, tokens: 250, finished: 1 })
    // a task that finished before any report counts through its record alone
    progress.taskDone({
      method: "smurfs",
      group: "G1",
      taskId: "b",
      finishType: "give_up",
      modelCalls: 4,
      tokens: 40,
      wallMs: 10
    })
    expect(progress.totals?.()).toMatchObject({ modelCalls: 9, tokens: 290, finished: 2, answered: 1 })
  })

  it("estimates from this invocation's own rate", () => {
    expect(estimateRemaining(0, 10, 5000)).toBeUndefined()
    expect(estimateRemaining(1, 10, 5000)).toBeUndefined()
    expect(estimateRemaining(2, 10, 4000)).toBe(20_000)
    expect(formatDuration(45_000)).toBe("45s")
    expect(formatDuration(185_000)).toBe("3m05s")
    expect(formatDuration(3_720_000)).toBe("1h02m")
  })
})

describe("progress at 80 columns", () => {
  /** A fake terminal of 80 columns. */
  const terminal80 = () => {
    let text = ""
    const stream = {
      isTTY: true,
      columns: 80,
      write: (s: string) => ((text += s), true)
    } as unknown as NodeJS.WriteStream
    return { stream, text: () => text }
  }
  /** The bar's lines as drawn: cli-progress moves the cursor back to the line's start before each redraw. */
  const drawn = (text: string) =>
    text
      .split(/\r|\u001b\[[0-9;]*[A-Za-z]/)
      .map((l) => l.trimEnd())
      .filter((l) => l.includes("tasks"))

  it("fits the bar to the width: the model call count whole and the ETA shown, the least useful fields dropped first", () => {
    vi.useFakeTimers()
    try {
      const out = terminal80()
      let clock = 0
      const progress = makeProgress({ stream: out.stream, now: () => clock })
      progress.start(1200, 0)
      for (let i = 0; i < 103; i++) progress.modelCall?.(123_456)
      clock = 60_000
      progress.taskDone({
        method: "smurfs",
        group: "G1_instruction",
        taskId: "1",
        finishType: "give_answer",
        modelCalls: 0,
        tokens: 0,
        wallMs: 1000
      })
      progress.taskDone({
        method: "smurfs",
        group: "G1_instruction",
        taskId: "2",
        finishType: "give_answer",
        modelCalls: 0,
        tokens: 0,
        wallMs: 1000
      })
      vi.advanceTimersByTime(1000)
      progress.stop()
      const last = drawn(out.text()).at(-1)!
      expect(last.length).toBeLessThan(80)
      expect(last).toContain("model calls 103 ")
      expect(last).toMatch(/ETA 9h5\dm$/)
    } finally {
      vi.useRealTimers()
    }
  })

  it("draws the model calls counted since its last draw, with no task finished meanwhile", () => {
    vi.useFakeTimers()
    try {
      const out = terminal80()
      const progress = makeProgress({ stream: out.stream, now: () => 0 })
      progress.start(10, 0)
      vi.advanceTimersByTime(500)
      expect(drawn(out.text()).at(-1)).toContain("model calls 0 ")
      for (let i = 0; i < 7; i++) progress.modelCall?.(1000)
      vi.advanceTimersByTime(500)
      progress.stop()
      expect(drawn(out.text()).at(-1)).toContain("0/10 tasks | answered 0 | model calls 7 | ETA estimating")
    } finally {
      vi.useRealTimers()
    }
  })

  it("drops tokens, then answered, then the bar, then model calls; the tasks and the ETA stay", () => {
    const fields = { value: 1234, total: 5678, answered: 1000, calls: "12.3k", tokens: "45.6M", remaining: "12h34m" }
    const wide = fitProgressLine(200, fields, 0.5)
    expect(wide).toMatch(
      /^[\u2588\u2591]{40} 1234\/5678 tasks \| answered 1000 \| model calls 12\.3k \| tokens 45\.6M \| ETA 12h34m$/
    )
    expect(fitProgressLine(80, fields, 0.5)).toMatch(
      /^[\u2588\u2591]{10,} 1234\/5678 tasks \| answered 1000 \| model calls 12\.3k \| ETA 12h34m$/
    )
    expect(fitProgressLine(60, fields, 0.5)).toMatch(
      /^[\u2588\u2591]{10,} 1234\/5678 tasks \| model calls 12\.3k \| ETA 12h34m$/
    )
    expect(fitProgressLine(50, fields, 0.5)).toBe("1234/5678 tasks | model calls 12.3k | ETA 12h34m")
    expect(fitProgressLine(34, fields, 0.5)).toBe("1234/5678 tasks | ETA 12h34m")
    for (const columns of [20, 34, 50, 60, 80, 120])
      expect(fitProgressLine(columns, fields, 0.5).length).toBeLessThan(columns)
  })

  it("wraps the summary at spaces to the width, never inside a number or between a number and its word", () => {
    const summary =
      "smurfs bench: 1200 tasks recorded now (1123 answered, not yet judged), 0 already done, 12 failed because of the model server, 65 left undone, of 1277. 103456 model calls, 12345678 tokens, 9h05m. Run directory: runs/qwen"
    const wrapped = wrapToWidth(summary, 80)
    const lines = wrapped.split("\n")
    expect(lines.length).toBeGreaterThan(1)
    for (const line of lines) expect(line.length).toBeLessThan(80)
    expect(wrapped.replace(/\n {2}/g, " ")).toBe(summary)
    for (const piece of ["103456 model", "12345678 tokens", "1277.", "(1123 answered,"])
      expect(lines.some((l) => l.includes(piece))).toBe(true)
    // not a terminal: one line
    expect(wrapToWidth(summary, undefined)).toBe(summary)
  })
})
