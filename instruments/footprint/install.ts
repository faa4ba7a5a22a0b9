// Pack the project and install the tarball into a fresh project offline, as a user's `npm install smurfs zod`.
// Shared by the pack-install test and the footprint benchmark.
import { execFile, execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const run = promisify(execFile)
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
export const npmBin = process.platform === "win32" ? "npm.cmd" : "npm"

type Lock = { packages: Record<string, Record<string, unknown>> }

/** The registry npm installs from here (its configuration: .npmrc, npm_config_registry), ending in "/". */
const npmRegistry = (): string =>
  `${execFileSync(npmBin, ["config", "get", "registry"], { cwd: repoRoot, encoding: "utf8" }).trim().replace(/\/+$/, "")}/`

/**
 * A lock entry with the registry tarball URL our lock leaves out (npm writes none where the registry is the
 * default): with it, `npm install --offline` takes the tarball from the npm cache by its integrity hash, without
 * the package's registry metadata, which a cache filled another way (or pruned) may lack.
 */
const withTarballUrl = (path: string, entry: Record<string, unknown>, registry: string): Record<string, unknown> => {
  const { version, resolved, integrity, link } = entry
  if (resolved !== undefined || link === true || typeof version !== "string" || typeof integrity !== "string")
    return entry
  const name = typeof entry["name"] === "string" ? entry["name"] : path.slice(path.lastIndexOf("node_modules/") + 13)
  return { ...entry, resolved: `${registry}${name}/-/${name.split("/").pop()}-${version}.tgz` }
}

/**
 * The consumer's manifest and lock file: the tarball plus every non-dev package of our own lock, at
 * the same places, each with its registry tarball URL. `npm install --offline` then needs no registry
 * metadata, only the tarballs the npm cache holds by their integrity hashes (`npm ci` put them there).
 */
export const consumerLock = (tarball: string) => {
  const ours = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as Lock
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
    version: string
    dependencies: Record<string, string>
    peerDependencies?: Record<string, string>
    peerDependenciesMeta?: Record<string, unknown>
    bin: unknown
    engines: unknown
  }
  const dependencies = { smurfs: `file:${tarball}`, zod: pkg.dependencies["zod"]! }
  const packages: Lock["packages"] = {
    "": { name: "consumer", dependencies },
    // the optional peers (queue, MCP, retrieval) are not installed, as npm leaves them for a user's `npm install smurfs zod`
    "node_modules/smurfs": {
      version: pkg.version,
      resolved: `file:${tarball}`,
      dependencies: pkg.dependencies,
      peerDependencies: pkg.peerDependencies,
      peerDependenciesMeta: pkg.peerDependenciesMeta,
      bin: pkg.bin,
      engines: pkg.engines
    }
  }
  const registry = npmRegistry()
  for (const [path, entry] of Object.entries(ours.packages))
    if (path !== "" && entry["dev"] !== true) packages[path] = withTarballUrl(path, entry, registry)
  return {
    manifest: { name: "consumer", private: true, type: "module", dependencies },
    lock: { name: "consumer", lockfileVersion: 3, requires: true, packages }
  }
}

/** `npm pack` (its prepack builds dist/), then install the tarball and zod into a new temporary project; returns its folder and the tarball. */
export const packAndInstall = async (): Promise<{ dir: string; tarball: string }> => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-pack-"))
  const packed = await run(npmBin, ["pack", "--json", "--pack-destination", dir], {
    cwd: repoRoot,
    encoding: "utf8",
    timeout: 180_000
  })
  const tarball = join(dir, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename)
  const { manifest, lock } = consumerLock(tarball)
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2))
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify(lock, null, 2))
  await run(npmBin, ["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: dir,
    encoding: "utf8",
    timeout: 180_000
  })
  return { dir, tarball }
}
