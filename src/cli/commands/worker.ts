// `smurfs worker`: run bench tasks from a BullMQ queue on Redis with this machine's model server.
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
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
import { COMMAND } from "./worker-help.ts"

export { COMMAND }

const parse = ({ values }: ParsedCommand<typeof COMMAND.options>) => {
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
