// Figures computed from perf batches: prompt sizes, prompt size by steps, and prompt prefix reuse per role.

import { commonPrefixLength } from "../../bench/sim/prefix-cache.ts"
import type { TokenCounter } from "../../bench/sim/tokens.ts"
import { dataOf, isKind } from "../../src/trace/events.ts"
import type { Trajectory } from "../../src/trace/trajectory.ts"
import type { BatchResult } from "./harness.ts"
import { max, mean, quantile, sum } from "./stats.ts"

/** Prompt sizes of a batch: per model call and per task, and the share of tasks that ended with an answer. */
export const contextFigures = (batch: BatchResult) => {
  const perCall = batch.samples.flatMap((s) => s.promptTokens)
  const perTask = batch.samples.map((s) => sum(s.promptTokens))
  return {
    tasks: batch.samples.length,
    answered: batch.samples.filter((s) => s.answered).length / Math.max(1, batch.samples.length),
    callsPerTask: mean(batch.samples.map((s) => s.promptTokens.length)),
    meanPromptTokens: mean(perCall),
    maxPromptTokens: perCall.length ? max(perCall) : Number.NaN,
    promptTokensPerTask: mean(perTask),
    p95PromptTokensPerTask: quantile(perTask, 0.95)
  }
}

export const STEP_BUCKETS = [
  { label: "0", test: (n: number) => n === 0 },
  { label: "1", test: (n: number) => n === 1 },
  { label: "2", test: (n: number) => n === 2 },
  { label: "3", test: (n: number) => n === 3 },
  { label: "4-5", test: (n: number) => n >= 4 && n <= 5 },
  { label: "6-9", test: (n: number) => n >= 6 && n <= 9 },
  { label: "10+", test: (n: number) => n >= 10 }
] as const

/** Mean of each task's largest prompt, by the task's number of steps (tool calls). */
export const byStepBucket = (batches: ReadonlyArray<BatchResult>) =>
  STEP_BUCKETS.map((bucket) => {
    const tasks = batches.flatMap((b) => b.samples).filter((s) => bucket.test(s.toolCalls) && s.promptTokens.length > 0)
    return {
      steps: bucket.label,
      tasks: tasks.length,
      meanMaxPromptTokens: mean(tasks.map((s) => max(s.promptTokens)))
    }
  })

/** A prompt as a server sees its text: each message's role and content, in order. */
const promptText = (
  messages: ReadonlyArray<{ role: string; content: string }>
): { text: string; starts: Array<number> } => {
  let text = ""
  const starts: Array<number> = []
  for (const m of messages) {
    starts.push(text.length)
    text += `<${m.role}>\n${m.content}\n`
  }
  return { text, starts }
}

const commonPrefix = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

/** Where a prompt first differs from the previous one: the message, and the start of the line there (its label). */
const divergence = (
  prompt: { text: string; starts: Array<number> },
  messages: ReadonlyArray<{ role: string }>,
  at: number
): string => {
  let index = 0
  while (index + 1 < prompt.starts.length && prompt.starts[index + 1]! <= at) index++
  const lineStart = prompt.text.lastIndexOf("\n", at - 1) + 1
  const lineEnd = prompt.text.indexOf("\n", at)
  const lineText = prompt.text.slice(lineStart, lineEnd < 0 ? undefined : lineEnd)
  const label = /^<\w+>$/.test(lineText)
    ? "(message start)"
    : (/^([A-Z][\w ()'-]{0,40}:)/.exec(lineText)?.[1] ?? lineText.slice(0, 24))
  return `${messages[index]?.role ?? "?"} message ${index + 1}, line "${label}"`
}

/** How much of a role's prompts repeated the start of its previous prompt. */
interface RoleReuse {
  prompts: number
  compared: number
  promptTokens: number
  reusedTokens: number
  readonly shares: Array<number>
  readonly where: Map<string, number>
  /** The same against the role's previous prompt anywhere in the task (another subtask too). */
  taskCompared: number
  taskPromptTokens: number
  taskReusedTokens: number
}

/** Reuse figures of a role, all zero. */
const emptyReuse = (): RoleReuse => ({
  prompts: 0,
  compared: 0,
  promptTokens: 0,
  reusedTokens: 0,
  shares: [],
  where: new Map(),
  taskCompared: 0,
  taskPromptTokens: 0,
  taskReusedTokens: 0
})

/** Accumulates, per role, how much of each prompt repeats the start of the previous prompt of that role (within a task and subtask). */
export const makePrefixReuse = (tokens: TokenCounter) => {
  const perRole = new Map<string, RoleReuse>()
  /** The figures of `name`, started at zero on first use. */
  const reuseOf = (name: string): RoleReuse => {
    let reuse = perRole.get(name)
    if (reuse === undefined) {
      reuse = emptyReuse()
      perRole.set(name, reuse)
    }
    return reuse
  }
  const add = (trajectory: Trajectory, method: string) => {
    const previous = new Map<string, { text: string }>()
    const previousInTask = new Map<string, string>()
    // What a server with one cache slot sees: each prompt against the task's previous prompt, whatever its role.
    let lastCall: string | undefined
    const anyRole = reuseOf(`${method} (any role, vs previous call)`)
    let subtask = -1
    for (const event of trajectory.events) {
      if (isKind(event, "subtask_started")) subtask = Number(dataOf(event, "subtask_started").index ?? subtask + 1)
      if (!isKind(event, "model_call")) continue
      const call = dataOf(event, "model_call")
      if (call.ok !== true) continue
      const messages = call.messages
      if (!messages) continue
      const role = String(call.role)
      const scoped = role === "planner" || role === "answerer.final" ? -1 : subtask
      const key = `${role}\u0000${scoped}`
      const prompt = promptText(messages)
      const entry = reuseOf(`${method} ${role}`)
      entry.prompts++
      const before = previous.get(key)
      previous.set(key, { text: prompt.text })
      const reusedOf = (earlier: string) => {
        const shared = commonPrefix(earlier, prompt.text)
        return {
          shared,
          tokens: shared === prompt.text.length ? tokens.text(prompt.text) : tokens.text(prompt.text.slice(0, shared))
        }
      }
      const earlierInTask = previousInTask.get(role)
      previousInTask.set(role, prompt.text)
      const total = tokens.text(prompt.text)
      anyRole.prompts++
      if (lastCall !== undefined) {
        const { tokens: reusedAny } = reusedOf(lastCall)
        anyRole.compared++
        anyRole.promptTokens += total
        anyRole.reusedTokens += reusedAny
        anyRole.shares.push(total === 0 ? 0 : reusedAny / total)
      }
      lastCall = prompt.text
      if (earlierInTask !== undefined) {
        entry.taskCompared++
        entry.taskPromptTokens += total
        entry.taskReusedTokens +=
          before && before.text === earlierInTask ? reusedOf(before.text).tokens : reusedOf(earlierInTask).tokens
      }
      if (!before) continue
      const { shared, tokens: reused } = reusedOf(before.text)
      entry.compared++
      entry.promptTokens += total
      entry.reusedTokens += reused
      entry.shares.push(total === 0 ? 0 : reused / total)
      if (shared < prompt.text.length) {
        const where = divergence(prompt, messages, shared)
        entry.where.set(where, (entry.where.get(where) ?? 0) + 1)
      }
    }
  }
  /** The Executor agent as a whole: its thought, choice and argument calls pooled, token-weighted. */
  const pooledExecutors = (): Array<[string, RoleReuse]> => {
    const pooled = new Map<string, RoleReuse>()
    for (const [name, e] of perRole) {
      const [method, role] = [name.slice(0, name.indexOf(" ")), name.slice(name.indexOf(" ") + 1)]
      if (!role.startsWith("executor.")) continue
      const key = `${method} executor (all calls)`
      const p: RoleReuse = pooled.get(key) ?? emptyReuse()
      p.prompts += e.prompts
      p.compared += e.compared
      p.promptTokens += e.promptTokens
      p.reusedTokens += e.reusedTokens
      p.shares.push(...e.shares)
      p.taskCompared += e.taskCompared
      p.taskPromptTokens += e.taskPromptTokens
      p.taskReusedTokens += e.taskReusedTokens
      pooled.set(key, p)
    }
    return [...pooled.entries()]
  }
  const figures = () =>
    [...perRole.entries(), ...pooledExecutors()]
      .map(([name, e]) => {
        const space = name.indexOf(" ")
        const method = name.slice(0, space)
        const role = name.slice(space + 1)
        const top = [...e.where.entries()].sort((a, b) => b[1] - a[1])[0]
        return {
          method,
          role,
          prompts: e.prompts,
          compared: e.compared,
          /** Reused tokens over prompt tokens of the compared prompts. */
          reuseShare: e.compared === 0 ? Number.NaN : e.reusedTokens / e.promptTokens,
          medianShare: quantile(e.shares, 0.5),
          /** Reuse against the role's previous prompt anywhere in the task (what a server's prefix cache sees across subtasks). */
          taskReuseShare: e.taskCompared === 0 ? Number.NaN : e.taskReusedTokens / e.taskPromptTokens,
          /** Where consecutive prompts most often start to differ. */
          firstChange: top ? `${top[0]} (${Math.round((100 * top[1]) / e.compared)}%)` : "-"
        }
      })
      .sort((a, b) => a.method.localeCompare(b.method) || a.role.localeCompare(b.role))
  return { add, figures }
}

/**
 * Per role, the share of a request's tokens equal to the start of the request before it in the same subtask,
 * whatever that request's role (the planner and the final answer are outside any subtask; a chain's whole task
 * is one scope): what a server's prefix cache reuses when one subtask's requests follow each other.
 */
export const makeSubtaskReuse = (tokens: TokenCounter) => {
  const perRole = new Map<string, { prompts: number; compared: number; promptTokens: number; reusedTokens: number }>()
  const add = (trajectory: Trajectory, label: string) => {
    const previous = new Map<number, ReadonlyArray<number>>()
    let subtask = -1
    for (const event of trajectory.events) {
      if (isKind(event, "subtask_started")) subtask = Number(dataOf(event, "subtask_started").index ?? subtask + 1)
      if (isKind(event, "subtask_answered")) subtask = -1
      if (!isKind(event, "model_call")) continue
      const call = dataOf(event, "model_call")
      if (call.ok !== true || !call.messages) continue
      const role = String(call.role)
      const scope = role === "planner" || role === "answerer.final" ? -1 : subtask
      const prompt = tokens.encodePrompt({ messages: call.messages })
      const key = `${label}\u0000${role}`
      const entry = perRole.get(key) ?? { prompts: 0, compared: 0, promptTokens: 0, reusedTokens: 0 }
      perRole.set(key, entry)
      entry.prompts++
      const before = previous.get(scope)
      previous.set(scope, prompt)
      if (!before) continue
      entry.compared++
      entry.promptTokens += prompt.length
      entry.reusedTokens += commonPrefixLength(before, prompt)
    }
  }
  const figures = () =>
    [...perRole.entries()].map(([key, e]) => {
      const [label, role] = key.split("\u0000") as [string, string]
      return {
        label,
        role,
        prompts: e.prompts,
        compared: e.compared,
        reuseShare: e.compared === 0 ? Number.NaN : e.reusedTokens / e.promptTokens
      }
    })
  return { add, figures }
}
