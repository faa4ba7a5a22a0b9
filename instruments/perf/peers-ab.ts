// Before/after CPU per model call in one process: `node instruments/perf/peers-ab.ts <other checkout> [--batches 12 --tasks 40 --concurrency 1 --provider ollama|openai|memory --method react]`.
// Our ReAct through `solve` of this checkout and of another one (e.g. `git worktree add /tmp/base main`), in
// alternating batches against one stand-in server, so that a busy machine weighs on both alike. Prints medians.
// `--provider memory`: a model in the process that answers at once (the stand-in's replies, no HTTP), so that
// only the framework's own CPU is measured, with much less noise.
import { fork } from "node:child_process"
import { resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { z } from "zod"
import type { LanguageModel as LanguageModelTag } from "../../src/llm/language-model.ts"
import { solve as ours } from "../../src/solve.ts"
import { defineTool } from "../../src/tools/define-tool.ts"
import { memoryReply, STEPS } from "./stand-in-replies.ts"

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    batches: { type: "string", default: "12" },
    tasks: { type: "string", default: "40" },
    concurrency: { type: "string", default: "1" },
    provider: { type: "string", default: "ollama" },
    method: { type: "string", default: "react" }
  }
})
if (positionals[0] === undefined) throw new Error("usage: peers-ab.ts <other checkout> [--batches 12 --tasks 40]")
const other = resolve(positionals[0])
const theirs = ((await import(pathToFileURL(`${other}/src/solve.ts`).href)) as { solve: typeof ours }).solve
const { defineTool: theirDefineTool } = (await import(pathToFileURL(`${other}/src/tools/define-tool.ts`).href)) as {
  defineTool: typeof defineTool
}
const BATCHES = Number(values.batches)
const TASKS = Number(values.tasks)
const CONCURRENCY = Number(values.concurrency)

const TOOL_NAMES = ["search_flights", "get_weather", "convert_currency", "find_hotel", "lookup_city"]
const toolsOf = (define: typeof defineTool) =>
  TOOL_NAMES.map((name) =>
    define({
      name,
      description: `The ${name.replace(/_/g, " ")} service.`,
      parameters: z.object({ query: z.string().describe("what to look up") }),
      execute: ({ query }) => JSON.stringify({ tool: name, query, result: "ok", items: [1, 2, 3] })
    })
  )

const child = fork(fileURLToPath(new URL("./stand-in.ts", import.meta.url)), [], {
  stdio: ["ignore", "pipe", "inherit", "ipc"]
})
const url = await new Promise<string>((ok, fail) => {
  child.stdout!.once("data", (d: Buffer) => ok((JSON.parse(d.toString("utf8")) as { url: string }).url))
  child.once("exit", (code) => fail(new Error(`the stand-in server exited with ${code}`)))
})
// the stand-in serves every task in flight at once (concurrent solve calls share one limit per server)
const model =
  values.provider === "openai"
    ? { model: "openai:stand-in", modelOptions: { baseURL: `${url}/v1`, apiKey: "stand-in", concurrency: CONCURRENCY } }
    : { model: "ollama:stand-in", modelOptions: { host: url, supportsTools: true, concurrency: CONCURRENCY } }
/** The stand-in's ReAct replies from a model in the process: STEPS tool calls, then Finish. */
const memoryModel = async (checkout: string) => {
  const { LanguageModel } = (await import(pathToFileURL(`${checkout}/src/llm/language-model.ts`).href)) as {
    LanguageModel: typeof LanguageModelTag
  }
  return Layer.succeed(LanguageModel, {
    info: { spec: "memory", provider: "memory", model: "memory", contextTokens: 8192, supportsTools: true },
    generate: (request) => Effect.sync(() => memoryReply(request))
  })
}
const memory = values.provider === "memory"
const modelOf = async (checkout: string) => (memory ? { model: await memoryModel(checkout) } : model)
const sides = [
  {
    name: "this checkout",
    solve: ours,
    tools: toolsOf(defineTool),
    model: await modelOf(fileURLToPath(new URL("../..", import.meta.url))),
    samples: [] as Array<number>
  },
  {
    name: other,
    solve: theirs,
    tools: toolsOf(theirDefineTool),
    model: await modelOf(other),
    samples: [] as Array<number>
  }
]
const requests = async () => ((await (await fetch(`${url}/stats`)).json()) as { requests: number }).requests
const batch = async (side: (typeof sides)[number]) => {
  let next = 0
  const worker = async () => {
    while (next < TASKS) {
      const i = next++
      await side.solve(`Plan trip ${i}: flights, weather, money and a hotel.`, {
        ...side.model,
        tools: side.tools,
        method: values.method as "react",
        id: `t${i}`
      })
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
}
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
try {
  for (const side of sides) await batch(side) // warm-up
  for (let b = 0; b < BATCHES; b++)
    for (const side of b % 2 === 0 ? sides : [...sides].reverse()) {
      const before = memory ? 0 : await requests()
      const cpu = process.threadCpuUsage()
      await batch(side)
      const used = process.threadCpuUsage(cpu)
      side.samples.push((used.user + used.system) / 1000 / ((memory ? TASKS * (STEPS + 1) : await requests()) - before))
    }
  for (const side of sides)
    console.log(
      `${side.name.padEnd(30)} ${median(side.samples).toFixed(3)} ms main-thread CPU per call (${Math.min(...side.samples).toFixed(3)}-${Math.max(...side.samples).toFixed(3)}, ${BATCHES} batches of ${TASKS} tasks, concurrency ${CONCURRENCY}, ${values.provider}, ${values.method})`
    )
  // each batch against the other side's batch next to it: a load that changes during the run weighs on both
  const paired = sides[0]!.samples.map((x, b) => x / sides[1]!.samples[b]!)
  console.log(
    `ratio of medians ${(median(sides[0]!.samples) / median(sides[1]!.samples)).toFixed(3)}, median of paired ratios ${median(paired).toFixed(3)}`
  )
} finally {
  child.kill()
}
process.exit(0)
