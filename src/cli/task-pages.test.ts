import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { writeFakeRun } from "../../bench/eval/test-fixtures.ts"
import { pagesFolder, writeTaskPages } from "./task-pages.ts"

describe("the report's trajectory pages", () => {
  it("writes one page per task with every method on it, and links that reach it whatever the id holds", async () => {
    const run = await writeFakeRun([
      { taskId: "a/b", method: "smurfs" },
      { taskId: "a/b", method: "react" },
      { taskId: "x y%", method: "smurfs", group: "G2 <cat>" }
    ])
    const report = join(mkdtempSync(join(tmpdir(), "smurfs-pages-")), "my report.html")
    const { tasks, problem } = await writeTaskPages(report, [run], undefined)
    expect(problem).toBeUndefined()
    expect(pagesFolder(report)).toBe(join(dirname(report), "my report-tasks"))
    expect(tasks).toHaveLength(3)
    for (const t of tasks) {
      // the link, as a browser resolves it against the report's folder
      const file = join(dirname(report), ...t.href!.split("/").map(decodeURIComponent))
      expect(existsSync(file), t.href).toBe(true)
      const page = readFileSync(file, "utf8")
      expect(page).toContain(`${t.method} `)
      expect(page).toContain('href="../../../my%20report.html"')
    }
    const shared = tasks.filter((t) => t.taskId === "a/b")
    expect(new Set(shared.map((t) => t.href)).size).toBe(1)
    const page = readFileSync(join(dirname(report), ...shared[0]!.href!.split("/").map(decodeURIComponent)), "utf8")
    expect([...page.matchAll(/<h2>([^<]+)<\/h2>/g)].map((m) => m[1])).toEqual([
      "react G1_instruction/a/b",
      "smurfs G1_instruction/a/b"
    ])
    expect(
      readFileSync(
        join(
          dirname(report),
          ...tasks
            .find((t) => t.group === "G2 <cat>")!
            .href!.split("/")
            .map(decodeURIComponent)
        ),
        "utf8"
      )
    ).toContain("G2 &lt;cat&gt;")
  })
})
