// The ported τ² domains (load.ts, gold.ts, score.ts) as the conversation harness reads them (port.ts): the harness'
// transcript in τ²'s message shape for the scorer, τ²'s RewardInfo as the record's reward.
import * as Effect from "effect/Effect"
import { DatasetError } from "../../datasets.ts"
import { replayGold } from "./gold.ts"
import { loadTau2Domain, type Tau2Domain } from "./load.ts"
import type { Tau2DomainLoader, Tau2DomainView } from "./port.ts"
import { type PyValue, pyToPlain } from "./python-json.ts"
import { scoreConversation, type Tau2MessageInput, type Tau2Reward } from "./score.ts"
import type { Tau2RewardType, Tau2Task } from "./tasks.ts"
import type { Reward, TranscriptMessage } from "./transcript.ts"

/** The harness' messages as τ² records them (every tool call requested by the assistant). */
export const tau2Messages = (messages: ReadonlyArray<TranscriptMessage>): Array<Tau2MessageInput> =>
  messages.map((m): Tau2MessageInput => {
    if (m.role === "user") return { role: "user", content: m.content }
    if (m.role === "tool") return { role: "tool", id: m.id, content: m.content, requestor: "assistant", error: m.error }
    return {
      role: "assistant",
      content: m.content ?? null,
      tool_calls:
        m.toolCalls === undefined || m.toolCalls.length === 0
          ? null
          : m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments, requestor: "assistant" }))
    }
  })

/** τ²'s RewardInfo as the record keeps it: the reward, its components, what could not be evaluated, every check. */
export const rewardOf = (r: Tau2Reward, nlProblem?: string): Reward => {
  // what lowered the reward: only the components of the task's basis count
  const counts = (t: Tau2RewardType) => r.rewardBasis?.includes(t) === true
  const notes = [
    ...(r.note === undefined ? [] : [r.note]),
    ...(counts("DB") && r.dbCheck && !r.dbCheck.dbMatch ? ["the database differs from the gold state"] : []),
    ...(counts("ACTION") ? (r.actionChecks ?? []) : [])
      .filter((c) => !c.actionMatch)
      .map((c) => `action ${c.action.name} was not taken as the gold one`),
    ...(counts("COMMUNICATE") ? (r.communicateChecks ?? []) : []).filter((c) => !c.met).map((c) => c.justification),
    ...r.notEvaluated.map(
      (t) =>
        `${t} not evaluated (${t === "NL_ASSERTION" && nlProblem !== undefined ? nlProblem : "no judge"}): the reward is the product of the others`
    )
  ]
  return {
    reward: r.reward,
    breakdown: { ...r.breakdown } as Record<string, number>,
    ...(notes.length > 0 ? { notes } : {}),
    info: pyToPlain({
      rewardBasis: r.rewardBasis,
      notEvaluated: r.notEvaluated,
      ...(r.dbCheck ? { dbCheck: r.dbCheck } : {}),
      ...(r.actionChecks ? { actionChecks: r.actionChecks } : {}),
      ...(r.communicateChecks ? { communicateChecks: r.communicateChecks } : {}),
      // the judge's verdicts on the natural-language assertions (--judge), kept whatever the reward
      ...(r.nlAssertions?.length ? { nlAssertions: r.nlAssertions } : {}),
      ...(r.replayMismatches?.length ? { replayMismatches: r.replayMismatches } : {})
    } as unknown as PyValue) as Record<string, unknown>
  }
}

/** A loaded domain as the harness reads it. */
export const domainView = (domain: Tau2Domain): Tau2DomainView<unknown, Tau2Task> => ({
  name: domain.name,
  policy: domain.policy,
  tasks: domain.tasks,
  splits: domain.splits,
  initialDb: domain.initialDb,
  tools: domain.tools,
  dbHash: domain.hashDb,
  goldDb: (task) => (task.evaluation_criteria == null ? undefined : replayGold(domain, task).db),
  nlAssertions: (task) => task.evaluation_criteria?.nl_assertions ?? [],
  score: (task, conversation) =>
    rewardOf(
      scoreConversation(
        domain,
        task,
        { messages: tau2Messages(conversation.messages), termination: conversation.termination },
        { nlAssertions: conversation.nlVerdicts }
      ),
      conversation.nlProblem
    )
})

/** Load a domain of a τ² checkout for the harness; a missing or malformed file is bad input. */
export const loadTau2DomainView: Tau2DomainLoader = (dir, name) =>
  loadTau2Domain(dir, name).pipe(
    Effect.map((d) => domainView(d) as unknown as Tau2DomainView),
    Effect.mapError((e) => new DatasetError({ path: e.path, problem: e.problem, hint: e.hint }))
  )
