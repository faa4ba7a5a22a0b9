// `smurfs worker`: run bench tasks from a BullMQ queue on Redis with this machine's model server.
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import type { ParseArgsOptionsConfig } from "node:util"
import * as Effect from "effect/Effect"
import type { WorkerOwnSettings } from "../../../bench/app.ts"
import { DEFAULT_DATA_DIR } from "../../../bench/datasets.ts"
import { boundHeapGrowth } from "../../../bench/heap-growth.ts"
import {
  connectionOf,
  displayQueueUrl,
  probeRedis,
  QueueUnavailable,
  WORKER_DEFAULTS
} from "../../../bench/queue/connection.ts"
import { judgeSessionOf, sessionOf } from "../../../bench/queue/sessions.ts"
import { smurfsSrcDirOf } from "../../agents/smurfs-source.ts"
import { loadWithPeers, QUEUE_PEERS } from "../../peer-packages.ts"
import { stbDirOf } from "../../text/stabletoolbench-files.ts"
import { pulledToolsOf, stbToolsDirOf } from "../../tools/toolbench/tools-folder.ts"
import { visibleText } from "../../trace/visible-text.ts"
import { ExitCode } from "../exit-codes.ts"
import { BadInput, intOption, lanesOption, type ParsedCommand, runCommand, splitList, UsageError } from "../options.ts"
import { runProgram } from "../run-program.ts"

const HELP = `usage: smurfs worker --queue <redis://host:6379/0> [options]

Take tasks that \`smurfs bench --queue\` put on the queue, run them here, and send each task's record
back through the queue (no shared file system needed); judge decisions that \`smurfs eval --queue\`
put there are made here too, with the eval's judge model (or --model). Run one worker per machine or
model server; stop it with Ctrl-C (running tasks finish first; a second Ctrl-C stops at once and the
queue gives those tasks to another worker).

options:
  --queue <url>             the Redis of the run: redis://[user:password@]host:port[/db] (required)
  --concurrency <n>         tasks run at once (default ${WORKER_DEFAULTS.concurrency}; match the model server's parallelism)
  -m, --model <spec>        the model here, instead of the run's (which a worker takes only when it names no file
                            or folder: ollama:<model>, openai:<model>, sim); for judge decisions, the judge here
  --endpoints <u[,u]>       this machine's servers of the model, each url or url*N
  --model-concurrency <n>   requests in flight per model server
  --lanes <auto|n|off>      model lanes here, instead of the run's: at most n tasks send requests, each keeping its
                            lane (auto: this machine's server's slots when known)
  --timeout <ms>            per-request model timeout
  --data <dir>              this machine's data (recorded responses; with --toolset retrieve, the corpus: the same
                            query files as the coordinator's) (default $SMURFS_DATA, else ${DEFAULT_DATA_DIR})
  --embed-cache <dir>       where this machine caches document embeddings (--toolset retrieve --embed; default
                            ~/.cache/smurfs/embeddings here)
  --responses <file>        recorded responses to replay (default <data>/responses.jsonl when present)
  --cache-dir <dir>         a StableToolBench tool_response_cache folder to replay (default: one found inside or beside --data)
  --stb <dir>               this machine's StableToolBench checkout, for runs and evals that send its prompt texts
  --stb-tools <dir>         this machine's copy of StableToolBench's tools folder, for runs that read one
  --smurfs-src <dir>        this machine's checkout of the Smurfs authors' code, for runs under --profile reference
                            (default $SMURFS_SRC)
  --tau2 <dir>              this machine's τ²-bench checkout, for runs of \`bench --tau2\` (their domain and τ²'s texts
                            are read here)
  --user-model <spec>       the model that plays τ²'s user here, instead of the run's (taken only when it names no
                            file or folder)
  --call-cache <dir>        cache model replies and tool results here
  --store-dir <dir>         where simulated responses are stored here (default a folder under the system's temp dir)
  --lock-ms <ms>            how long a task stays taken without a sign of life; a killed worker's tasks
                            go to another worker after it (default ${WORKER_DEFAULTS.lockMs})
  -h, --help                show this help

A job carries the task and the run's options only: the model server, endpoints, credentials and every
folder come from this worker's own options and environment. With SMURFS_QUEUE_SECRET set (the same on the
coordinator and its workers), jobs and results are signed, and anything unsigned is refused.

exit codes: 0 stopped cleanly, 2 bad usage, 3 bad input (queue URL), 4 queue unavailable, 130 interrupted`

/** The options of `smurfs worker`, in node:util parseArgs' shape. */
const OPTIONS = {
  queue: { type: "string" },
  concurrency: { type: "string" },
  "lock-ms": { type: "string" },
  model: { type: "string", short: "m" },
  endpoints: { type: "string" },
  "model-concurrency": { type: "string" },
  lanes: { type: "string" },
  timeout: { type: "string" },
  data: { type: "string" },
  responses: { type: "string" },
  "cache-dir": { type: "string" },
  stb: { type: "string" },
  "stb-tools": { type: "string" },
  "embed-cache": { type: "string" },
  "call-cache": { type: "string" },
  "store-dir": { type: "string" },
  "smurfs-src": { type: "string" },
  tau2: { type: "string" },
  "user-model": { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "worker", help: HELP, options: OPTIONS } as const

const parse = ({ values }: ParsedCommand<typeof OPTIONS>) => {
  if (!values.queue) throw new UsageError("--queue <redis://host:port/db> is required")
  try {
    connectionOf(values.queue)
  } catch (e) {
    throw new BadInput((e as Error).message)
  }
  const concurrency = intOption("concurrency", values.concurrency) ?? WORKER_DEFAULTS.concurrency
  // where the model, its servers and every folder come from: this worker's own options and environment, never a job
  // (SMURFS_MODEL on this machine counts as its --model: it is this machine's model)
  const own: WorkerOwnSettings = {
    model: values.model,
    endpoints: values.endpoints === undefined ? undefined : splitList([values.endpoints]),
    modelConcurrency: intOption("model-concurrency", values["model-concurrency"]),
    lanes: lanesOption("lanes", values.lanes),
    timeoutMs: intOption("timeout", values.timeout),
    concurrency,
    data: resolve(values.data ?? DEFAULT_DATA_DIR),
    responses: values.responses,
    cacheDir: values["cache-dir"],
    stb: stbDirOf(values.stb),
    stbTools: stbToolsDirOf(values["stb-tools"]) ?? pulledToolsOf(stbDirOf(values.stb)),
    smurfsSrc: smurfsSrcDirOf(values["smurfs-src"]),
    embedCache: values["embed-cache"] === undefined ? undefined : resolve(values["embed-cache"]),
    callCache: values["call-cache"] === undefined ? undefined : resolve(values["call-cache"]),
    storeDir: resolve(values["store-dir"] ?? join(tmpdir(), "smurfs-worker", "simulated")),
    tau2: values.tau2 === undefined ? undefined : resolve(values.tau2),
    userModel: values["user-model"]
  }
  return {
    queue: values.queue,
    concurrency,
    lockMs: intOption("lock-ms", values["lock-ms"]) ?? WORKER_DEFAULTS.lockMs,
    own
  }
}

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, (parsed) => work(parse(parsed)))

const work = (args: ReturnType<typeof parse>): Promise<number> => {
  // tasks at once for as long as the queue has jobs: a full collection before the heap grows far past what is alive
  boundHeapGrowth()
  // job ids, task ids and errors come from data and other machines: control characters are shown, never obeyed
  const log = (line: string) => console.error(visibleText(`smurfs worker: ${line}`))
  let close: (force?: boolean) => Promise<void> = async () => {}
  const program = Effect.gen(function* () {
    // bullmq and ioredis are optional peer packages: named with their install command when missing
    const [{ startWorker }, { startJudgeWorker }] = yield* loadWithPeers(QUEUE_PEERS, () =>
      Promise.all([import("../../../bench/queue/worker.ts"), import("../../../bench/queue/judge-queue.ts")])
    )
    yield* Effect.tryPromise({
      try: () => probeRedis(args.queue, 5000),
      catch: (e) => new QueueUnavailable({ url: args.queue, detail: (e as Error).message })
    })
    const tasks = startWorker({
      queueUrl: args.queue,
      concurrency: args.concurrency,
      lockMs: args.lockMs,
      sessionOf: sessionOf(args.own),
      log
    })
    const judgements = startJudgeWorker({
      queueUrl: args.queue,
      concurrency: args.concurrency,
      lockMs: args.lockMs,
      sessionOf: judgeSessionOf(args.own),
      log
    })
    close = async (force?: boolean) => void (await Promise.all([tasks.close(force), judgements.close(force)]))
    yield* Effect.promise(() => Promise.all([tasks.worker.waitUntilReady(), judgements.worker.waitUntilReady()]))
    log(
      `taking bench tasks and judge decisions from ${displayQueueUrl(args.queue)}, ${args.concurrency} at a time (Ctrl-C to stop)`
    )
    return yield* Effect.never
  }).pipe(
    // Ctrl-C is how a worker is stopped: the running tasks finish first
    Effect.onInterrupt(() => Effect.promise(() => close()))
  )
  return runProgram(program, {
    command: "worker",
    interruptedCode: ExitCode.Ok,
    interrupted: () => {
      const cpu = process.cpuUsage()
      log(`stopped (CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s)`)
    },
    // the first Ctrl-C lets the running tasks finish; a second stops at once
    listen: () => {
      let signals = 0
      const again = () => {
        if (++signals === 1) return log("finishing the running tasks (Ctrl-C again to stop at once)")
        log("stopping now; the queue gives the running tasks to another worker")
        process.exit(ExitCode.Interrupted)
      }
      process.on("SIGINT", again)
      process.on("SIGTERM", again)
      return () => (process.off("SIGINT", again), process.off("SIGTERM", again))
    }
  })
}
