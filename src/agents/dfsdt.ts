// DFSDT: depth-first search over ReAct chains (StableToolBench's DFS_woFilter): each state expands up
// to `width` replies, later ones asked to differ from the earlier (diversity prompt); a give-up prunes
// its node and unwinds `giveUpBackLength` levels; depth counts tree nodes as in ReAct; a budget caps
// the model calls.
import * as Effect from "effect/Effect"
import { type GenerateError, MalformedOutput } from "../llm/errors.ts"
import { LanguageModel, type Message } from "../llm/language-model.ts"
import { calibrating } from "../memory/calibrated-model.ts"
import { fencedData } from "../text/fenced-data.ts"
import { renderTemplate } from "../text/prompt-template.ts"
import { emit } from "../trace/events.ts"
import {
  act,
  afterProse,
  asTrajectory,
  CHAIN_DEFAULTS,
  type Chain,
  type ChainOptions,
  type ChainStep,
  decide,
  makeChain,
  modelFailure,
  nodesOf,
  proseStep,
  stepsOf
} from "./chain.ts"
import { FINISH } from "./finish.ts"
import type { Method } from "./task.ts"

export interface DfsdtOptions extends ChainOptions {
  /** Children a state may get (the tree's width). */
  readonly width?: number | undefined
  /** Model calls the whole search may make. */
  readonly budget?: number | undefined
  /**
   * Levels a give-up unwinds (StableToolBench's `prune_back_length`, 2): 1 retries from the
   * give-up's own state (a sibling reply); 2 abandons that state too and retries from its parent.
   */
  readonly giveUpBackLength?: number | undefined
}

export const DFSDT_DEFAULTS = { ...CHAIN_DEFAULTS, width: 2, budget: 200, giveUpBackLength: 2 } as const

/** A state of the search: the conversation so far, the replies that led to it and its depth in tree nodes. */
interface Node {
  readonly messages: ReadonlyArray<Message>
  readonly path: ReadonlyArray<ChainStep>
  readonly depth: number
  /** First actions of the children expanded from this state, for the diversity prompt. */
  readonly tried: Array<ChainStep>
}

/**
 * The diversity prompt: the function calls already tried from this state (as StableToolBench lists
 * them), and this state's own observation once more when it has one.
 */
const diversityMessage = (chain: Chain, node: Node): Message => {
  const calls = node.tried.filter((s) => s.tool !== "")
  if (chain.asStableToolBench) return verbatimDiversityMessage(chain, node, calls)
  const candidates = JSON.stringify(
    calls.map((s) => ({ name: s.tool, arguments: s.arguments, function_output: s.response })),
    null,
    2
  )
  const last = node.path.at(-1)
  const observation = last && last.tool !== "" ? last.response : ""
  const again = observation
    ? `${renderTemplate("dfsdt-observation", { observation: fencedData("observation", observation) }).user}\n`
    : ""
  return {
    role: "user",
    content: chain.prompts.diversity(`${fencedData("previous-candidates", candidates)}\n${again}`),
    values: { candidates: calls.map((s) => s.tool) }
  }
}

/** Python's json.dumps of a string with its default ensure_ascii: DEL and every code unit past ASCII as \uXXXX. */
const asciiJson = (text: string): string =>
  JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/**
 * The diversity prompt as StableToolBench's DFS.py writes it: `json.dumps(js_list, indent=2)` of the calls tried from
 * this state (their function name as the model wrote it, arguments, observation and the Monte Carlo value their tree
 * always computes as 0.0; a give-up's observation is theirs), then DFS.py's line with the state's observation, unfenced.
 */
const verbatimDiversityMessage = (chain: Chain, node: Node, calls: ReadonlyArray<ChainStep>): Message => {
  const history = chain.prompts.history
  const output = (s: ChainStep) => (s.tool === FINISH && s.response === "" ? (history?.gaveUp ?? "") : s.response)
  const items = calls.map(
    (s) =>
      `  {\n    "name": ${asciiJson(s.tool)},\n    "arguments": ${asciiJson(s.arguments)},\n` +
      `    "function_output": ${asciiJson(output(s))},\n    "mento-carlo-action-value": 0.0\n  }`
  )
  const last = node.path.at(-1)
  const observation = last && last.tool !== "" ? last.response : ""
  // a checkout without DFS.py (a partial copy): our line, unfenced (the run says so at its start)
  const again = (o: string) =>
    history?.formerObservation?.(o) ?? `${renderTemplate("dfsdt-observation", { observation: o }).user}\n`
  return {
    role: "user",
    content: chain.prompts.diversity(`[\n${items.join(",\n")}\n]\n${observation ? again(observation) : ""}`),
    values: { candidates: calls.map((s) => s.tool) }
  }
}

type Search = { answer?: string; chain: ReadonlyArray<ChainStep>; error?: string }

/** DFSDT with width 2, the diversity prompt and a budget of model calls (StableToolBench's DFS_woFilter_w2). */
export const dfsdt =
  (options: DfsdtOptions = {}): Method =>
  (task) =>
    Effect.gen(function* () {
      const model = yield* LanguageModel
      const width = options.width ?? DFSDT_DEFAULTS.width
      const budget = options.budget ?? DFSDT_DEFAULTS.budget
      const giveUpBack = options.giveUpBackLength ?? DFSDT_DEFAULTS.giveUpBackLength
      const chain: Chain = makeChain(task, options, model.info, "dfsdt.step")
      // Count every request, reflection retries of the JSON fallback included, against the budget.
      let calls = 0
      // Every reply's usage calibrates the chain's budget, as in ReAct and Smurfs.
      const calibrated = calibrating(model, chain.budget)
      const counted = LanguageModel.of({
        info: model.info,
        generate: (request) => Effect.suspend(() => (calls++, calibrated.generate(request)))
      })
      let found: { answer: string; chain: ReadonlyArray<ChainStep> } | undefined
      let deepest: ReadonlyArray<ChainStep> = []
      const SOLVED = Number.POSITIVE_INFINITY

      /**
       * Expand `node`; returns how many levels to unwind (1: let the caller try its next child;
       * more: the caller unwinds too; Infinity: stop, solved or out of budget).
       */
      const expand = (node: Node): Effect.Effect<number, GenerateError, LanguageModel> =>
        Effect.gen(function* () {
          if (node.depth >= chain.singleChainMaxStep) {
            yield* emit("backtrack", { reason: "step_limit", depth: node.depth })
            return 1
          }
          for (let i = 0; i < width; i++) {
            if (calls >= budget) return SOLVED
            const prompt = node.tried.some((s) => s.tool !== "")
              ? [...node.messages, diversityMessage(chain, node)]
              : node.messages
            const decided = yield* Effect.result(
              decide(chain, prompt, node.path.length + 1).pipe(Effect.provideService(LanguageModel, counted))
            )
            if (decided._tag === "Failure") {
              // A reply that stayed malformed prunes this expansion only; a dead server ends the search.
              if (!(decided.failure instanceof MalformedOutput)) return yield* Effect.fail(decided.failure)
              yield* modelFailure(decided.failure)
              continue
            }
            const decision = decided.success
            const depth = node.depth + nodesOf(decision)
            if (!decision.action) {
              // A reply without a call is a thought node: it deepens the tree like any other.
              const step = proseStep(decision)
              node.tried.push(step)
              const child: Node = {
                messages: afterProse(chain, node.messages, decision),
                path: [...node.path, step],
                depth,
                tried: []
              }
              const back = yield* expand(child)
              if (back > 1) return back - 1
              continue
            }
            // The diversity prompt is dropped from the kept conversation, as in StableToolBench.
            const outcome = yield* act(chain, { ...decision, action: decision.action }, node.messages)
            node.tried.push(stepsOf(outcome)[0]!)
            const path = [...node.path, ...stepsOf(outcome)]
            if (path.length >= deepest.length) deepest = path
            if (outcome.kind === "answer") {
              found = { answer: outcome.answer, chain: path }
              return SOLVED
            }
            if (outcome.kind === "give_up") {
              yield* emit("backtrack", { reason: "give_up", depth: path.length })
              if (giveUpBack > 1) return giveUpBack - 1
              continue
            }
            const back = yield* expand({ messages: outcome.messages, path, depth, tried: [] })
            if (back > 1) return back - 1
          }
          return 1
        })

      const body: Effect.Effect<Search, never, LanguageModel> = expand({
        messages: chain.start,
        path: [],
        depth: 0,
        tried: []
      }).pipe(
        Effect.map(
          (): Search =>
            found ?? {
              chain: deepest,
              error: calls >= budget ? `the budget of ${budget} model calls ran out` : "every branch gave up"
            }
        ),
        Effect.catch((e: GenerateError) =>
          // A failure mid-search keeps an answer already found; otherwise it is recorded as a give-up.
          Effect.map(modelFailure(e), (error): Search => found ?? { chain: deepest, error })
        )
      )
      return yield* asTrajectory(task, `DFS_woFilter_w${width}`, body)
    })
