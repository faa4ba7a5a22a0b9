// Test helper: whether tmux is installed, for the tests that drive a command in a pseudo-terminal.
import { execFileSync } from "node:child_process"

export const hasTmux = (() => {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()
