// Keeps the type-stripped code of the clone's .ts sources between runs, so that a CLI start from source does not strip
// (and load the stripper for) some two hundred files again: that was a third of a `smurfs <command> --help`.
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { registerHooks, stripTypeScriptTypes } from "node:module"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * Serve each ES module .ts file under `root` (outside node_modules, which Node never strips) as the code Node's own
 * stripping makes of it (mode strip, `//# sourceURL=` its URL, so positions and stack traces are the same), from
 * `dir` when it was stripped before. Only Node's default setting is taken over: with --experimental-transform-types
 * or source maps Node strips as it always did. A cache that cannot be read or written only costs the stripping.
 */
export const cacheStrippedTypes = (dir, root = "file:///") => {
  if (dir instanceof URL) dir = fileURLToPath(dir)
  if (root instanceof URL) root = root.href
  if (process.features.typescript !== "strip" || process.sourceMapsEnabled) return
  let writable = true
  const strip = (source, url) => {
    // stripTypeScriptTypes warns that it is experimental; Node's own stripping, which this stands for, does not
    const emitWarning = process.emitWarning
    process.emitWarning = () => {}
    try {
      return stripTypeScriptTypes(source, { mode: "strip", sourceUrl: url })
    } finally {
      process.emitWarning = emitWarning
    }
  }
  registerHooks({
    load: (url, context, nextLoad) => {
      const loaded = nextLoad(url, context)
      if (loaded.format !== "module-typescript" || !url.startsWith(root) || url.includes("/node_modules/"))
        return loaded
      const source = typeof loaded.source === "string" ? loaded.source : Buffer.from(loaded.source).toString("utf8")
      // one entry per file, named by its URL and replaced when the file changes, so the cache does not grow with edits
      const file = join(dir, createHash("sha256").update(url).digest("hex"))
      const stamp = `// ${createHash("sha256").update(`${process.version}\0${source}`).digest("hex")}\n`
      try {
        const cached = readFileSync(file, "utf8")
        if (cached.startsWith(stamp))
          return { format: "module", source: cached.slice(stamp.length), shortCircuit: true }
      } catch {}
      let stripped
      try {
        stripped = strip(source, url)
      } catch {
        return loaded // Node strips it again and reports the syntax error as it always does
      }
      if (writable)
        try {
          mkdirSync(dir, { recursive: true })
          // another CLI process may store the same file at the same time: each writes its own and renames it
          const partial = `${file}.${process.pid}.tmp`
          writeFileSync(partial, stamp + stripped)
          renameSync(partial, file)
        } catch {
          writable = false
        }
      return { format: "module", source: stripped, shortCircuit: true }
    }
  })
}
