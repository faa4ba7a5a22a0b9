// `npm run bench:mcp`: start-up, call latency and clean-up of a stdio MCP tool source (the code `--tools mcp:` runs),
// each repetition in a fresh Node process as a user's `smurfs run` would be. It prints figures; it asserts nothing.
import { execFile } from "node:child_process"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import { parseArgs, promisify } from "node:util"
import { quantile } from "../perf/stats.ts"
import { table } from "../perf/table.ts"
import type { McpSessionFigures } from "./session.ts"

const SESSION = fileURLToPath(new URL("./session.ts", import.meta.url))

const { values } = parseArgs({
  options: {
    reps: { type: "string", default: "5" },
    calls: { type: "string", default: "1000" },
    tools: { type: "string", default: "20" },
    json: { type: "boolean", default: false }
  }
})
const reps = Number(values.reps)
const calls = Number(values.calls)
const tools = Number(values.tools)
for (const [name, n] of [
  ["--reps", reps],
  ["--calls", calls],
  ["--tools", tools]
] as const)
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(
      `${name} must be a whole number of at least 1 (got ${String(values[name.slice(2) as "reps"])}).\n`
    )
    process.exit(2)
  }

const log = (text: string) => process.stderr.write(`${text}\n`)
const load = () => loadavg()[0]!.toFixed(2)
log(
  `bench:mcp: ${reps} sessions of a ${tools}-tool stdio MCP server (test/fake-servers/mcp.ts), ${calls} sequential calls each; load average ${load()}`
)

const sessions: Array<McpSessionFigures> = []
for (let i = 0; i < reps; i++) {
  const { stdout } = await promisify(execFile)(process.execPath, [SESSION, String(calls), String(tools)], {
    maxBuffer: 64 * 1024 * 1024
  })
  sessions.push(JSON.parse(stdout) as McpSessionFigures)
  log(`  session ${i + 1}/${reps} done`)
}

const median = (xs: ReadonlyArray<number>) => quantile(xs, 0.5)
const rows = sessions.map((s, i) => [
  String(i + 1),
  s.importMs,
  s.connectMs,
  s.startToListedMs,
  s.startToFirstCallMs,
  s.callsTotalMs,
  median(s.callMs),
  quantile(s.callMs, 0.95),
  s.wrongResults,
  s.closeMs,
  s.childrenLeft.length,
  Object.values(s.handlesLeft).reduce((a, b) => a + b, 0)
])
const summary = {
  reps,
  calls,
  tools: sessions[0]?.tools,
  loadAverage: Number(load()),
  median: {
    importMs: median(sessions.map((s) => s.importMs)),
    connectMs: median(sessions.map((s) => s.connectMs)),
    startToListedMs: median(sessions.map((s) => s.startToListedMs)),
    startToFirstCallMs: median(sessions.map((s) => s.startToFirstCallMs)),
    callsTotalMs: median(sessions.map((s) => s.callsTotalMs)),
    callMedianMs: median(sessions.map((s) => median(s.callMs))),
    callP95Ms: median(sessions.map((s) => quantile(s.callMs, 0.95))),
    closeMs: median(sessions.map((s) => s.closeMs))
  },
  wrongResults: sessions.reduce((a, s) => a + s.wrongResults, 0),
  childrenLeft: sessions.flatMap((s) => s.childrenLeft),
  handlesLeft: sessions.map((s) => s.handlesLeft)
}

if (values.json) process.stdout.write(`${JSON.stringify(summary)}\n`)
else {
  const m = summary.median
  process.stdout.write(
    `${table(
      `MCP over stdio: ${summary.tools} tools, ${calls} sequential calls per session (ms)`,
      [
        "session",
        "import",
        "connect+list",
        "start->listed",
        "start->1st call",
        `${calls} calls`,
        "call median",
        "call p95",
        "wrong",
        "close",
        "children left",
        "handles left"
      ],
      [
        ...rows,
        [
          "median*",
          m.importMs,
          m.connectMs,
          m.startToListedMs,
          m.startToFirstCallMs,
          m.callsTotalMs,
          m.callMedianMs,
          m.callP95Ms,
          summary.wrongResults,
          m.closeMs,
          summary.childrenLeft.length,
          rows.reduce((a, r) => a + Number(r[11]), 0)
        ]
      ]
    )}\n` +
      "import: our MCP source and the SDK, loaded on first use; connect+list: spawn the server, initialize, tools/list, schemas to zod.\n" +
      `* wrong, children left and handles left: summed over the sessions. children left: processes of the session alive after close; handles left: active resources (process.getActiveResourcesInfo) over the baseline. Load average at the end: ${load()}.\n`
  )
}
