import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { isFailure } from "./failure.ts"
import {
  checkPeers,
  loadWithPeers,
  MCP_PEERS,
  MissingPeerPackage,
  missingPeers,
  QUEUE_PEERS,
  RETRIEVAL_PEERS,
  type Resolver,
  requirePeer
} from "./peer-packages.ts"

/** A resolver that finds everything but `absent`, as `import.meta.resolve` does when a package is not installed. */
const without =
  (...absent: string[]): Resolver =>
  (specifier) => {
    if (absent.some((name) => specifier === name || specifier.startsWith(`${name}/`)))
      throw Object.assign(new Error(`Cannot find package '${specifier}'`), { code: "ERR_MODULE_NOT_FOUND" })
    return `file:///node_modules/${specifier}`
  }

describe("optional peer packages", () => {
  it("names the missing packages and the install command that brings them", async () => {
    const failure = await Effect.runPromise(Effect.flip(checkPeers(QUEUE_PEERS, without("bullmq", "ioredis"))))
    expect(failure).toBeInstanceOf(MissingPeerPackage)
    expect(failure.message).toContain("npm install bullmq ioredis")
    expect(failure.message).toContain("needs the optional packages bullmq and ioredis, which are not installed")
    expect(failure.message).toContain("--queue")
    expect(isFailure(failure)).toBe(true) // a bad-input exit, not a bug report
  })

  it("names only the package that is missing", () => {
    expect(missingPeers(QUEUE_PEERS, without("ioredis"))).toEqual(["ioredis"])
    expect(missingPeers(MCP_PEERS, without("@modelcontextprotocol/sdk"))).toEqual(["@modelcontextprotocol/sdk"])
    expect(missingPeers(RETRIEVAL_PEERS, without())).toEqual([])
  })

  it("does not import the feature's modules when a package is missing", async () => {
    let imported = false
    const load = loadWithPeers(MCP_PEERS, async () => ((imported = true), {}), without("@modelcontextprotocol/sdk"))
    const failure = await Effect.runPromise(Effect.flip(load))
    expect(imported).toBe(false)
    expect(failure.message).toContain("npm install @modelcontextprotocol/sdk")
    // one package reads as one: "the optional package ...", never "the optional 1 package"
    expect(failure.message).toContain("needs the optional package @modelcontextprotocol/sdk, which is not installed")
  })

  it("loads the modules when the packages are there", async () => {
    expect(await Effect.runPromise(loadWithPeers(QUEUE_PEERS, async () => "loaded", without()))).toBe("loaded")
  })

  it("throws the same message from a synchronous require, and returns the package when it resolves", () => {
    expect(() => requirePeer(RETRIEVAL_PEERS, "minisearch", without("minisearch"))).toThrow(/npm install minisearch/)
    expect(typeof requirePeer(RETRIEVAL_PEERS, "minisearch")).toBe("function")
  })
})
