// `smurfs worker`: run bench tasks from a BullMQ queue on Redis with this machine's model server.
import type { ParseArgsOptionsConfig } from "node:util"
import { ManagedRuntime } from "effect"
import { connectionOf, displayQueueUrl, probeRedis } from "../../../bench/queue/connection.ts"
import { type Session, startWorker, WORKER_DEFAULTS } from "../../../bench/queue/worker.ts"
import { type JudgeSession, startJudgeWorker } from "../../../bench/queue/judge-queue.ts"
import { judgePrompts } from "../../../bench/eval/judge-prompts.ts"
import { resolveModelLayer } from "../model-option.ts"
import { redactText } from "../../trace/redact.ts"
import { ExitCode } from "../exit-codes.ts"
import { BadInput, intOption, type ParsedCommand, runCommand, UsageError, withoutOptions } from "../options.ts"
import { benchModelLayer, methodEntries, parseBenchArgs, taskBuilder } from "./bench.ts"

const HELP = `usage: smurfs worker --queue <redis://host:6379/0> [options]

Take tasks that \`smurfs bench --queue\` put on the queue, run them here, and send each task's record
back through the queue (no shared file system needed); judge decisions that \`smurfs eval --queue\`
put there are made here too, with the eval's judge model (or --model). Run one worker per machine or
model server; stop it with Ctrl-C (running tasks finish first; a second Ctrl-C stops at once and the
queue gives those tasks to another worker).

options:
  --queue <url>             the Redis of the run: redis://[user:password@]host:port[/db] (required)
  --concurrency <n>         tasks run at once (default ${WORKER_DEFAULTS.concurrency}; match the model server's parallelism)
  --model <spec>            the model here, instead of the run's (e.g. the same model on this machine's Ollama);
                            for judge decisions, the judge here instead of the eval's
  --endpoints <u[,u]>       this machine's servers of the model, each url or url*N
  --model-concurrency <n>   requests in flight per model server
  --timeout <ms>            per-request model timeout
  --data <dir>              where this machine keeps the data (recorded responses; with --toolset retrieve, the
                            corpus: the same query files as the coordinator's), if not where the coordinator does
  --embed-cache <dir>       where this machine caches document embeddings (--toolset retrieve --embed; default
                            ~/.cache/smurfs/embeddings here)
  --responses <file>        recorded responses to replay, instead of the run's
  --cache-dir <dir>         a StableToolBench tool_response_cache folder to replay, instead of the run's
  --stb <dir>               this machine's StableToolBench checkout (its prompt texts), instead of the run's
  --smurfs-src <dir>        this machine's checkout of the Smurfs authors' code (--profile reference), instead of the run's
  --temperature <t>, --seed <n>, --num-ctx <n>
                            sampling temperature, seed and context window here, instead of the run's
  --lock-ms <ms>            how long a task stays taken without a sign of life; a killed worker's tasks
                            go to another worker after it (default ${WORKER_DEFAULTS.lockMs})
  -h, --help                show this help

exit codes: 0 stopped cleanly, 2 bad usage, 3 bad input (queue URL), 4 queue unavailable, 130 interrupted`

/** Worker options that replace the run's own when the job's settings are read here. */
const OVERRIDES = ["model", "endpoints", "model-concurrency", "timeout", "data", "responses", "cache-dir", "stb", "embed-cache", "smurfs-src", "temperature", "seed", "num-ctx"] as const

/** The options of `smurfs worker`, in node:util parseArgs' shape. */
const OPTIONS = {
  queue: { type: "string" },
  concurrency: { type: "string" },
  "lock-ms": { type: "string" },
  model: { type: "string" },
  endpoints: { type: "string" },
  "model-concurrency": { type: "string" },
  timeout: { type: "string" },
  data: { type: "string" },
  responses: { type: "string" },
  "cache-dir": { type: "string" },
  stb: { type: "string" },
  "embed-cache": { type: "string" },
  "smurfs-src": { type: "string" },
  temperature: { type: "string" },
  seed: { type: "string" },
  "num-ctx": { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "worker", help: HELP, options: OPTIONS } as const

const parse = ({ values, given }: ParsedCommand<typeof OPTIONS>) => {
  if (!values.queue) throw new UsageError("--queue <redis://host:port/db> is required")
  try {
    connectionOf(values.queue)
  } catch (e) {
    throw new BadInput((e as Error).message)
  }
  // only what was given here replaces the job's settings (SMURFS_MODEL on this machine does too: it is this machine's model)
  const overrides = OVERRIDES.flatMap((name) => (values[name] === undefined || (!given.has(name) && name !== "model") ? [] : [`--${name}`, values[name] as string]))
  return {
    queue: values.queue,
    concurrency: intOption("concurrency", values.concurrency) ?? WORKER_DEFAULTS.concurrency,
    lockMs: intOption("lock-ms", values["lock-ms"]) ?? WORKER_DEFAULTS.lockMs,
    overrides
  }
}

/** The job's options with this worker's overrides in place of the run's own. */
export const withOverrides = (argv: ReadonlyArray<string>, overrides: ReadonlyArray<string>): Array<string> =>
  [...withoutOptions(argv, overrides.filter((a) => a.startsWith("--")).map((a) => a.slice(2))), ...overrides]

/** A session for one run's settings: its model (a runtime shared by its tasks), methods and task builder. */
const sessionOf =
  (overrides: ReadonlyArray<string>) =>
  async (argv: ReadonlyArray<string>): Promise<Session> => {
    const args = parseBenchArgs(withOverrides(argv, overrides))
    const runtime = ManagedRuntime.make(benchModelLayer(args))
    const taskOf = await runtime.runPromise(taskBuilder(args))
    return {
      runtime,
      methods: new Map(methodEntries(args).map((e) => [e.name, e.method])),
      taskOf,
      modelSpec: args.model,
      fullTrace: args.fullTrace
    }
  }

/** A judge session for an eval's judge spec and texts; this worker's --model and --stb replace the eval's. */
const judgeSessionOf =
  (overrides: ReadonlyArray<string>) =>
  async (judge: string, prompts: string): Promise<JudgeSession> => {
    const override = (name: string) => {
      const at = overrides.indexOf(`--${name}`)
      return at < 0 ? undefined : overrides[at + 1]
    }
    const spec = override("model") ?? judge
    const stb = prompts === "smurfs" ? undefined : (override("stb") ?? prompts.slice("stabletoolbench:".length))
    const timeout = override("timeout")
    const concurrency = override("model-concurrency")
    const endpoints = override("endpoints")
    const runtime = ManagedRuntime.make(resolveModelLayer(spec, {
      ...(timeout === undefined ? {} : { timeoutMs: Number(timeout) }),
      ...(concurrency === undefined ? {} : { concurrency: Number(concurrency) }),
      ...(endpoints === undefined ? {} : { endpoints: endpoints.split(",").map((e) => e.trim()).filter((e) => e !== "") })
    }))
    return { runtime, prompts: judgePrompts(stb) }
  }

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, (parsed) => work(parse(parsed)))

const work = async (args: ReturnType<typeof parse>): Promise<number> => {
  const log = (line: string) => console.error(`smurfs worker: ${line}`)
  try {
    await probeRedis(args.queue, 5000)
  } catch (e) {
    log(redactText(`cannot use the queue at ${displayQueueUrl(args.queue)} (${(e as Error).message}). Start Redis there (redis-server, or apt-get install redis-server), or check --queue.`))
    return ExitCode.ModelUnavailable
  }
  const tasks = startWorker({ queueUrl: args.queue, concurrency: args.concurrency, lockMs: args.lockMs, sessionOf: sessionOf(args.overrides), log })
  const judgements = startJudgeWorker({ queueUrl: args.queue, concurrency: args.concurrency, lockMs: args.lockMs, sessionOf: judgeSessionOf(args.overrides), log })
  await Promise.all([tasks.worker.waitUntilReady(), judgements.worker.waitUntilReady()])
  const close = async (force?: boolean) => void (await Promise.all([tasks.close(force), judgements.close(force)]))
  log(`taking bench tasks and judge decisions from ${displayQueueUrl(args.queue)}, ${args.concurrency} at a time (Ctrl-C to stop)`)
  return new Promise<number>((resolve) => {
    let stopping = false
    const stop = () => {
      if (stopping) {
        log("stopping now; the queue gives the running tasks to another worker")
        process.exit(ExitCode.Interrupted)
      }
      stopping = true
      log("finishing the running tasks (Ctrl-C again to stop at once)")
      close().then(
        () => {
          const cpu = process.cpuUsage()
          log(`stopped (CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s)`)
          resolve(ExitCode.Ok)
        },
        () => resolve(ExitCode.Failure)
      )
    }
    process.on("SIGINT", stop)
    process.on("SIGTERM", stop)
  })
}
