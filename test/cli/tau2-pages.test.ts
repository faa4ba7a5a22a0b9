// The report's transcript pages of a τ² run: each conversation's page shows its messages, tool calls and the database
// against the gold state (the run made with the harness' test domain and scripted models).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { tau2Benchmark } from "../../bench/benchmarks/tau2/benchmark.ts"
import { loadTestDomain } from "../../bench/benchmarks/tau2/test-domain.ts"
import { silentProgress } from "../../bench/progress.ts"
import { benchSettings } from "../../bench/settings.ts"
import { buildTaskPages } from "../../src/cli/task-pages.ts"

describe("compare --html on a τ² run", () => {
  it("writes one page per task whose columns show each agent's conversation and its database diff", async () => {
    const work = mkdtempSync(join(tmpdir(), "tau2-pages-"))
    const tau2 = join(work, "checkout")
    mkdirSync(tau2)
    const script = (name: string, value: unknown) => {
      writeFileSync(join(work, `${name}.json`), JSON.stringify(value))
      return `scripted:${join(work, `${name}.json`)}`
    }
    const out = join(work, "run")
    const settings = benchSettings({
      out,
      tau2,
      model: script("agent", { "tau2.agent": ["I cannot do that."] }),
      userModel: script("user", { "tau2.user": ["Cancel my order #W1.", "###STOP###"] }),
      concurrency: 1
    })
    await Effect.runPromise(tau2Benchmark(loadTestDomain).run(settings, silentProgress))
    const pages = buildTaskPages(join(work, "report.html"), [out], undefined)
    expect(pages.pages).toHaveLength(1)
    const html = pages.pages[0]!.html
    expect(html).toContain("Cancel my order #W1.")
    expect(html).toContain("I cannot do that.")
    expect(html).toContain("Database against the gold state")
    expect(html).toMatch(/<td>orders\/#W1<\/td><td>status<\/td><td class="gold">&quot;cancelled&quot;/)
    expect(pages.tasks[0]).toMatchObject({ method: "tau2-agent", labels: [{ judge: "tau2", label: "Unsolved" }] })
  })
})
