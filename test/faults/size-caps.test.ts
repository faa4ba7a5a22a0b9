// A 20 MB model reply: the task finishes, its record stays small (every string capped with its original
// length noted), and what goes back to the model is cut. RSS is printed, never asserted.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { capRecordSize, capStrings, capText, recordBytes, SIZE_CAPS } from "../../src/trace/size-caps.ts"
import { bench1073 } from "../bench-1073.ts"
import { startFakeOpenAI } from "../fake-servers/openai.ts"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "smurfs-size-caps-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const HUGE = `${"The answer is long. ".repeat(1_000_000)}THE-END` // ~20 MB

/** `smurfs bench` of one react task (query 1073) under /usr/bin/time, against a fake OpenAI server. */
const benchUnderTime = (baseURL: string, out: string, extra: ReadonlyArray<string> = []) =>
  new Promise<{ code: number; stderr: string }>((resolve) =>
    execFile(
      "/usr/bin/time",
      [
        "-f",
        "max RSS %M KB",
        process.execPath,
        "bin/smurfs.js",
        "bench",
        ...bench1073("openai:test-model", out),
        ...extra
      ],
      {
        cwd: repo,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "k", OPENAI_BASE_URL: baseURL, SMURFS_MODEL: "" }
      },
      (error, _stdout, stderr) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stderr })
    )
  )

const recordFiles = (out: string) =>
  readdirSync(join(out, "tasks"), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".json"))
    .map((f) => join(out, "tasks", f))

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

  it("a record as a whole is capped: later long strings are cut harder, each noting its original length", () => {
    const value = {
      finalAnswer: "a".repeat(100_000),
      events: Array.from({ length: 40 }, (_, i) => ({ i, reply: `${i}:${"r".repeat(200_000)}` }))
    }
    expect(recordBytes(capStrings(value))).toBeGreaterThan(2_000_000)
    const capped = capRecordSize(value, 300_000)
    expect(recordBytes(capped)).toBeLessThanOrEqual(300_000)
    expect(capped.finalAnswer).toContain("100,000 characters in all")
    expect(
      capped.events.every(
        (e) => e.reply.includes("200,002 characters in all") || e.reply.includes("200,003 characters in all")
      )
    ).toBe(true)
    expect(capped.events[0]!.reply.length).toBeGreaterThan(capped.events[39]!.reply.length)
    expect(capped.events.map((e) => e.i)).toEqual(value.events.map((e) => e.i)) // the structure stays whole
    // a record under the cap keeps everything the per-string cap keeps
    expect(capRecordSize({ a: "x".repeat(1000) }, 300_000)).toEqual({ a: "x".repeat(1000) })
  })

  it("a run of 2 MB replies keeps every task record under 1 MiB, and --max-record-bytes lowers the cap", async () => {
    const TWO_MB = `${"Still thinking about it. ".repeat(80_000)}TAIL` // 2 MB
    const REPLIES = 24
    const server = await startFakeOpenAI({
      models: ["test-model"],
      chat: (_body: unknown, index: number) =>
        index % (REPLIES + 1) < REPLIES
          ? { content: TWO_MB }
          : {
              content: "",
              toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }]
            }
    })
    try {
      for (const [name, extra, cap] of [
        ["default", [], SIZE_CAPS.recordBytes],
        ["lowered", ["--max-record-bytes", "300000"], 300_000]
      ] as const) {
        const out = join(scratch, `run-2mb-${name}`)
        const r = await benchUnderTime(server.baseURL, out, extra)
        expect(r.code, r.stderr).toBe(0)
        const files = recordFiles(out)
        expect(files.length).toBe(1)
        const bytes = statSync(files[0]!).size
        console.log(
          `size caps: react replies of 2 MB each, record cap ${cap}: task record ${bytes} bytes, ${r.stderr.split("\n").find((l) => l.startsWith("max RSS")) ?? "max RSS not reported"}`
        )
        expect(bytes).toBeLessThanOrEqual(cap)
        const record = JSON.parse(readFileSync(files[0]!, "utf8")) as { finishType: string; events: Array<unknown> }
        expect(record.finishType).not.toBe("error")
        expect(JSON.stringify(record.events)).toContain(`${TWO_MB.length.toLocaleString("en-US")} characters in all`)
      }
    } finally {
      await server.close()
    }
  }, 240_000)

  it("a 20 MB reply: the bench task finishes and its record stays small", async () => {
    // the first reply is 20 MB of text (no tool call); then Finish
    const server = await startFakeOpenAI({
      models: ["test-model"],
      chat: (_body: unknown, index: number) =>
        index === 0
          ? { content: HUGE }
          : {
              content: "",
              toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }]
            }
    })
    try {
      const out = join(scratch, "run")
      const r = await benchUnderTime(server.baseURL, out)
      console.log(
        `size caps: ${r.stderr.split("\n").find((l) => l.startsWith("max RSS")) ?? "max RSS not reported"} (bench of one react task with a 20 MB reply)`
      )
      expect(r.code, r.stderr).toBe(0)
      const files = readdirSync(join(out, "tasks"), { recursive: true })
        .map(String)
        .filter((f) => f.endsWith(".json"))
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
