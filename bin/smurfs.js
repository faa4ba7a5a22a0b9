#!/usr/bin/env node
// Entry point of the `smurfs` CLI: checks the Node version, then loads the CLI (built or from source).
const [major, minor] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `smurfs needs Node.js 22.18 or newer (found ${process.versions.node}). ` +
      "Install a current Node (https://nodejs.org, or `nvm install 22`) and run the command again."
  )
  process.exit(78)
}
// Hold Ctrl-C / SIGTERM while the CLI loads; main() takes over (src/cli/early-signals.ts) and hands them to the command.
let held
const hold = (signal) => void (held ??= signal)
process.on("SIGINT", hold)
process.on("SIGTERM", hold)
const { existsSync } = await import("node:fs")
const built = new URL("../dist/src/cli/main.js", import.meta.url)
const entry = existsSync(built) ? built : new URL("../src/cli/main.ts", import.meta.url)
const { main, exitQuietlyOnClosedPipe } = await import(entry.href)
exitQuietlyOnClosedPipe()
const running = main(process.argv.slice(2))
process.off("SIGINT", hold)
process.off("SIGTERM", hold)
if (held) process.kill(process.pid, held)
process.exitCode = await running
