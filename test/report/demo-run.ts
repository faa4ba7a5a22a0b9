// A judged run to look at the report with: three methods on tasks of three groups, pass labels with reasons over three
// judge runs, win rounds against react, long names and a hostile task text (markup that must stay text).
import { type AnswerStatus, passLabelsPath, winVerdictsPath } from "../../bench/eval/labels.ts"
import { makeRng } from "../../bench/eval/rng.ts"
import { type FakeTask, writeFakeRun, writeJson } from "../../bench/eval/test-fixtures.ts"

export const DEMO_JUDGE = "ollama:qwen2.5:32b-instruct-q4_K_M"
export const HOSTILE_QUERY = `Find flights <img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script> to Paris`

/** Write the run under `dir` (a fresh temp folder when not given) and return its path. */
export const writeDemoRun = async (tasksPerGroup = 6, dir?: string): Promise<string> => {
  const rng = makeRng(42)
  const methods = {
    smurfs: { pass: 0.7, calls: 9, tokens: 2600 },
    react: { pass: 0.45, calls: 4, tokens: 5200 },
    dfsdt: { pass: 0.6, calls: 12, tokens: 9800 }
  }
  const groups = ["G1_instruction", "G1_category", "G2_instruction"]
  const tasks: Array<FakeTask> = []
  for (const [method, m] of Object.entries(methods))
    for (const group of groups)
      for (let i = 0; i < tasksPerGroup; i++) {
        const taskId = String(100 + i)
        const gaveUp = rng() < 0.15
        tasks.push({
          taskId,
          method,
          group,
          model: "ollama:qwen2.5:7b-instruct",
          query:
            i === 0 && group === "G1_instruction"
              ? HOSTILE_QUERY
              : `I am planning a trip for task ${taskId} of ${group}: find the weather forecast, three hotels and the exchange rate.`,
          finishType: gaveUp ? "give_up" : "give_answer",
          finalAnswer: gaveUp ? "" : `The forecast is sunny; hotels A, B, C; 1 EUR = 1.08 USD (task ${taskId}).`,
          modelCalls: Math.round(m.calls * (0.6 + rng())),
          promptTokens: Math.round(m.tokens * (0.6 + rng())),
          completionTokens: Math.round(m.tokens * 0.08 * (0.6 + rng())),
          wallMs: Math.round(m.calls * 900 * (0.6 + rng())),
          calls: Array.from({ length: 1 + Math.floor(rng() * 3) }, (_, c) => ({
            tool: ["weather_forecast_for_open_weather_map", "hotels_search_for_booking_com", "exchange_rates"][c]!,
            ok: rng() > 0.2,
            content: JSON.stringify({ result: "some response text ".repeat(8) }),
            args: { city: "Paris", day: c }
          }))
        })
      }
  const run = await writeFakeRun(tasks, dir)
  for (const t of tasks) {
    const p = methods[t.method as keyof typeof methods].pass
    const runs = Object.fromEntries(
      [0, 1, 2].map((r) => {
        const x = rng()
        const label: AnswerStatus = x < p ? "Solved" : x < p + 0.1 ? "Unsure" : "Unsolved"
        const reason =
          label === "Solved"
            ? "The answer gives the forecast, the hotels and the rate the query asked for."
            : label === "Unsure"
              ? "The hotels are named but the rate's date is not said."
              : "The answer misses the exchange rate and invents a hotel the tools never returned."
        return [String(r), { label, reason, stage: "answer" }]
      })
    )
    await writeJson(passLabelsPath(run, DEMO_JUDGE, t.method!, t.group!, t.taskId), {
      taskId: t.taskId,
      method: t.method,
      group: t.group,
      judge: DEMO_JUDGE,
      runs
    })
    if (t.method === "react") continue
    const rounds = Object.fromEntries(
      [0, 1, 2].map((r) => {
        const won = rng() < p
        return [
          String(r),
          {
            winner: won ? "candidate" : "reference",
            order: ["candidate", "reference"],
            stage: "judge",
            reason: won
              ? "It answers every part of the query."
              : "The reference gives the exchange rate; this does not."
          }
        ]
      })
    )
    await writeJson(winVerdictsPath(run, DEMO_JUDGE, "baseline-react", t.method!, t.group!, t.taskId), {
      taskId: t.taskId,
      method: t.method,
      group: t.group,
      judge: DEMO_JUDGE,
      reference: { source: "baseline", method: "react" },
      rounds
    })
  }
  return run
}
