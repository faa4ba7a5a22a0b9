// Overhead through HTTP: the request rate `smurfs bench` keeps against a loopback model server, against bare request loops.
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startFakeOllama } from "../../test/fake-servers/ollama.ts"

const CLI = fileURLToPath(new URL("../../bin/smurfs.js", import.meta.url))

export interface HttpOverheadOptions {
  /** The ToolBench data directory. */
  readonly data: string
  /** Requests in flight: tasks for the bench, loops for the baseline. */
  readonly inFlight: number
  /** The server's time per reply. */
  readonly latencyMs: number
  /** Queries of each group the bench runs (ReAct: two model calls a task). */
  readonly perGroup: number
  /** How long the bare loops run. */
  readonly loopSeconds: number
  /** Rounds of bare loops then bench, on one server; the round with the median ratio is reported (default 3). */
  readonly rounds?: number | undefined
}

export interface HttpOverhead {
  /** Steady rates: over the middle 80% of each client's requests (see `steadyRate`). */
  readonly bareRequestsPerSecond: number
  readonly benchRequestsPerSecond: number
  readonly benchRequests: number
  readonly ratio: number
  /** From each client's first request to its last, warm-up and wind-down included. */
  readonly wholeRun: {
    readonly bareRequestsPerSecond: number
    readonly benchRequestsPerSecond: number
    readonly ratio: number
  }
}

/** The median round's figures, and every round's steady ratio in the order run. */
export interface HttpOverheadRounds extends HttpOverhead {
  readonly roundRatios: ReadonlyArray<number>
}

/** ReAct's two calls: the task's first tool, then Finish; every reply `latencyMs` late. */
const replyFor =
  (latencyMs: number) =>
  (body: { messages?: Array<{ role: string }>; tools?: Array<{ function: { name: string } }> }) => {
    const called = (body.messages ?? []).some((m) => m.role === "tool")
    const first = body.tools?.find((t) => t.function.name !== "Finish")?.function.name
    return called || !first
      ? {
          toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }],
          delayMs: latencyMs
        }
      : { toolCalls: [{ name: first, arguments: {} }], delayMs: latencyMs }
  }

/** Requests per second between the first and the last of `times`. */
const rate = (times: ReadonlyArray<number>): number =>
  times.length < 2 ? 0 : (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000)

/**
 * The rate over the middle 80% of the requests, for both clients alike: the first tenth is warm-up (a
 * cold JIT; the bench's first 16 tasks all start at once) and the last is wind-down (the bench's last
 * tasks finish with fewer than 16 in flight), neither of which is the overhead per request.
 */
const steadyRate = (times: ReadonlyArray<number>): number =>
  rate(times.slice(Math.floor(times.length * 0.1), Math.ceil(times.length * 0.9)))

/**
 * `rounds` rounds of `measureRound` on one server (a round's figure varies by a few percent with what else
 * the machine does); the round with the median ratio is the one reported, every round's ratio beside it.
 */
export const measureHttpOverhead = async (options: HttpOverheadOptions): Promise<HttpOverheadRounds> => {
  const arrivals: Array<number> = []
  const reply = replyFor(options.latencyMs)
  const server = await startFakeOllama({ chat: (body) => (arrivals.push(performance.now()), reply(body)) })
  try {
    const rounds: Array<HttpOverhead> = []
    for (let r = 0; r < Math.max(1, options.rounds ?? 3); r++)
      rounds.push(await measureRound(options, server.url, arrivals))
    const byRatio = [...rounds].sort((a, b) => a.ratio - b.ratio)
    return { ...byRatio[Math.floor((byRatio.length - 1) / 2)]!, roundRatios: rounds.map((r) => r.ratio) }
  } finally {
    await server.close()
  }
}

/**
 * One loopback server, two clients in turn: `inFlight` bare loops posting /api/chat (no framework),
 * then `smurfs bench` (ReAct, `inFlight` tasks at once, as many requests in flight per server). The
 * ratio of their request rates is the framework's cost through HTTP; it prints figures, asserts nothing.
 */
const measureRound = async (
  options: HttpOverheadOptions,
  url: string,
  arrivals: Array<number>
): Promise<HttpOverhead> => {
  arrivals.splice(0)
  const scratch = mkdtempSync(join(tmpdir(), "smurfs-http-"))
  try {
    // bare loops: the same request shape a ReAct step sends, as fast as the server answers
    const body = JSON.stringify({
      model: "qwen2.5:7b",
      stream: false,
      messages: [{ role: "user", content: "hi" }],
      tools: [{ type: "function", function: { name: "t", parameters: { type: "object", properties: {} } } }]
    })
    const until = performance.now() + options.loopSeconds * 1000
    const loop = async () => {
      while (performance.now() < until)
        await (
          await fetch(`${url}/api/chat`, { method: "POST", body, headers: { "content-type": "application/json" } })
        ).json()
    }
    await Promise.all(Array.from({ length: options.inFlight }, loop))
    const bareArrivals = arrivals.splice(0)

    const out = join(scratch, "run")
    const args = [
      CLI,
      "bench",
      "--data",
      options.data,
      "--limit",
      String(options.perGroup),
      "--method",
      "react",
      "--env",
      "replay,offline",
      "--tool-calling",
      "native",
      "--model",
      "ollama:qwen2.5:7b",
      "--concurrency",
      String(options.inFlight),
      "--model-concurrency",
      String(options.inFlight),
      "--out",
      out
    ]
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, args, {
        env: { ...process.env, OLLAMA_HOST: url, NO_COLOR: "1" },
        stdio: "ignore"
      })
      child.on("exit", resolve)
    })
    if (code !== 0) throw new Error(`smurfs bench exited with ${code}`)
    const [bare, bench] = [steadyRate(bareArrivals), steadyRate(arrivals)]
    const whole = { bareRequestsPerSecond: rate(bareArrivals), benchRequestsPerSecond: rate(arrivals) }
    return {
      bareRequestsPerSecond: bare,
      benchRequestsPerSecond: bench,
      benchRequests: arrivals.length,
      ratio: bench / bare,
      wholeRun: { ...whole, ratio: whole.benchRequestsPerSecond / whole.bareRequestsPerSecond }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
