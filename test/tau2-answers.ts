// Test helper: τ²'s own answers on a domain fixture (answers-by-tau2.json, written by τ²'s Python at the fixture's
// COMMIT; see the fixture's README) and the checks every domain's test makes with them.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { expect } from "vitest"
import { callTau2Tool, replayGold, type Tau2Domain } from "../bench/benchmarks/tau2/index.ts"

/** τ²'s answers on a fixture: the fresh and final database hashes, each task's gold replay, further calls. */
export interface Tau2Answers<Schema = { readonly function: { readonly name: string } }> {
  readonly initialHash: string
  readonly tasks: Record<string, { results: Array<{ content: string; error: boolean }>; hash: string }>
  readonly calls: Array<{ name: string; arguments: Record<string, unknown>; content: string; error: boolean }>
  readonly callsHash: string
  readonly openAiSchemas: Array<Schema>
}

/** The answers of the fixture folder `fixture`. */
export const readTau2Answers = <Schema = { readonly function: { readonly name: string } }>(
  fixture: string
): Tau2Answers<Schema> => JSON.parse(readFileSync(join(fixture, "answers-by-tau2.json"), "utf8")) as Tau2Answers<Schema>

/** Every task's gold actions give τ²'s answers, byte for byte, and τ²'s final hash (`writes`: a changed one). */
export const expectGoldReplays = (domain: Tau2Domain, answers: Tau2Answers<unknown>, writes = false): void => {
  for (const task of domain.tasks) {
    const gold = replayGold(domain, task)
    const expected = answers.tasks[task.id]
    expect(
      gold.steps.map((s) => s.message),
      `task ${task.id}`
    ).toEqual(expected?.results)
    expect(gold.hash, `task ${task.id}`).toBe(expected?.hash)
    if (writes) expect(gold.hash, `task ${task.id} writes`).not.toBe(answers.initialHash)
  }
}

/** Every further call on one fresh database is answered as τ² answered it, ending at τ²'s hash. */
export const expectCallAnswers = (domain: Tau2Domain, answers: Tau2Answers<unknown>): void => {
  const db = domain.freshDb()
  const tools = domain.tools(db)
  for (const call of answers.calls)
    expect(callTau2Tool(tools, call.name, call.arguments), `${call.name} ${JSON.stringify(call.arguments)}`).toEqual({
      content: call.content,
      error: call.error
    })
  expect(domain.hashDb(db)).toBe(answers.callsHash)
}
