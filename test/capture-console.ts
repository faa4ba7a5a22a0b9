// Test helper: capture what a CLI command prints with console.log and console.error (restore with vi.restoreAllMocks).
import { vi } from "vitest"

export const captureConsole = () => {
  const out: Array<string> = []
  const err: Array<string> = []
  vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")))
  vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")))
  return { out, err }
}
