// The methods, in one list: each method's name, label, builder and the run options it reads. `solve`, `bench`,
// the perf harness and the simulated model all read this list; a name not on it is an error, never Smurfs.
import type { BaselinePrompts } from "./baseline-prompts.ts"
import type { ChainOptions } from "./chain.ts"
import { type DfsdtOptions, dfsdt } from "./dfsdt.ts"
import { type ReactOptions, react } from "./react.ts"
import { smurfs } from "./smurfs.ts"
import type { SmurfsOptions } from "./smurfs-options.ts"
import type { Method } from "./task.ts"

/** The options a run gives its methods; each method reads the ones its entry names. */
export interface MethodRunOptions {
  readonly toolCalling?: "auto" | "native" | "json" | undefined
  readonly tries?: number | undefined
  readonly smurfsMaxSteps?: number | undefined
  readonly singleChainMaxStep?: number | undefined
  readonly budget?: number | undefined
  readonly observationLimit?: number | undefined
  readonly prompts?: BaselinePrompts | undefined
  /** Smurfs: whether the final answer lists what could not be found (ToolEval labels such an answer Unsolved). */
  readonly reportUnavailable?: boolean | undefined
  /** Smurfs (improved profile): the executor's requests per step, three-call (default) or fused (`--executor`). */
  readonly smurfsExecutor?: SmurfsOptions["executor"]
  /** Smurfs: the profile's agents (the authors' texts under reference) and loop rules. */
  readonly smurfsProfile?: Pick<SmurfsOptions, "reference" | "rules"> | undefined
  /** ReAct/DFSDT: the profile's sampling and chain rules (nudge, argument validation, parallel calls). */
  readonly chainProfile?:
    | Pick<ChainOptions, "temperature" | "nudge" | "validateArgs" | "parallelCalls" | "asStableToolBench">
    | undefined
}

interface MethodEntryOf<O> {
  readonly name: string
  /** How reports and help name it. */
  readonly label: string
  /** "pipeline": the Smurfs agents; "chain": ReAct-style chains of actions (their model roles start with the method's name). */
  readonly kind: "pipeline" | "chain"
  /** The method with its own options (what `solve` passes through). */
  readonly build: (options?: O) => Method
  /** The run options this method reads, as flags' names say them (for help and run.json). */
  readonly reads: ReadonlyArray<keyof MethodRunOptions>
  /** Its options from a run's options. */
  readonly optionsOf: (run: MethodRunOptions) => O
}

const chainOptions = (run: MethodRunOptions) => ({
  toolCalling: run.toolCalling,
  singleChainMaxStep: run.singleChainMaxStep,
  observationLimit: run.observationLimit,
  prompts: run.prompts,
  ...run.chainProfile
})

const entry = <O>(e: MethodEntryOf<O>) => e

/** Every method, in the order help and reports list them. Adding one is one entry here. */
export const METHODS = [
  entry<SmurfsOptions>({
    name: "smurfs",
    label: "Smurfs",
    kind: "pipeline",
    build: smurfs,
    // the fused executor calls tools as ReAct does: natively, or by JSON (`toolCalling`)
    reads: ["smurfsMaxSteps", "reportUnavailable", "smurfsProfile", "smurfsExecutor", "toolCalling"],
    optionsOf: (run) => ({
      maxSteps: run.smurfsMaxSteps,
      reportUnavailable: run.reportUnavailable,
      executor: run.smurfsExecutor,
      toolCalling: run.toolCalling,
      ...run.smurfsProfile
    })
  }),
  entry<ReactOptions>({
    name: "react",
    label: "ReAct",
    kind: "chain",
    build: react,
    reads: ["toolCalling", "singleChainMaxStep", "observationLimit", "prompts", "chainProfile", "tries"],
    optionsOf: (run) => ({ ...chainOptions(run), tries: run.tries })
  }),
  entry<DfsdtOptions>({
    name: "dfsdt",
    label: "DFSDT",
    kind: "chain",
    build: dfsdt,
    reads: ["toolCalling", "singleChainMaxStep", "observationLimit", "prompts", "chainProfile", "budget"],
    optionsOf: (run) => ({ ...chainOptions(run), budget: run.budget })
  })
] as const

export type MethodName = (typeof METHODS)[number]["name"]
export type MethodSpec = MethodEntryOf<never>

/** The methods' names, in order (a tuple, so that a zod enum can be built from it). */
export const METHOD_NAMES = METHODS.map((m) => m.name) as unknown as readonly [MethodName, ...Array<MethodName>]

/** A method name that is not on the list. */
export class UnknownMethod extends TypeError {
  override readonly name = "UnknownMethod"
  readonly method: string
  constructor(method: string) {
    super(`unknown method "${method}" (use ${METHOD_NAMES.map((n) => `"${n}"`).join(", ")})`)
    this.method = method
  }
}

export const isMethodName = (name: string): name is MethodName => (METHOD_NAMES as ReadonlyArray<string>).includes(name)

/** The entry of a method; an unknown name throws UnknownMethod. */
export const methodSpec = (name: string): MethodEntryOf<unknown> => {
  const found = METHODS.find((m) => m.name === name)
  if (!found) throw new UnknownMethod(name)
  return found as unknown as MethodEntryOf<unknown>
}

/** A method built from a run's options; an unknown name throws UnknownMethod. */
export const methodFor = (name: string, run: MethodRunOptions = {}): Method => {
  const spec = methodSpec(name)
  return spec.build(spec.optionsOf(run))
}
