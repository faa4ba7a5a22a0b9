// A queue worker's session for τ² conversations: the domain and τ²'s texts from this worker's own checkout (--tau2),
// the run's model and user model (or this worker's own), and each job run to its record as `smurfs bench --tau2` runs
// a conversation in process.
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { standaloneModel } from "../../../src/llm/spec.ts"
import { benchModelLayer } from "../../app.ts"
import type { Session } from "../../queue/worker.ts"
import type { BenchSettings, Tau2JobSettings } from "../../settings.ts"
import { agentInstructionOf } from "./conversers.ts"
import { loadTau2DomainView } from "./domain-view.ts"
import { conversationRunner, textSourceOf } from "./harness.ts"
import type { Tau2DomainLoader } from "./port.ts"
import { scenarioText, userGuidelinesOf } from "./user-simulator.ts"

const TEXT_NAMES = { tau2: "τ²'s own (from its checkout)", smurfs: "smurfs' own (a checkout without τ²'s)" } as const

/**
 * The session of a τ² run's jobs on this worker (`settings` from workerBenchSettings: its own checkout and models).
 * Throws when this worker's checkout cannot run the run's conversations as the coordinator's would: the domain is
 * missing, or its texts are not whose the run prompts with.
 */
export const tau2SessionOf = async (
  settings: BenchSettings,
  job: Tau2JobSettings,
  loadDomain: Tau2DomainLoader = loadTau2DomainView
): Promise<Session> => {
  const tau2 = settings.tau2!
  const guidelines = userGuidelinesOf(tau2)
  const instruction = agentInstructionOf(tau2)
  for (const [what, wanted, here] of [
    ["the agent's instruction", job.agentPrompt, textSourceOf(instruction.source)],
    ["the user's guidelines", job.userGuidelines, textSourceOf(guidelines.source)]
  ] as const)
    if (wanted !== here)
      throw new Error(
        `the run prompts with ${TEXT_NAMES[wanted]} text of ${what}, and this worker's --tau2 ${tau2} gives ${TEXT_NAMES[here]}: point --tau2 at a checkout like the coordinator's`
      )
  const runtime = ManagedRuntime.make(benchModelLayer(settings))
  try {
    const domain = await runtime.runPromise(loadDomain(tau2, settings.domain))
    const userModel = await runtime.runPromise(standaloneModel(settings.userModel!, { timeoutMs: settings.timeoutMs }))
    const run = conversationRunner(settings, {
      domain,
      guidelines: guidelines.text,
      agentInstruction: instruction.text,
      userModel
    })
    return {
      runtime,
      methods: new Map(),
      taskOf: () => Effect.fail(new Error("a τ² job is a conversation, not a task")),
      modelSpec: settings.model,
      fullTrace: settings.fullTrace,
      runJob: (job) => {
        // the same task as the coordinator's: a checkout of another τ² commit would hold another scenario under the id
        const task = domain.tasks.find((t) => t.id === job.query.id)
        if (task === undefined || scenarioText(task.user_scenario) !== job.query.query)
          return Effect.succeed({
            kind: "crashed",
            error: `this worker's --tau2 ${tau2} ${task === undefined ? "has no" : "holds another"} ${settings.domain} task ${job.query.id}: point it at the coordinator's τ² commit`
          } as const)
        return run(job)
      }
    }
  } catch (e) {
    await runtime.dispose()
    throw e
  }
}
