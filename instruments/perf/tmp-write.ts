import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { writeJsonAtomic } from "../../src/trace/atomic-write.ts"
const root = mkdtempSync(join(tmpdir(), "w-"))
const value = { events: Array.from({ length: 30 }, (_, i) => ({ kind: "tool_call", i, data: { text: "x".repeat(200) } })) }
const N = 300
for (const mode of ["rooted", "plain", "rooted", "plain"]) {
  const cpu = process.threadCpuUsage()
  const t = performance.now()
  for (let i = 0; i < N; i++) {
    const path = join(root, "tasks", "react", "G1", `${i}.json`)
    await Effect.runPromise(writeJsonAtomic(mode === "rooted" ? { root, path } : path, value))
  }
  const u = process.threadCpuUsage(cpu)
  console.log(mode, ((u.user + u.system) / 1000 / N).toFixed(3), "ms main-thread CPU per write", ((performance.now() - t) / N).toFixed(2), "ms wall")
}
