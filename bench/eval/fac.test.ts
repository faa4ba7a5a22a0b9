import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { GenerateRequest } from "../../src/llm/language-model.ts"
import { scriptedLayer } from "../../src/llm/scripted.ts"
import { STB_FILES } from "../../src/text/stabletoolbench-files.ts"
import { lacks, STB_CHECKOUT, skipNote } from "../../test/data.ts"
import { evaluateFac, facLabelOf, facLabelPath, facPrompt, storedFac } from "./fac.ts"
import { loadSource } from "./sources.ts"
import { writeFakeRun } from "./test-fixtures.ts"

const STB = STB_CHECKOUT.path
const JUDGE = "scripted:fac"

describe("FAC (fac_eval.py)", () => {
  it.skipIf(lacks(STB_CHECKOUT))(
    `sends fac_eval.py's prompt with the query and the final answer only, at temperature 0, and stores one label per task${skipNote(STB_CHECKOUT)}`,
    async () => {
      const run = await writeFakeRun([
        {
          taskId: "1",
          query: "Which sites are popular?",
          finalAnswer: "lego.com",
          calls: [{ tool: "secret_tool_for_x", ok: true, content: "TOOL OUTPUT" }]
        },
        { taskId: "2", finishType: "give_up", finalAnswer: "" }
      ])
      const seen: Array<GenerateRequest> = []
      const judge = scriptedLayer({
        "judge.fac": [(r: GenerateRequest) => (seen.push(r), "Answer Status\nSolved\nReason\nIt answers.")]
      })
      const summary = await Effect.runPromise(
        evaluateFac(loadSource(run).entries, { store: run, judge: JUDGE, prompt: facPrompt(STB) }).pipe(
          Effect.provide(judge)
        )
      )
      expect(summary).toEqual({ judged: 2, kept: 0 })
      // one call: the empty answer is Unsolved without the judge
      expect(seen).toHaveLength(1)
      const [message] = seen[0]!.messages
      expect(seen[0]!.messages).toHaveLength(1)
      expect(message!.role).toBe("user")
      const source = readFileSync(join(STB, STB_FILES.facEval), "utf8")
      // the text around the fields is their PROMPT's
      const before = message!.content.slice(0, message!.content.indexOf("Which sites are popular?"))
      for (const line of before.split("\n").filter((l) => l.trim().length > 40)) expect(source).toContain(line.trim())
      expect(message!.content).toContain('"final_answer": "lego.com"')
      // nothing of the trajectory: no tool names or outputs, no method
      expect(message!.content).not.toMatch(/TOOL OUTPUT|secret_tool|smurfs/)
      expect(seen[0]!.options).toMatchObject({ temperature: 0, maxTokens: 512 })
      expect(JSON.parse(readFileSync(facLabelPath(run, JUDGE, "smurfs", "G1_instruction", "1"), "utf8"))).toMatchObject(
        { label: "Solved", prompts: `stabletoolbench:${STB}` }
      )
      expect(storedFac(run, "scripted-fac", loadSource(run).entries)).toEqual({ rate: 50, n: 2 })
    }
  )

  it("reads the reply as their get_response does: unsolved anywhere wins, then solved, else Unsolved", () => {
    expect(facLabelOf("Answer Status\nSolved")).toBe("Solved")
    expect(facLabelOf("Answer Status: Unsolved (not Solved)")).toBe("Unsolved")
    expect(facLabelOf("I cannot tell")).toBe("Unsolved")
  })
})
