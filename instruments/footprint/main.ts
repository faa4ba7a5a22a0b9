// Install size and import time of the npm package as a user installs it: `node instruments/footprint/main.ts [--runs 15]`.
// Packs the project, installs the tarball into a temporary project offline, then measures.
import { execFileSync } from "node:child_process"
import { readdirSync, rmSync, statSync } from "node:fs"
import { loadavg } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { packAndInstall } from "./install.ts"

const { values } = parseArgs({ options: { runs: { type: "string", default: "15" } } })
const runs = Math.max(3, Number(values.runs) || 15)

/** Bytes of the files under `path` (apparent sizes, as npm reports unpacked sizes). */
const bytes = (path: string): number => {
  const s = statSync(path, { throwIfNoEntry: false })
  if (!s) return 0
  if (!s.isDirectory()) return s.size
  return readdirSync(path).reduce((n, entry) => n + bytes(join(path, entry)), 0)
}
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const { dir } = await packAndInstall()
try {
  const modules = join(dir, "node_modules")
  const packages = readdirSync(modules).flatMap((name) =>
    name.startsWith("@")
      ? readdirSync(join(modules, name)).map((n) => `${name}/${n}`)
      : name.startsWith(".")
        ? []
        : [name]
  )
  const sizes = packages.map((name) => ({ name, size: bytes(join(modules, name)) })).sort((a, b) => b.size - a.size)
  const total = bytes(modules)
  // Measured inside a fresh node: the import's wall time, and the CPU it spent (less sensitive to a busy machine).
  const probe =
    'const c = process.cpuUsage(); const t = performance.now(); await import("smurfs"); const u = process.cpuUsage(c); console.log(JSON.stringify({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000 }))'
  const samples = Array.from(
    { length: runs },
    () =>
      JSON.parse(
        execFileSync(process.execPath, ["--input-type=module", "-e", probe], { cwd: dir, encoding: "utf8" })
      ) as { wall: number; cpu: number }
  )
  console.log(`node ${process.versions.node}, ${runs} runs each, ${new Date().toISOString()}`)
  console.log(
    `install size (npm install smurfs zod): ${mb(total)} in ${packages.length} packages; smurfs itself ${mb(sizes.find((s) => s.name === "smurfs")?.size ?? 0)}`
  )
  console.log(
    `largest: ${sizes
      .slice(0, 8)
      .map((s) => `${s.name} ${mb(s.size)}`)
      .join(", ")}`
  )
  console.log(
    `import "smurfs" in a fresh node: median ${median(samples.map((x) => x.wall)).toFixed(0)} ms wall, ${median(samples.map((x) => x.cpu)).toFixed(0)} ms CPU (load average ${loadavg()[0]!.toFixed(1)})`
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
