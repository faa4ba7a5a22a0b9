// CPU per model call against the libraries a user would pick instead: `npm run bench:peers [-- --tasks 200 --rounds 3 --only ollama,node:http]`.
// One stand-in server (a child process, so its CPU is not counted), clients in interleaved rounds: our ReAct
// through the Ollama client and through the openai client (`solve`), the Vercel AI SDK's tool loop (`generateText`
// with `@ai-sdk/openai` on the stand-in's /v1), the same tool loop written on the bare `openai` and `ollama`
// clients (the floor each of our providers stands on) and a bare node:http loop. Prints figures; asserts nothing.
import { fork } from "node:child_process"
import { Agent, request } from "node:http"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { createOpenAI } from "@ai-sdk/openai"
import { generateText, stepCountIs, tool } from "ai"
import { Ollama } from "ollama"
import OpenAI from "openai"
import { z } from "zod"
import { solve } from "../../src/solve.ts"
import { defineTool } from "../../src/tools/define-tool.ts"
import { STEPS } from "./stand-in-replies.ts"

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "150" },
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "1,16" },
    only: { type: "string" }
  }
})
const TASKS = Math.max(10, Number(values.tasks) || 150)
const ROUNDS = Math.max(1, Number(values.rounds) || 3)
const CONCURRENCIES = values.concurrency!.split(",").map(Number)
/**
 * The stand-in answers every request at once, as the bare loops assume; our clients are told so, since
 * concurrent `solve` calls share one limit of requests in flight per server (1 by default for Ollama).
 */
const SERVED_AT_ONCE = Math.max(...CONCURRENCIES)

/** Five tools of one string parameter each, as every client declares them. */
const TOOL_NAMES = ["search_flights", "get_weather", "convert_currency", "find_hotel", "lookup_city"]
const toolResult = (name: string, query: string) =>
  JSON.stringify({ tool: name, query, result: "ok", items: [1, 2, 3] })
const ourTools = TOOL_NAMES.map((name) =>
  defineTool({
    name,
    description: `The ${name.replace(/_/g, " ")} service.`,
    parameters: z.object({ query: z.string().describe("what to look up") }),
    execute: ({ query }) => toolResult(name, query)
  })
)
const aiTools = Object.fromEntries(
  TOOL_NAMES.map((name) => [
    name,
    tool({
      description: `The ${name.replace(/_/g, " ")} service.`,
      inputSchema: z.object({ query: z.string().describe("what to look up") }),
      execute: async ({ query }) => toolResult(name, query)
    })
  ])
)

/** A client: solves one task (STEPS tool calls, then an answer) against the stand-in. */
type Client = (url: string, i: number) => Promise<unknown>

const query = (i: number) => `Plan trip ${i}: flights, weather, money and a hotel.`

const clients: Record<string, Client> = {
  "smurfs react (ollama client)": (url, i) =>
    solve(query(i), {
      model: "ollama:stand-in",
      modelOptions: { host: url, supportsTools: true, concurrency: SERVED_AT_ONCE },
      tools: ourTools,
      method: "react",
      id: `t${i}`
    }),
  "smurfs react (openai client)": (url, i) =>
    solve(query(i), {
      model: "openai:stand-in",
      modelOptions: { baseURL: `${url}/v1`, apiKey: "stand-in", concurrency: SERVED_AT_ONCE },
      tools: ourTools,
      method: "react",
      id: `t${i}`
    }),
  "Vercel AI SDK (generateText)": (() => {
    let provider: ReturnType<typeof createOpenAI> | undefined
    return (url: string, i: number) => {
      provider ??= createOpenAI({ baseURL: `${url}/v1`, apiKey: "stand-in" })
      return generateText({
        model: provider.chat("stand-in"),
        tools: aiTools,
        stopWhen: stepCountIs(STEPS + 2),
        prompt: query(i)
      })
    }
  })(),
  "openai client loop (bare)": (() => {
    let client: OpenAI | undefined
    const tools = TOOL_NAMES.map((name) => ({
      type: "function" as const,
      function: {
        name,
        description: name,
        parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] }
      }
    }))
    return async (url: string, i: number) => {
      client ??= new OpenAI({ baseURL: `${url}/v1`, apiKey: "stand-in", maxRetries: 0 })
      const messages: Array<OpenAI.ChatCompletionMessageParam> = [{ role: "user", content: query(i) }]
      for (;;) {
        const reply = await client.chat.completions.create({ model: "stand-in", messages, tools })
        const message = reply.choices[0]!.message
        const call = message.tool_calls?.[0]
        if (call?.type !== "function") return message.content
        const args = JSON.parse(call.function.arguments) as { query: string }
        messages.push(message, {
          role: "tool",
          tool_call_id: call.id,
          content: toolResult(call.function.name, args.query)
        })
      }
    }
  })(),
  "ollama client loop (bare)": (() => {
    let client: Ollama | undefined
    const tools = TOOL_NAMES.map((name) => ({
      type: "function",
      function: {
        name,
        description: name,
        parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] }
      }
    }))
    return async (url: string, i: number) => {
      client ??= new Ollama({ host: url })
      const messages: Array<{ role: string; content: string }> = [{ role: "user", content: query(i) }]
      for (;;) {
        const reply = await client.chat({ model: "stand-in", messages, tools, stream: false })
        const call = reply.message.tool_calls?.[0]
        if (!call) return reply.message.content
        messages.push(reply.message, {
          role: "tool",
          content: toolResult(call.function.name, String(call.function.arguments["query"]))
        })
      }
    }
  })(),
  "node:http loop": (() => {
    const agent = new Agent({ keepAlive: true })
    const tools = TOOL_NAMES.map((name) => ({
      type: "function",
      function: {
        name,
        description: name,
        parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] }
      }
    }))
    const post = (url: string, body: unknown) =>
      // biome-ignore lint/suspicious/noExplicitAny: the stand-in's JSON, read as the loop needs it
      new Promise<any>((resolve, reject) => {
        const req = request(
          `${url}/api/chat`,
          { method: "POST", agent, headers: { "content-type": "application/json" } },
          (res) => {
            const chunks: Array<Buffer> = []
            res.on("data", (c: Buffer) => chunks.push(c))
            res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
            res.on("error", reject)
          }
        )
        req.on("error", reject)
        req.end(JSON.stringify(body))
      })
    return async (url: string, i: number) => {
      const messages: Array<Record<string, unknown>> = [{ role: "user", content: query(i) }]
      for (;;) {
        const reply = await post(url, { model: "stand-in", stream: false, messages, tools })
        const call = reply.message.tool_calls?.[0]
        if (!call) return reply.message.content
        messages.push(reply.message, {
          role: "tool",
          content: toolResult(call.function.name, call.function.arguments.query)
        })
      }
    }
  })()
}

/** Run `tasks` tasks, `concurrency` at a time. */
const runTasks = async (client: Client, url: string, tasks: number, concurrency: number) => {
  let next = 0
  const worker = async () => {
    while (next < tasks) await client(url, next++)
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

const requestsSoFar = async (url: string): Promise<number> =>
  ((await (await fetch(`${url}/stats`)).json()) as { requests: number }).requests

interface Sample {
  readonly calls: number
  /** Process CPU (every thread: the main one, GC helpers, libuv) per model call, ms. */
  readonly cpuMs: number
  /** The main thread's own CPU per model call, ms. */
  readonly mainMs: number
  /** The event loop's busy time per model call, ms (inflated by a busy machine's preemption). */
  readonly eluMs: number
  readonly callsPerSecond: number
}

/** One measured batch: a warm-up tenth first (JIT, pools), then the middle of the run measured. */
const measure = async (client: Client, url: string, concurrency: number): Promise<Sample> => {
  await runTasks(client, url, Math.ceil(TASKS / 10), concurrency)
  const before = await requestsSoFar(url)
  const cpu = process.cpuUsage()
  const main = process.threadCpuUsage()
  const elu = performance.eventLoopUtilization()
  const started = performance.now()
  await runTasks(client, url, TASKS, concurrency)
  const wallMs = performance.now() - started
  const used = process.cpuUsage(cpu)
  const mainUsed = process.threadCpuUsage(main)
  const busy = performance.eventLoopUtilization(elu)
  const calls = (await requestsSoFar(url)) - before
  return {
    calls,
    cpuMs: (used.user + used.system) / 1000 / calls,
    mainMs: (mainUsed.user + mainUsed.system) / 1000 / calls,
    eluMs: busy.active / calls,
    callsPerSecond: calls / (wallMs / 1000)
  }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
const range = (xs: ReadonlyArray<number>) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`

const child = fork(fileURLToPath(new URL("./stand-in.ts", import.meta.url)), [], {
  stdio: ["ignore", "pipe", "inherit", "ipc"]
})
const url = await new Promise<string>((resolve, reject) => {
  child.stdout!.once("data", (d: Buffer) => resolve((JSON.parse(d.toString("utf8")) as { url: string }).url))
  child.once("exit", (code) => reject(new Error(`the stand-in server exited with ${code}`)))
})
try {
  // `--only ollama,node:http`: the clients whose names contain any of these
  const only = values.only?.toLowerCase().split(",")
  const names = Object.keys(clients).filter(
    (n) => only === undefined || only.some((o) => n.toLowerCase().includes(o.trim()))
  )
  console.log(
    `node ${process.versions.node}; ${TASKS} tasks × ${STEPS + 1} model calls per client and round, ${ROUNDS} interleaved rounds; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`
  )
  for (const concurrency of CONCURRENCIES) {
    const samples = new Map<string, Array<Sample>>(names.map((n) => [n, []]))
    for (let round = 0; round < ROUNDS; round++) {
      // each round starts with another client, so that no client always runs on a warmer (or busier) machine
      for (const [k] of names.entries()) {
        const name = names[(k + round) % names.length]!
        samples.get(name)!.push(await measure(clients[name]!, url, concurrency))
      }
    }
    console.log(
      `\nconcurrency ${concurrency} (median of ${ROUNDS} rounds, range in brackets; load average now ${loadavg()[0]!.toFixed(1)})`
    )
    console.log(
      `${"client".padEnd(31)} ${"main-thread CPU/call".padStart(24)} ${"process CPU/call".padStart(24)} ${"loop busy/call".padStart(16)} ${"calls/s".padStart(8)} ${"calls/task".padStart(10)}`
    )
    const mainOf = (n: string) => median(samples.get(n)!.map((s) => s.mainMs))
    for (const n of names) {
      const s = samples.get(n)!
      const main = s.map((x) => x.mainMs),
        cpu = s.map((x) => x.cpuMs)
      console.log(
        `${n.padEnd(31)} ${`${median(main).toFixed(3)} ms (${range(main)})`.padStart(24)} ${`${median(cpu).toFixed(3)} ms (${range(cpu)})`.padStart(24)} ${`${median(s.map((x) => x.eluMs)).toFixed(3)} ms`.padStart(16)} ${median(
          s.map((x) => x.callsPerSecond)
        )
          .toFixed(0)
          .padStart(8)} ${(s[0]!.calls / TASKS).toFixed(1).padStart(10)}`
      )
    }
    const [ai, bare] = ["Vercel AI SDK (generateText)", "node:http loop"]
    for (const ours of names.filter((n) => n.startsWith("smurfs"))) {
      // the same package's bare loop: what our provider stands on
      const own = ours.includes("ollama") ? "ollama client loop (bare)" : "openai client loop (bare)"
      const ratios = [
        samples.has(ai) ? `${(mainOf(ours) / mainOf(ai)).toFixed(2)}× the AI SDK's` : undefined,
        samples.has(bare) ? `${(mainOf(ours) / mainOf(bare)).toFixed(2)}× node:http's` : undefined,
        samples.has(own) ? `${(mainOf(ours) / mainOf(own)).toFixed(2)}× the ${own}'s` : undefined
      ].filter((r) => r !== undefined)
      if (ratios.length > 0) console.log(`${ours}: ${ratios.join(", ")} main-thread CPU per call`)
    }
  }
} finally {
  child.kill()
}
// the clients' keep-alive sockets would hold the process open
process.exit(0)
