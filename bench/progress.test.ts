import { describe, expect, it } from "vitest"
import { makeProgress } from "./progress.ts"

describe("progress", () => {
  it("prints one line per task with the running count of answers when not on a terminal", () => {
    let text = ""
    const stream = { isTTY: false, write: (s: string) => ((text += s), true) } as unknown as NodeJS.WriteStream
    const progress = makeProgress({ stream })
    progress.start(3, 1)
    progress.taskDone({ method: "react", group: "G1_tool", taskId: "7", finishType: "give_answer", modelCalls: 3, tokens: 1200, wallMs: 1500 })
    progress.taskDone({ method: "react", group: "G1_tool", taskId: "8", finishType: "give_up", modelCalls: 2, tokens: 800, wallMs: 500 })
    progress.stop()
    const lines = text.trim().split("\n")
    expect(lines[0]).toBe("3 tasks, 1 already done")
    expect(lines[1]).toBe("[2/3] react G1_tool/7 give_answer 3 calls 1200 tokens 1.5s | solved 1")
    expect(lines[2]).toBe("[3/3] react G1_tool/8 give_up 2 calls 800 tokens 0.5s | solved 1")
  })
})
