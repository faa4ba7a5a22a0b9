// Test helper: `smurfs` CLI processes that run side by side (coordinators, workers), with their stderr collected
// and a kill of every one still running for afterEach / afterAll.
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const REPO = fileURLToPath(new URL("../", import.meta.url))
const CLI = join(REPO, "bin", "smurfs.js")

export interface CliProcess {
  readonly child: ChildProcess
  /** Everything it wrote to stderr so far. */
  stderr: string
  readonly exited: Promise<number | null>
}

/** Start `smurfs` processes with `env` over the test's environment (colors off, no SMURFS_MODEL); `killAll` ends those still running. */
export const cliProcesses = (env: Record<string, string> = {}) => {
  const children: Array<CliProcess> = []
  const start = (args: ReadonlyArray<string>, extra: Record<string, string> = {}): CliProcess => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO,
      env: { ...process.env, NO_COLOR: "1", SMURFS_MODEL: "", ...env, ...extra },
      stdio: ["ignore", "ignore", "pipe"]
    })
    const proc: CliProcess = {
      child,
      stderr: "",
      exited: new Promise((resolve) => child.on("exit", (code) => resolve(code)))
    }
    child.stderr!.on("data", (chunk: Buffer) => void (proc.stderr += chunk.toString()))
    children.push(proc)
    return proc
  }
  const killAll = () => {
    for (const p of children.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL")
  }
  return { start, killAll }
}

/** Tasks a `smurfs worker` ran to a record, by its log lines. */
export const tasksDone = (p: CliProcess): number => (p.stderr.match(/: (answered|gave up) in /g) ?? []).length
