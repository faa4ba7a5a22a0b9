// A 20 MB model reply: the task finishes, its record stays small (every string capped with its original
// length noted), and what goes back to the model is cut. RSS is printed, never asserted.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { capStrings, capText, SIZE_CAPS } from "../../src/trace/size-caps.ts"
import { startFakeOpenAI } from "../fake-servers/openai.ts"
import { MINI_DATA } from "../data.ts"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const data = MINI_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-size-caps-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const HUGE = `${"The answer is long. ".repeat(1_000_000)}THE-END` // ~20 MB

describe("size caps", () => {
  it("cut a string to the cap and note the original length; short strings stay whole", () => {
    expect(capText("short", 10)).toBe("short")
    const cut = capText("x".repeat(25), 10)
    expect(cut.startsWith("x".repeat(10))).toBe(true)
    expect(cut).toContain("25 characters in all")
    const value = capStrings({ a: ["y".repeat(100), 3, { b: "ok" }] }, 20)
    expect(value.a[0]).toContain("100 characters in all")
    expect(value.a[1]).toBe(3)
    expect(value.a[2]).toEqual({ b: "ok" })
  })

  it("a 20 MB reply: the bench task finishes and its record stays small", async () => {
    // the first reply is 20 MB of text (no tool call); then Finish
    const server = await startFakeOpenAI({
      models: ["test-model"],
      chat: (_body: unknown, index: number) =>
        index === 0
          ? { content: HUGE }
          : { content: "", toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }] }
    })
    try {
      const out = join(scratch, "run")
      const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
        execFile(
          "/usr/bin/time",
          ["-f", "max RSS %M KB", process.execPath, "bin/smurfs.js", "bench", "--data", data, "--group", "G1_instruction", "--method", "react", "--ids", "1073", "--model", "openai:test-model", "--out", out],
          { cwd: repo, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.baseURL, SMURFS_MODEL: "" } },
          (error, _stdout, stderr) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stderr })
        )
      )
      console.log(`size caps: ${r.stderr.split("\n").find((l) => l.startsWith("max RSS")) ?? "max RSS not reported"} (bench of one react task with a 20 MB reply)`)
      expect(r.code, r.stderr).toBe(0)
      const files = readdirSync(join(out, "tasks"), { recursive: true }).map(String).filter((f) => f.endsWith(".json"))
      expect(files.length).toBe(1)
      const file = join(out, "tasks", files[0]!)
      const bytes = statSync(file).size
      console.log(`size caps: task record ${bytes} bytes`)
      expect(bytes).toBeLessThan(1_000_000)
      const record = readFileSync(file, "utf8")
      expect(record).toContain(`${HUGE.length.toLocaleString("en-US")} characters in all`)
      expect(record).not.toContain("THE-END")
      // the reply went back to the model cut, not whole
      const requests = server.chatRequests()
      expect(requests.length).toBeGreaterThan(1)
      const later = JSON.stringify(requests.slice(1))
      expect(later).toContain("The answer is long.")
      expect(later.length).toBeLessThan(1_000_000)
    } finally {
      await server.close()
    }
  }, 300_000)
})
