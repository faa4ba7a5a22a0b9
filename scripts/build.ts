// Builds the npm package's dist/: our own code bundled into a few files (Node loads one file faster than a hundred), plus tsc's declarations.
import { execFileSync } from "node:child_process"
import { rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Plugin, rolldown } from "rolldown"

const root = fileURLToPath(new URL("..", import.meta.url))
const dist = fileURLToPath(new URL("../dist", import.meta.url))

/**
 * The package's entries, named by where package.json's `exports` and bin/smurfs.js look for them. A
 * dynamic `import()` in our code (a CLI command, a provider's client, the MCP source) becomes a chunk of
 * its own, loaded when called, as from the sources.
 */
const ENTRIES = { "src/index": "src/index.ts", "src/cli/main": "src/cli/main.ts" }

/**
 * Every bare specifier stays an import: a user's zod and effect are the ones we use (a schema or a
 * Layer crosses the boundary), and the optional peers must stay optional.
 */
const external = (id: string) => !id.startsWith(".") && !id.startsWith("/")

rmSync(dist, { recursive: true, force: true })
// Declarations only: the JavaScript comes from the bundle; `import "smurfs"` resolves its types from dist/src/index.d.ts.
execFileSync(
  process.execPath,
  [
    fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url)),
    "-p",
    "tsconfig.build.json",
    "--emitDeclarationOnly"
  ],
  { cwd: root, stdio: "inherit" }
)
/** The modules `smurfs --help` loads: the CLI entry's static imports, kept out of the library's chunk. */
const cliStatic = new Set<string>()
const collectCliStatic: Plugin = {
  name: "smurfs:cli-static",
  buildEnd() {
    const visit = (id: string) => {
      if (cliStatic.has(id)) return
      cliStatic.add(id)
      for (const next of this.getModuleInfo(id)?.importedIds ?? []) visit(next)
    }
    visit(join(root, ENTRIES["src/cli/main"]))
  }
}
const bundle = await rolldown({
  cwd: root,
  input: ENTRIES,
  platform: "node",
  external,
  tsconfig: "tsconfig.json",
  plugins: [collectCliStatic]
})
try {
  await bundle.write({
    dir: dist,
    format: "esm",
    entryFileNames: "[name].js",
    // beside the entries, inside the package: package-root.ts walks up from any of them, and createRequire /
    // import.meta.resolve (peer-packages.ts) find the same node_modules
    chunkFileNames: "src/chunks/[name]-[hash].js",
    // stack traces under `node --enable-source-maps` name src/*.ts lines; the sources themselves stay out (src/ is not shipped)
    sourcemap: true,
    sourcemapExcludeSources: true,
    // a function or class renamed apart from another of the same name keeps its own `name`
    keepNames: true,
    // what an entry imports statically is one chunk (Node resolves, reads and compiles each file on its own), what
    // it imports with import() stays apart, loaded when called
    codeSplitting: {
      groups: [
        { name: "cli", test: (id) => cliStatic.has(id), priority: 2 },
        { name: "smurfs", tags: ["$initial"], priority: 1 }
      ]
    }
  })
} finally {
  await bundle.close()
}
