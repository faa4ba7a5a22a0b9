// One τ² conversation (a task, an agent, a trial) run to its task record: a fresh database, the agent and the simulated
// user, then τ²'s reward and the database against the gold state. The runner's unit of work for this benchmark.
import * as Effect from "effect/Effect"
import type { SmurfsOptions } from "../../../src/agents/smurfs-options.ts"
import { LanguageModel, type LanguageModelShape } from "../../../src/llm/language-model.ts"
import { withModelTask } from "../../../src/llm/model-task.ts"
import { watchServer } from "../../../src/llm/server-watch.ts"
import type { RunEvent } from "../../../src/trace/record.ts"
import { redactValue } from "../../../src/trace/redact.ts"
import { capRecordSize, SIZE_CAPS } from "../../../src/trace/size-caps.ts"
import { RecordPrompts, recording, totalsOf } from "../../../src/trace/trajectory.ts"
import type { TaskJob, TaskResult } from "../../execute-task.ts"
import { slimEvents } from "../../execute-task.ts"
import { RUN_FORMAT_VERSION, type TaskRecord } from "../../run-format.ts"
import { runConversation } from "./conversation.ts"
import { converserOf } from "./conversers.ts"
import { diffTau2Db } from "./diff.ts"
import { judgeNlAssertions, type NlJudge, type NlJudgement } from "./nl-judge.ts"
import type { Tau2DomainView, Tau2TaskView } from "./port.ts"
import { isSuccess, type Tau2RecordData, type TranscriptMessage } from "./transcript.ts"
import { scenarioText, USER_ROLE, userSystemPrompt } from "./user-simulator.ts"

export interface ConversationTaskOptions {
  readonly domain: Tau2DomainView
  /** τ²'s user simulation guidelines, read from the checkout. */
  readonly guidelines: string
  readonly agentInstruction: string
  readonly userModel: LanguageModelShape
  readonly userModelSpec: string
  /** The model spec under test, for the record. */
  readonly modelSpec: string
  readonly smurfs?: SmurfsOptions | undefined
  readonly fullTrace: boolean
  readonly maxRecordBytes?: number | undefined
  /** The judge of the tasks' natural-language assertions (`--judge`); without one they are not evaluated. */
  readonly nlJudge?: NlJudge | undefined
  /** τ²'s step and error limits, when not theirs (tests). */
  readonly limits?: { readonly maxSteps?: number; readonly maxErrors?: number } | undefined
}

/** The last text the agent said to the user: the conversation's "final answer" for the record's readers. */
const lastAgentText = (messages: ReadonlyArray<TranscriptMessage>): string => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.role === "assistant" && m.content !== undefined && (m.toolCalls ?? []).length === 0) return m.content
  }
  return ""
}

/** A model call of the user simulator (its events stay in the record, its costs are not the agent's). */
const isUserCall = (e: RunEvent): boolean => e.type.endsWith(".model_call") && e.data["role"] === USER_ROLE

/** A task of the domain by id; the runner only runs ids the benchmark listed. */
const taskById = (domain: Tau2DomainView, id: string): Tau2TaskView | undefined => domain.tasks.find((t) => t.id === id)

/** Run the job's conversation and build its record; a failed server is an `error` record (a resume redoes it), never a failure. */
export const runConversationTask = (
  job: TaskJob,
  options: ConversationTaskOptions
): Effect.Effect<TaskResult, never, LanguageModel> =>
  Effect.gen(function* () {
    const task = taskById(options.domain, job.query.id)
    const entry = converserOf(job.method)
    if (task === undefined || entry === undefined)
      return {
        kind: "crashed",
        error: `no ${task === undefined ? `task ${job.query.id}` : `agent ${job.method}`}`
      } as const
    const base = yield* LanguageModel
    const startedAt = new Date().toISOString()
    const started = Date.now()
    // a server that fails makes the conversation no result: the agent's and the user's are watched apart
    const agentWatch = watchServer(base)
    const userWatch = watchServer(options.userModel)
    const db = options.domain.initialDb(task)
    const tools = options.domain.tools(db)
    const id = `${job.query.group}/${job.query.id}#${job.run ?? 0}`
    const inner: Array<RunEvent> = []
    const agent = entry.build({
      conversationId: id,
      policy: options.domain.policy,
      tools,
      agentInstruction: options.agentInstruction,
      smurfs: options.smurfs,
      onEvent: (e) => void inner.push(e)
    })
    const ran = yield* recording(
      id,
      runConversation({
        db,
        tools,
        agent,
        userModel: userWatch.model,
        userSystem: userSystemPrompt(options.guidelines, task.user_scenario),
        limits: options.limits
      })
    ).pipe(
      Effect.provideService(LanguageModel, agentWatch.model),
      Effect.provideService(RecordPrompts, options.fullTrace),
      // one task for the server: the agent's and the user's requests keep their slot or sequence and their model lane
      // (--lanes, --slot-affinity), as a ToolBench task's do
      withModelTask(`${job.method} ${id}`)
    )
    const conversation = ran.value
    // chat's pipeline keeps its own events: they join the conversation's, in time order
    const events = [...ran.events, ...inner].sort((a, b) => a.time.localeCompare(b.time))
    // whose server failed is said: the user's model is a second server (`--user-model`)
    const userFailure = userWatch.failure()
    const failure =
      agentWatch.failure() ??
      (userFailure === undefined
        ? undefined
        : {
            message: `the user simulator's model (${options.userModelSpec}) failed: ${userFailure.message}`,
            _tag: userFailure._tag
          })
    const ended = conversation.termination === "user_stop" || conversation.termination === "agent_stop"
    // the assertions are judged only where τ² would evaluate them: a conversation that ended, no server failed
    const assertions = options.domain.nlAssertions?.(task) ?? []
    const judged: NlJudgement | undefined =
      options.nlJudge === undefined || assertions.length === 0 || !ended || failure !== undefined
        ? undefined
        : yield* judgeNlAssertions(options.nlJudge, conversation.messages, assertions)
    const reward = options.domain.score(task, {
      messages: conversation.messages,
      termination: conversation.termination,
      db,
      ...(judged?.kind === "judged" ? { nlVerdicts: judged.verdicts } : {}),
      ...(judged?.kind === "failed" ? { nlProblem: judged.problem } : {})
    })
    const gold = options.domain.goldDb(task)
    const data: Tau2RecordData = {
      name: "tau2",
      domain: options.domain.name,
      trial: job.run ?? 0,
      userModel: options.userModelSpec,
      messages: [...conversation.messages],
      termination: conversation.termination,
      ...(conversation.terminationDetail === undefined ? {} : { terminationDetail: conversation.terminationDetail }),
      steps: conversation.steps,
      toolErrors: conversation.toolErrors,
      userTotals: conversation.userTotals,
      dbHash: options.domain.dbHash(db),
      ...(gold === undefined
        ? {}
        : {
            goldHash: options.domain.dbHash(gold),
            // (undefined, where one side has nothing, is written as null)
            goldDiff: diffTau2Db(gold, db).map((c) => ({
              path: [...c.path],
              gold: c.gold ?? null,
              actual: c.actual ?? null
            }))
          }),
      reward
    }
    const record: TaskRecord = {
      formatVersion: RUN_FORMAT_VERSION,
      taskId: job.query.id,
      group: job.query.group,
      method: job.method,
      model: options.modelSpec,
      query: scenarioText(task.user_scenario),
      availableTools: tools.map((t) => t.name),
      finalAnswer: lastAgentText(conversation.messages),
      finishType: failure ? "error" : ended ? "give_answer" : "give_up",
      ...(failure
        ? { error: failure.message, errorTag: failure._tag }
        : ended
          ? isSuccess(reward.reward)
            ? {}
            : { error: `reward ${reward.reward}${reward.notes?.length ? `: ${reward.notes.join("; ")}` : ""}` }
          : { error: conversation.terminationDetail ?? conversation.termination }),
      // the agent's costs; the user simulator's are counted apart (userTotals), as τ² keeps agent and user costs apart
      totals: totalsOf(
        events.filter((e) => !isUserCall(e)),
        Date.now() - started
      ),
      events: slimEvents(events, options.fullTrace),
      startedAt,
      finishedAt: new Date().toISOString(),
      ...(job.run === undefined ? {} : { run: job.run }),
      ...(job.seed === undefined ? {} : { seed: job.seed }),
      benchmark: data
    }
    return {
      kind: "record",
      record: capRecordSize(redactValue(record), options.maxRecordBytes ?? SIZE_CAPS.recordBytes)
    } as const
  })
