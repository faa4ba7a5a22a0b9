// The chaos soak (issue 36): `smurfs bench` of 30 tasks x 3 methods at concurrency 8 against an OpenAI-compatible
// server that faults 30% of its answers (503, 500, a reset or cut connection, invalid JSON), seeded; then --resume
// until every task has a result. Prints what the server injected beside what the records show, and fails when a task
// ends without a result or an injected fault has no trace in any record.
//   SMURFS_DATA=<StableToolBench data> node test/faults/chaos-soak.ts [--tasks 30] [--rate 0.3] [--seed 7]
//     [--concurrency 8] [--rounds 40] [--kinds 503,500,reset,cut,invalid-json]   (without the full data: the fixture's 16 queries)
// A transient server fault (5xx, a cut or reset reply) is sent again by the task (twice at most), and a task it still
// ends is run again within the run (twice at most); a task redone by --resume keeps its failed attempts in its new
// record (`earlierAttempts`), so every fault stays in some record. A benchmark, not a test of the suites: it takes
// minutes.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { run as bench } from "../../src/cli/commands/bench.ts"
import { FULL_DATA, lacks, MINI_DATA } from "../data.ts"
import { defaultReply } from "../fake-servers/core.ts"
import { type Fault, startFakeOpenAI } from "../fake-servers/openai.ts"

const { values } = parseArgs({
  options: {
    tasks: { type: "string" },
    rate: { type: "string" },
    seed: { type: "string" },
    concurrency: { type: "string" },
    rounds: { type: "string" },
    kinds: { type: "string" }
  }
})
const TASKS = Number(values.tasks ?? 30)
const RATE = Number(values.rate ?? 0.3)
const CONCURRENCY = Number(values.concurrency ?? 8)
let seed = Number(values.seed ?? 7)
/** mulberry32: the same faults in the same order for a seed. */
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const FAULTS: ReadonlyArray<Fault> = [
  { fault: "status", status: 503, retryAfter: "0" },
  { fault: "status", status: 500 },
  { fault: "reset" },
  { fault: "cut" },
  { fault: "invalid-json" }
]
const injected: Record<string, number> = {}
const nameOf = (f: Fault) => (f.fault === "status" ? `HTTP ${f.status}` : f.fault)
// --kinds 503,reset: only those faults (names as printed, "HTTP " left out)
const KINDS = values.kinds?.split(",").map((k) => k.trim())
const faults = KINDS ? FAULTS.filter((f) => KINDS.includes(nameOf(f).replace(/^HTTP /, ""))) : FAULTS
const server = await startFakeOpenAI({
  chat: (body: { response_format?: unknown; tools?: unknown }) => {
    if (random() < RATE) {
      const fault = faults[Math.floor(random() * faults.length)]!
      injected[nameOf(fault)] = (injected[nameOf(fault)] ?? 0) + 1
      return fault
    }
    // an answer that ends the task: Finish when tools are offered, else a sample of the requested JSON shape
    if ((body.tools as Array<{ function?: { name?: string } }> | undefined)?.some((t) => t.function?.name === "Finish"))
      return { toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }] }
    const format = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined
    return defaultReply(
      format?.type === "json_schema" ? format.json_schema?.schema : format?.type === "json_object" ? "json" : undefined,
      body.tools as Parameters<typeof defaultReply>[1]
    )
  }
})

const data = lacks(FULL_DATA) ? MINI_DATA.path : FULL_DATA.path
const groups = lacks(FULL_DATA)
  ? ["G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction"]
  : ["G1_instruction"]
const out = mkdtempSync(join(tmpdir(), "smurfs-chaos-soak-"))
const args = [
  ...["--data", data, ...groups.flatMap((g) => ["--group", g]), "--limit", String(lacks(FULL_DATA) ? 6 : TASKS)],
  ...["--method", "react", "--method", "dfsdt", "--method", "smurfs"],
  ...["--model", "openai:qwen2.5:7b", "--concurrency", String(CONCURRENCY), "--stop-after", "100000"],
  ...["--timeout", "20000", "--out", out]
]
process.env["OPENAI_BASE_URL"] = server.baseURL
process.env["OPENAI_API_KEY"] ??= "soak"

const started = Date.now()
const codes: Array<number> = []
const quiet = { error: console.error, log: console.log }
console.error = () => {}
console.log = () => {}
try {
  codes.push(await bench(args))
  const rounds = Number(values.rounds ?? 40)
  for (let round = 0; round < rounds && codes.at(-1) !== 0; round++) codes.push(await bench([...args, "--resume"]))
} finally {
  console.error = quiet.error
  console.log = quiet.log
  await server.close()
}

interface Attempt {
  redoneBy: string
  failedCalls: number
  serverRetries: number
  guardrails: number
}
interface Rec {
  finishType: string
  errorTag?: string
  totals: { serverRetries?: number; guardrails: Record<string, number> }
  events: Array<{ type: string; data: Record<string, unknown> }>
  earlierAttempts?: Array<Attempt>
}
const records: Array<Rec> = []
const walk = (dir: string): void => {
  for (const e of readdirSync(dir, { withFileTypes: true }))
    if (e.isDirectory()) walk(join(dir, e.name))
    else if (e.name.endsWith(".json")) records.push(JSON.parse(readFileSync(join(dir, e.name), "utf8")) as Rec)
}
walk(join(out, "tasks"))
const finish: Record<string, number> = {}
for (const r of records) finish[r.finishType] = (finish[r.finishType] ?? 0) + 1
const retried = records.reduce((n, r) => n + (r.totals.serverRetries ?? 0), 0)
const failedCalls = records.reduce(
  (n, r) =>
    n + r.events.filter((e) => e.type.endsWith("model_call") && e.data["ok"] === false && !e.data["retried"]).length,
  0
)
const guardrails = records.reduce((n, r) => n + Object.values(r.totals.guardrails).reduce((a, b) => a + b, 0), 0)
// the attempts a task lost (run again within the run, or by --resume), kept in the record that replaced them
const earlier = records.flatMap((r) => r.earlierAttempts ?? [])
const earlierFaults = earlier.reduce((n, a) => n + a.failedCalls + a.serverRetries + a.guardrails, 0)
const redone = (by: string) => earlier.filter((a) => a.redoneBy === by).length
const totalInjected = Object.values(injected).reduce((a, b) => a + b, 0)
const tasks = records.length
console.log(
  `chaos soak: ${tasks} task records (${groups.length} group(s), 3 methods), concurrency ${CONCURRENCY}, fault rate ${RATE}`
)
console.log(
  `  bench exits: ${codes.join(", ")} (first run, then --resume rounds), ${((Date.now() - started) / 1000).toFixed(1)} s`
)
console.log(`  finish types: ${JSON.stringify(finish)}`)
console.log(`  faults injected: ${totalInjected} ${JSON.stringify(injected)}`)
console.log(
  `  in the records: ${retried} retried answers (totals.serverRetries), ${failedCalls} failed model calls, ${guardrails} guardrail interventions`
)
console.log(
  `  earlier attempts kept: ${earlier.length} (${redone("retry")} run again within the run, ${redone("resume")} redone by --resume), holding ${earlierFaults} faults (failed calls, retried answers, guardrails); tasks with retries: ${records.filter((r) => (r.earlierAttempts ?? []).length > 0).length}`
)
rmSync(out, { recursive: true, force: true })
const unended = records.filter((r) => r.finishType === "error").length
// each injected fault is one failed answer of the server: a retried answer or a failed call, in a record or in an
// earlier attempt kept in one
const serverFaults = retried + failedCalls + earlier.reduce((n, a) => n + a.failedCalls + a.serverRetries, 0)
console.log(
  `  server faults in the records: ${serverFaults} of ${totalInjected} injected (with guardrails: ${retried + failedCalls + guardrails + earlierFaults})`
)
console.log(
  `  every task ended with a result: ${unended === 0}; every injected fault in a record: ${serverFaults >= totalInjected}`
)
process.exitCode = unended === 0 && serverFaults >= totalInjected ? 0 : 1
