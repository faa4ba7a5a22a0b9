// SIGTERM or Ctrl-C while the CLI starts up: held until the command listens, so it stops with the same resume hint.
import { execFile, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { MINI_DATA } from "../data.ts"

const REPO = fileURLToPath(new URL("../../", import.meta.url))
const DATA = MINI_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-startup-signals-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Holds the loading of the bench command until the test writes `<gate>.go` (test/fixtures/startup-gate). */
const GATE = join(REPO, "test", "fixtures", "startup-gate", "register.mjs")

describe("signals during start-up", () => {
  it("holdSignals keeps a signal that arrives before the command listens and hands it over", async () => {
    const script = `
      import { holdSignals } from "./src/cli/early-signals.ts"
      const held = holdSignals()
      process.kill(process.pid, "SIGTERM")
      await new Promise((r) => setTimeout(r, 100))
      process.once("SIGTERM", (s) => { console.log("the command got " + s); process.exit(0) })
      held.release()
      await new Promise((r) => setTimeout(r, 5000))
      console.log("never handed over")`
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd: REPO })
    expect(stdout.trim()).toBe("the command got SIGTERM")
  })

  it("bench: SIGTERM or Ctrl-C while the command is still loading prints the resume hint and exits 130", async () => {
    const hanging = createServer(() => {})
    await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", r))
    const port = (hanging.address() as AddressInfo).port
    try {
      for (const signal of ["SIGTERM", "SIGINT"] as const) {
        const gate = join(scratch, `gate-${signal}`)
        const child = spawn(
          process.execPath,
          [
            "--import",
            GATE,
            "bin/smurfs.js",
            "bench",
            "--data",
            DATA,
            "--group",
            "G1_tool",
            "--limit",
            "2",
            "--method",
            "react",
            "--model",
            "openai:any",
            "--out",
            join(scratch, signal)
          ],
          {
            cwd: REPO,
            env: {
              ...process.env,
              OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
              NO_COLOR: "1",
              SMURFS_TEST_GATE: gate
            }
          }
        )
        let stderr = ""
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
          child.on("exit", (code, sig) => r({ code, signal: sig }))
        )
        // the CLI is loading the bench command: signal it there, then let the loading finish
        while (!existsSync(`${gate}.loading`)) await new Promise((r) => setTimeout(r, 5))
        child.kill(signal)
        await new Promise((r) => setTimeout(r, 100))
        writeFileSync(`${gate}.go`, "")
        expect(await exited, `${signal}: ${stderr}`).toEqual({ code: ExitCode.Interrupted, signal: null })
        expect(stderr).toContain("interrupted")
        expect(stderr).toContain("Rerun with --resume to continue: smurfs bench")
      }
    } finally {
      hanging.closeAllConnections()
      hanging.close()
    }
  }, 300_000)
})
