// One MCP session as `--tools mcp:` opens it: start a stdio server, list its tools, call one many times, close,
// then look for what the session left behind (child processes, active handles). Figures only, no assertions.
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { findTool } from "../../src/tools/library.ts"
import { loadTools } from "../../src/tools/load.ts"
import { type ChildProcessInfo, childProcesses } from "../../test/processes.ts"

/** The scripted MCP server of the tests, started with node directly (no npx): a server as a user would write it. */
export const FIXTURE_SERVER = fileURLToPath(new URL("../../test/fake-servers/mcp.ts", import.meta.url))

export interface McpSessionOptions {
  /** How many tools the server lists (default 20). */
  readonly tools?: number
  /** Sequential calls after the first one (default 1,000). */
  readonly calls?: number
  /** How long to wait after closing for the server to exit and the handles to go (default 3,000 ms). */
  readonly settleMs?: number
}

export interface McpSessionFigures {
  /** Loading our MCP source module and the SDK (what `--tools mcp:` imports on first use). */
  readonly importMs: number
  /** From the call that opens the source to its tools being listed and converted. */
  readonly connectMs: number
  /** importMs + connectMs: from start to tools listed. */
  readonly startToListedMs: number
  /** From start to the first call's successful result. */
  readonly startToFirstCallMs: number
  readonly tools: number
  readonly calls: number
  /** Calls whose result was not the expected sum. */
  readonly wrongResults: number
  readonly callsTotalMs: number
  readonly callMs: ReadonlyArray<number>
  readonly closeMs: number
  /** Children of this process still alive after closing and settling. */
  readonly childrenLeft: ReadonlyArray<ChildProcessInfo>
  /** Active resources (process.getActiveResourcesInfo) after closing that were not there before opening, by type. */
  readonly handlesLeft: Readonly<Record<string, number>>
  readonly handlesBefore: number
  readonly handlesAfter: number
}

const countByType = (resources: ReadonlyArray<string>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const r of resources) counts.set(r, (counts.get(r) ?? 0) + 1)
  return counts
}

/** Resource types that outnumber the baseline, and by how much. */
const extraResources = (before: ReadonlyArray<string>, after: ReadonlyArray<string>): Record<string, number> => {
  const base = countByType(before)
  const extra: Record<string, number> = {}
  for (const [type, n] of countByType(after)) if (n > (base.get(type) ?? 0)) extra[type] = n - (base.get(type) ?? 0)
  return extra
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const runMcpSession = async (options: McpSessionOptions = {}): Promise<McpSessionFigures> => {
  const toolCount = options.tools ?? 20
  const calls = options.calls ?? 1000
  const settleMs = options.settleMs ?? 3000
  const started = performance.now()
  await import("../../src/tools/sources/mcp.ts")
  const imported = performance.now()
  // The baseline is taken after the import: loading the SDK opens this process's stdio pipes once (Node
  // creates them lazily), which is no handle a session leaves behind.
  const childrenBefore = new Set(childProcesses().map((c) => c.pid))
  const handlesBefore = process.getActiveResourcesInfo()
  const connecting = performance.now()
  const scope = await Effect.runPromise(Scope.make())
  const library = await Effect.runPromise(
    Scope.provide(loadTools([`mcp:${process.execPath} ${FIXTURE_SERVER} ${toolCount}`]), scope)
  )
  const listed = performance.now()
  const add = findTool(library, "add")
  if (!add)
    throw new Error(`the fixture server lists no "add" tool (it listed ${library.tools.map((t) => t.name).join(", ")})`)
  const first = await Effect.runPromise(add.call({ a: 20, b: 22 }))
  if (!first.ok || first.content !== "42") throw new Error(`the first call failed: ${first.error ?? first.content}`)
  const firstDone = performance.now()

  const callMs: Array<number> = []
  let wrongResults = 0
  for (let i = 0; i < calls; i++) {
    const t = performance.now()
    const result = await Effect.runPromise(add.call({ a: i, b: 1 }))
    callMs.push(performance.now() - t)
    if (!result.ok || result.content !== String(i + 1)) wrongResults++
  }
  const callsDone = performance.now()

  await Effect.runPromise(Scope.close(scope, Exit.void))
  const closed = performance.now()
  // the server exits after its stdin closes and the handles of the pipes go on the next turns of the loop
  const leftChildren = () => childProcesses().filter((c) => !childrenBefore.has(c.pid))
  const until = Date.now() + settleMs
  while (
    Date.now() < until &&
    (leftChildren().length > 0 ||
      Object.keys(extraResources(handlesBefore, process.getActiveResourcesInfo())).length > 0)
  )
    await sleep(20)
  const handlesAfter = process.getActiveResourcesInfo()

  return {
    importMs: imported - started,
    connectMs: listed - connecting,
    startToListedMs: imported - started + (listed - connecting),
    startToFirstCallMs: imported - started + (firstDone - connecting),
    tools: library.tools.length,
    calls,
    wrongResults,
    callsTotalMs: callsDone - firstDone,
    callMs,
    closeMs: closed - callsDone,
    childrenLeft: leftChildren(),
    handlesLeft: extraResources(handlesBefore, handlesAfter),
    handlesBefore: handlesBefore.length,
    handlesAfter: handlesAfter.length
  }
}

// `node instruments/mcp/session.ts [calls] [tools]`: one session in a fresh process, its figures as one JSON line.
if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await runMcpSession({ calls: Number(process.argv[2] ?? 1000), tools: Number(process.argv[3] ?? 20) })
  process.stdout.write(`${JSON.stringify(figures)}\n`)
}
