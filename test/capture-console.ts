// Test helper: capture what a CLI command prints with console.log and console.error (restore with vi.restoreAllMocks).
import { vi } from "vitest"

export const captureConsole = () => {
  const out: Array<string> = []
  const err: Array<string> = []
  vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")))
  vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")))
  return { out, err }
}

/** Run a CLI command in-process, keeping what it prints on stderr (console.error and direct writes silenced). */
export const runCapturingStderr = async (run: (argv: Array<string>) => Promise<number>, argv: Array<string>) => {
  const lines: Array<string> = []
  const spies = [
    vi.spyOn(console, "error").mockImplementation((...a) => void lines.push(a.join(" "))),
    vi.spyOn(console, "log").mockImplementation(() => {})
  ]
  const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true)
  try {
    return { code: await run(argv), stderr: lines.join("\n") }
  } finally {
    for (const s of spies) s.mockRestore()
    write.mockRestore()
  }
}
