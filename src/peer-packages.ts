// Optional peer packages: the queue, MCP and lexical retrieval load theirs when used, and name the install command when missing.
import { createRequire } from "node:module"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type { FailureKind } from "./failure.ts"

/** A feature and the optional packages it needs (`peerDependenciesMeta` optional in package.json). */
export interface PeerFeature {
  /** What the user asked for, as the message names it. */
  readonly feature: string
  /**
   * Package names, and for each the specifier that proves it installed (its main entry unless it has none) and what
   * `npm install` is given for it (its name unless a version must be pinned).
   */
  readonly packages: ReadonlyArray<{
    readonly name: string
    readonly probe?: string | undefined
    readonly install?: string | undefined
  }>
}

export const QUEUE_PEERS: PeerFeature = {
  feature: "The Redis queue (--queue, smurfs worker)",
  packages: [{ name: "bullmq" }, { name: "ioredis" }]
}
export const MCP_PEERS: PeerFeature = {
  feature: "MCP tool servers",
  packages: [{ name: "@modelcontextprotocol/sdk", probe: "@modelcontextprotocol/sdk/client/index.js" }]
}
/** The embedded engine: pinned exactly, as the registry serves every platform's prebuilt binaries of this version. */
export const LLAMA_PEERS: PeerFeature = {
  feature: "The embedded llama.cpp engine (llama: models)",
  packages: [{ name: "node-llama-cpp", install: "node-llama-cpp@3.21.1" }]
}
export const RETRIEVAL_PEERS: PeerFeature = {
  feature: "Tool retrieval (--toolset retrieve, tools search)",
  packages: [{ name: "minisearch" }]
}

/** Throws when a specifier cannot be resolved from this package, as `import.meta.resolve` does. */
export type Resolver = (specifier: string) => unknown

const resolveHere: Resolver = (specifier) => import.meta.resolve(specifier)

export class MissingPeerPackage extends Data.TaggedError("MissingPeerPackage")<{
  readonly feature: string
  readonly packages: ReadonlyArray<string>
  /** What `npm install` is given, when a package must be pinned; default the names. */
  readonly installs?: ReadonlyArray<string> | undefined
}> {
  get kind(): FailureKind {
    return "bad-input"
  }
  override get message() {
    return `${this.feature} needs the optional ${this.packages.length === 1 ? "package" : "packages"} ${this.packages.join(" and ")}, which ${this.packages.length === 1 ? "is" : "are"} not installed: run \`npm install ${(this.installs ?? this.packages).join(" ")}\` in your project, then the command again.`
  }
}

/** The feature's packages that cannot be resolved (none when all are installed). */
export const missingPeers = (peers: PeerFeature, resolve: Resolver = resolveHere): ReadonlyArray<string> =>
  peers.packages.flatMap(({ name, probe }) => {
    try {
      resolve(probe ?? name)
      return []
    } catch {
      return [name]
    }
  })

/** The failure naming the feature's `missing` packages and the command that installs them. */
export const missingPeerPackage = (peers: PeerFeature, missing: ReadonlyArray<string>): MissingPeerPackage =>
  new MissingPeerPackage({
    feature: peers.feature,
    packages: missing,
    installs: missing.map((name) => peers.packages.find((p) => p.name === name)?.install ?? name)
  })

/** Fails with `MissingPeerPackage` when one of the feature's packages is missing. */
export const checkPeers = (
  peers: PeerFeature,
  resolve: Resolver = resolveHere
): Effect.Effect<void, MissingPeerPackage> =>
  Effect.suspend(() => {
    const missing = missingPeers(peers, resolve)
    return missing.length === 0 ? Effect.void : Effect.fail(missingPeerPackage(peers, missing))
  })

/** The feature's modules, imported once its packages are known to be there. */
export const loadWithPeers = <M>(
  peers: PeerFeature,
  load: () => Promise<M>,
  resolve: Resolver = resolveHere
): Effect.Effect<M, MissingPeerPackage> => Effect.andThen(checkPeers(peers, resolve), () => Effect.promise(load))

/** The same for code that cannot wait (a synchronous index): the package through `require`, or `MissingPeerPackage` thrown. */
export const requirePeer = <M>(peers: PeerFeature, name: string, resolve: Resolver = resolveHere): M => {
  const missing = missingPeers(peers, resolve)
  if (missing.length > 0) throw missingPeerPackage(peers, missing)
  return createRequire(import.meta.url)(name) as M
}
