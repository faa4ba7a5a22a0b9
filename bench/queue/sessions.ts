// What a queue worker runs a job with: a session per run's settings (model runtime, methods, task builder) and per
// eval's judge, built from the job's run options and the worker's own model server, folders and checkouts.
import * as ManagedRuntime from "effect/ManagedRuntime"
import { modelLayer } from "../../src/llm/spec.ts"
import {
  benchModelLayer,
  methodEntries,
  taskBuilder,
  type WorkerOwnSettings,
  workerBenchSettings,
  workerModelOf,
  workerStbOf
} from "../app.ts"
import { tau2SessionOf } from "../benchmarks/tau2/worker-session.ts"
import { judgePrompts } from "../eval/judge-prompts.ts"
import type { JobSettings } from "../settings.ts"
import type { JudgeSession } from "./judge-queue.ts"
import type { Session } from "./worker.ts"

/** A session for one run's settings: its model (a runtime shared by its tasks), methods and task builder. */
export const sessionOf =
  (own: WorkerOwnSettings) =>
  async (job: JobSettings): Promise<Session> => {
    const settings = workerBenchSettings(job, own)
    // a τ² run's jobs are conversations on this worker's own checkout
    if (job.tau2 !== undefined) return tau2SessionOf(settings, job.tau2)
    const runtime = ManagedRuntime.make(benchModelLayer(settings))
    const taskOf = await runtime.runPromise(taskBuilder(settings))
    return {
      runtime,
      methods: new Map(methodEntries(settings).map((e) => [e.name, e.method])),
      taskOf,
      modelSpec: settings.model,
      fullTrace: settings.fullTrace
    }
  }

/** A judge session for an eval's judge and texts: this worker's model server, and its own checkout for StableToolBench's texts. */
export const judgeSessionOf =
  (own: WorkerOwnSettings) =>
  async (judge: string, prompts: string): Promise<JudgeSession> => {
    const spec = workerModelOf(judge, own)
    const stb = workerStbOf(prompts === "smurfs" ? "smurfs" : "stabletoolbench", own)
    const runtime = ManagedRuntime.make(
      modelLayer(spec, {
        ...(own.timeoutMs === undefined ? {} : { timeoutMs: own.timeoutMs }),
        ...(own.modelConcurrency === undefined ? {} : { concurrency: own.modelConcurrency }),
        ...(own.endpoints === undefined ? {} : { endpoints: own.endpoints })
      })
    )
    return { runtime, prompts: judgePrompts(stb) }
  }
