// The simulated environment (StableToolBench's tool server): on a miss, a simulator model writes the response, which is stored for replay.
import { mkdirSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { z } from "zod"
import { LanguageModel } from "../../llm/language-model.ts"
import { generateObject } from "../../llm/structured.ts"
import { refuseSymlinksSync } from "../../trace/guarded-fs.ts"
import { appendJsonLine } from "../../trace/jsonl.ts"
import { redactValue } from "../../trace/redact.ts"
import type { ToolResult } from "../tool.ts"
import { addCacheEntry, cacheFilePath } from "./cache-store.ts"
import { canonicalArgs } from "./canonical.ts"
import type { ToolCall, ToolEnvironment } from "./environment.ts"
import {
  formatRecordedResponse,
  lookupServed,
  parseRecordedResponse,
  type Recording,
  type ReplayIndex
} from "./recorded.ts"
import { warnOnStderr } from "./replay.ts"
import { cacheKeyOf, type SimulatorPrompts, smurfsSimulatorPrompts } from "./simulator-prompts.ts"
import { writtenKey } from "./written-args.ts"

/** The file, inside a store folder, that simulated responses are appended to (responses.jsonl format). */
export const SIMULATED_STORE_FILE = "simulated-responses.jsonl"

/** What the model must reply: StableToolBench's `{error, response}` (MirrorAPI's extra `mechanism_of_the_api` is dropped). */
export const SimulatedResponse = z.object({
  error: z.string().default(""),
  response: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
})

export interface SimulatedOptions {
  /** Recordings: looked up first, source of examples, and where generated responses are added. */
  readonly index: ReplayIndex
  /** Folder to append generated responses to (responses.jsonl format), so that the next run replays them. */
  readonly storeDir?: string | undefined
  /**
   * The folder the store (or the cache folder, when it is inside) must stay in (a run directory): no symbolic
   * link below it is followed.
   */
  readonly storeRoot?: string | undefined
  /**
   * A StableToolBench cache folder to add generated responses to, in their layout and keys
   * (`<Category>/<tool>_for_<Category>/<api>.json`); concurrent writers merge. Without it nor
   * `storeDir`, responses are kept in memory only.
   */
  readonly cacheDir?: string | undefined
  /** The texts and sampling of the simulation: StableToolBench's server prompts or ours (the default). */
  readonly prompts?: SimulatorPrompts | undefined
  /** Told when a response could not be stored or a cache file was set aside; stderr by default. */
  readonly warn?: ((line: string) => void) | undefined
}

/** The simulator's server failed (unreachable, timed out, 5xx...): no response came, whatever the tool would say. */
export interface SimulatorFailure {
  readonly message: string
  /** The model layer's error tag (ModelUnreachable, Timeout...). */
  readonly tag: string
}

/**
 * One task's watch of the simulator, provided by whoever runs the task (the bench's executeTask): the first
 * server failure of the simulator during the task is put here, the task's later misses are not sent (a hung
 * simulator costs one timeout per task), and the task is recorded as `error`, not as a result, as when the
 * model server fails. Without one (a library caller), each call the simulator could not answer is a miss.
 */
export interface SimulatorWatch {
  failure: SimulatorFailure | undefined
}
export const SimulatorWatch = Context.Reference<SimulatorWatch | undefined>("smurfs/SimulatorWatch", {
  defaultValue: () => undefined
})

const isServerFault = (e: unknown): boolean =>
  typeof e === "object" && e !== null && (e as { serverFault?: unknown }).serverFault === true

/** A call the simulator could not answer: a failed call, counted as a miss (no recorded or simulated response). */
const unanswered = (failure: SimulatorFailure): ToolResult => ({
  ok: false,
  content: "",
  error: `the tool simulator could not answer, so the call has no response: ${failure.message}`,
  missed: true
})

/** Cache write failures shown per environment; a full disk fails every write, and one line says it. */
const SHOWN_WRITE_FAILURES = 3

export interface SimulatedEnvironment extends ToolEnvironment {
  /** Model calls made so far (misses of the index). */
  readonly generated: () => number
  /** Which texts the simulator is sent (SimulatorPrompts.source). */
  readonly prompts: string
}

/** Build the simulated environment with the current LanguageModel. */
export const makeSimulatedEnvironment = (
  options: SimulatedOptions
): Effect.Effect<SimulatedEnvironment, never, LanguageModel> =>
  Effect.gen(function* () {
    const model = yield* LanguageModel
    const prompts = options.prompts ?? smurfsSimulatorPrompts()
    const storeFile = options.storeDir === undefined ? undefined : join(options.storeDir, SIMULATED_STORE_FILE)
    // the ledger names who simulated a response: the simulator model and its texts
    const simulator = `${model.info.spec} · ${prompts.source}`
    let generated = 0

    const warn = options.warn ?? warnOnStderr
    // a cache folder inside the run directory (the default one) is the run's own: no link below the run is followed
    const cacheRoot =
      options.cacheDir !== undefined &&
      options.storeRoot !== undefined &&
      !relative(resolve(options.storeRoot), resolve(options.cacheDir)).startsWith("..")
        ? options.storeRoot
        : undefined
    let writeFailures = 0
    const failedWrite = (e: unknown) =>
      Effect.sync(() => {
        // an unwritable cache only costs a model call next run, but the user hears of it
        if (++writeFailures > SHOWN_WRITE_FAILURES) return
        warn(
          `warning: ${(e as Error).message}; the response is used in this run but not stored` +
            (writeFailures === SHOWN_WRITE_FAILURES ? " (further cache write failures are not shown)" : "")
        )
      })
    const storeInCache = (call: ToolCall, recording: Recording, value: unknown) =>
      options.cacheDir === undefined
        ? Effect.void
        : Effect.tryPromise({
            try: (signal) =>
              addCacheEntry(
                cacheFilePath(options.cacheDir!, call.doc.category_name, call.stdTool, call.stdApi),
                recording.key!,
                redactValue(value),
                { signal, note: (line) => warn(`warning: ${line}`), root: cacheRoot }
              ),
            catch: (e) => e
          }).pipe(Effect.catch(failedWrite))

    // a simulator that keeps no cache (their MirrorAPI servers) stores nothing, not even for this run
    const store = (call: ToolCall, recording: Recording, value: unknown) =>
      prompts.cached === false
        ? Effect.void
        : Effect.andThen(storeInCache(call, recording, value), () => storeInRun(recording))

    const storeInRun = (recording: Recording) =>
      Effect.sync(() => {
        options.index.add(recording, recording.key)
        if (storeFile === undefined) return
        try {
          if (options.storeRoot !== undefined) refuseSymlinksSync(options.storeRoot, options.storeDir!)
          mkdirSync(options.storeDir!, { recursive: true })
          // the stored copy is redacted: a model may have echoed a key into a simulated response
          appendJsonLine(storeFile, redactValue(recording))
        } catch {
          // a store that cannot be written only costs a model call next run; the response itself is fine
        }
      })

    const simulate = (call: ToolCall): Effect.Effect<ToolResult> => {
      const messages = prompts.messages(
        call,
        prompts.maxExamples > 0 ? options.index.examples(call.stdTool, call.stdApi, prompts.maxExamples) : []
      )
      return generateObject({
        role: "tool.simulate",
        schema: SimulatedResponse,
        ...(prompts.formatAs === undefined ? {} : { formatAs: prompts.formatAs }),
        messages,
        options: {
          temperature: prompts.temperature,
          ...(prompts.seed === undefined ? {} : { seed: prompts.seed }),
          ...(prompts.maxTokens === undefined ? {} : { maxTokens: prompts.maxTokens })
        }
      }).pipe(
        Effect.provideService(LanguageModel, model),
        Effect.tap(() => Effect.sync(() => generated++)),
        Effect.flatMap(({ value }) => {
          const recording: Recording = {
            tool: call.stdTool,
            api: call.stdApi,
            args: canonicalArgs(call.args),
            response: formatRecordedResponse(value.error, value.response),
            cls: "simulated",
            n: 1,
            key: cacheKeyOf(call.args)
          }
          return Effect.as(store(call, recording, { error: value.error, response: value.response }), {
            ...parseRecordedResponse(recording.response),
            served: { by: "simulated", simulator }
          } satisfies ToolResult)
        }),
        Effect.catch((e) =>
          isServerFault(e)
            ? Effect.map(Effect.service(SimulatorWatch), (watch) => {
                const failure = { message: e.message, tag: (e as { readonly _tag: string })._tag }
                if (watch !== undefined) watch.failure ??= failure
                return unanswered(failure)
              })
            : Effect.succeed<ToolResult>({
                ok: false,
                content: "",
                error: `the simulated environment could not produce a response: ${e.message}`,
                served: { by: "failed", simulator }
              })
        )
      )
    }

    // concurrent identical misses share one model call instead of generating (and storing) twice
    const inflight = new Map<string, Effect.Effect<ToolResult>>()
    const simulateOnce = (call: ToolCall): Effect.Effect<ToolResult> => {
      // (under reference, calls written differently are different keys of their cache: simulated apart)
      const key = `${call.stdTool}\u0000${call.stdApi}\u0000${canonicalArgs(call.args)}\u0000${writtenKey(call.args) ?? ""}`
      const running = inflight.get(key)
      if (running) return running
      return Effect.flatMap(
        Effect.cached(simulate(call).pipe(Effect.ensuring(Effect.sync(() => inflight.delete(key))))),
        (shared) => {
          inflight.set(key, shared)
          return shared
        }
      )
    }

    return {
      name: "simulated",
      generated: () => generated,
      prompts: prompts.source,
      serve: (call) =>
        Effect.suspend(() => {
          const recorded =
            prompts.cached === false ? undefined : lookupServed(options.index, call.stdTool, call.stdApi, call.args)
          if (recorded) return Effect.succeed(recorded)
          // the simulator already failed this task: its later misses are not sent
          return Effect.flatMap(Effect.service(SimulatorWatch), (watch) =>
            watch?.failure === undefined ? simulateOnce(call) : Effect.succeed(unanswered(watch.failure))
          )
        })
    } satisfies SimulatedEnvironment
  })
