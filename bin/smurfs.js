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
const { existsSync } = await import("node:fs")
const built = new URL("../dist/src/cli/main.js", import.meta.url)
const entry = existsSync(built) ? built : new URL("../src/cli/main.ts", import.meta.url)
const { main } = await import(entry.href)
process.exitCode = await main(process.argv.slice(2))
