#!/usr/bin/env node
// Entry point of the `smurfs` CLI: checks the Node version, then loads the CLI (from source in a clone, built in a package).
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
// Node's compile cache (in the OS temp folder) keeps the compiled code of the CLI and its dependencies for the
// next run; this is the CLI's process, not a user's, and the CLI runs the same when the cache cannot be written
// (Node then reports it in the returned status). A temp folder that does not exist is left alone: Node would
// create it, and under /proc its mkdir never returns.
const { enableCompileCache, registerHooks } = await import("node:module")
try {
  if (existsSync((await import("node:os")).tmpdir())) enableCompileCache?.()
} catch {}
// A clone has src/ (Node strips the types itself); the npm package ships only dist/. Sources win when
// present, so that a stale dist/ left by `npm pack` in a clone never runs instead of the code being edited.
const source = new URL("../src/cli/main.ts", import.meta.url)
const fromSource = existsSync(source)
if (fromSource) {
  // A tool module in the clone (examples/my-tools.ts) imports "smurfs" by name: the package's exports
  // point at dist/, which a clone may not have built, so the name resolves to the sources here.
  const index = new URL("../src/index.ts", import.meta.url).href
  registerHooks({
    resolve: (specifier, context, nextResolve) =>
      specifier === "smurfs" ? { url: index, shortCircuit: true } : nextResolve(specifier, context)
  })
  // the sources' type-stripped code, kept in the clone's node_modules/.cache for the next run (bin/strip-cache.js)
  const { cacheStrippedTypes } = await import("./strip-cache.js")
  // only the clone's own files: a tool module in a temp folder would add an entry at every run
  cacheStrippedTypes(new URL("../node_modules/.cache/smurfs-strip/", import.meta.url), new URL("../", import.meta.url))
}
const entry = fromSource ? source : new URL("../dist/src/cli/main.js", import.meta.url)
const { main, exitQuietlyOnClosedPipe } = await import(entry.href)
exitQuietlyOnClosedPipe()
const running = main(process.argv.slice(2))
process.off("SIGINT", hold)
process.off("SIGTERM", hold)
if (held) process.kill(process.pid, held)
process.exitCode = await running
