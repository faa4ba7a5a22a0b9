import { Effect, Layer } from "effect"
import { loadQueries } from "../datasets.ts"
import { taskOf } from "../tasks.ts"
import { makeEnvironmentChain } from "../../src/tools/environments/chain.ts"
import { toolbenchLibrary } from "../../src/tools/toolbench/adapter.ts"
import { smurfs } from "../../src/agents/smurfs.ts"
import { react } from "../../src/agents/react.ts"
import { dfsdt } from "../../src/agents/dfsdt.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { makeSimModel, withCurrentTask } from "./index.ts"
import { parseSimSpec } from "./options.ts"
const spec = process.argv[2] ?? "sim"
const parsed = parseSimSpec(spec); if ("error" in parsed) throw parsed.error
const sim = makeSimModel(parsed.options)
const prog = Effect.gen(function* () {
  const qs = yield* loadQueries({ dir: "/work/shared/toolbench", groups: ["G1_instruction"], limit: 2 })
  const env = yield* makeEnvironmentChain(["replay", "offline"], { responses: "/work/shared/toolbench/responses.jsonl" })
  for (const q of qs) {
    const task = taskOf(q, "all", (name, docs) => toolbenchLibrary(name, docs, env))
    for (const [name, m] of [["smurfs", smurfs()], ["react", react()], ["dfsdt", dfsdt()]] as const) {
      const t = yield* withCurrentTask(q)(m(task))
      console.log(name, q.id, t.finishType, JSON.stringify(t.totals), t.finalAnswer.slice(0, 300))
      if (process.env.V) for (const e of t.events) console.log("  ", e.type, JSON.stringify({ ...e.data, messages: undefined }).slice(0, 300))
    }
  }
})
await Effect.runPromise(Effect.provideService(prog, LanguageModel, sim.model))
console.log(sim.stats)
