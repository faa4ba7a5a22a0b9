// The stand-in's ReAct replies without its server (no process, no socket): for the instruments that measure the
// framework with the model in the process (`peers-ab.ts --provider memory`, `bench-vs-solve.ts --provider memory`).
import type { GenerateRequest, GenerateResponse } from "../../src/llm/language-model.ts"

/** Tool calls a task makes before its answer; with the answer, `STEPS + 1` model calls per task. */
export const STEPS = 3

/** ReAct's reply as the stand-in writes it: STEPS calls of the task's tools in turn, then Finish. */
export const memoryReply = (request: GenerateRequest): GenerateResponse => {
  const done = request.messages.filter((m) => m.role === "tool").length
  const names = (request.tools ?? []).map((t) => t.name).filter((n) => n !== "Finish")
  const call =
    done < STEPS && names.length > 0
      ? { id: `c${done}`, name: names[done % names.length]!, arguments: { query: `step ${done}` } }
      : { id: "f", name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }
  return {
    text: "",
    toolCalls: [call],
    usage: { promptTokens: 100, completionTokens: 10 },
    model: "memory",
    durationMs: 0
  }
}
