import { rmSync } from "node:fs"
import { createServer } from "node:net"
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { writeFakeRun } from "../../../bench/eval/test-fixtures.ts"
import { captureConsole } from "../../../test/capture-console.ts"
import { ExitCode } from "../exit-codes.ts"
import { run, viewPages } from "./view.ts"

let err: Array<string>
beforeEach(() => void ({ err } = captureConsole()))
afterEach(() => vi.restoreAllMocks())
const runs: Array<string> = []
afterAll(() => {
  for (const dir of runs) rmSync(dir, { recursive: true, force: true })
})

describe("smurfs view", () => {
  it("serves the report at / and /index.html and each task's page at the link the report gives it", async () => {
    const dir = await writeFakeRun([{ taskId: "a b", method: "smurfs" }])
    runs.push(dir)
    const pages = viewPages([dir], undefined)
    if (typeof pages === "string") throw new Error(pages)
    expect(pages.get("/")).toBe(pages.get("/index.html"))
    const href = /<a href="([^"]+)">a b<\/a>/.exec(pages.get("/")!)![1]!
    // (the file is named a%20b.html, as the run names its files; the link encodes the %)
    expect(href).toBe("index-tasks/1/G1_instruction/a%2520b.html")
    expect(pages.get(`/${href}`)).toContain("smurfs G1_instruction/a b")
    expect(pages.get(`/${href}`)).toContain('href="../../../index.html"')
  })

  it("a port in use is bad input that says what to do", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }])
    runs.push(dir)
    const busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve))
    const { port } = busy.address() as { port: number }
    try {
      expect(await run([dir, "--port", String(port)])).toBe(ExitCode.BadInput)
      expect(err.join("\n")).toContain(`port ${port} on 127.0.0.1 is in use`)
      expect(err.join("\n")).toContain("--port 0")
    } finally {
      busy.close()
    }
  })

  it("no directory, or a bad port, is bad usage; a folder that is not a run is bad input", async () => {
    expect(await run([])).toBe(ExitCode.Usage)
    expect(await run(["x", "--port", "70000"])).toBe(ExitCode.Usage)
    expect(await run(["/nonexistent/run", "--port", "0"])).toBe(ExitCode.BadInput)
  })
})
