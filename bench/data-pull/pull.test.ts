import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import * as Effect from "effect/Effect"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { exitCodeOf } from "../../src/cli/exit-codes.ts"
import type { DownloadProgress } from "../../src/llm/model-files/download.ts"
import { DownloadUnavailable } from "../../src/llm/model-files/errors.ts"
import { SAMPLE_COMMIT, sampleCacheZip, serveSample } from "../../test/data-pull-sample.ts"
import { type FileHost, startFileHost } from "../../test/fake-servers/files.ts"
import { zipOf } from "../../test/zip.ts"
import { dataLayout, loadQueries } from "../datasets.ts"
import { DataUnavailable, type PullOptions, pullData, STATE_FILE } from "./pull.ts"
import type { DataPiece } from "./sources.ts"
import { stableToolBenchPieces, tau2Pieces } from "./sources.ts"

let host: FileHost
let dest: string
let pieces: Array<DataPiece>
let groups: Array<string>

beforeAll(async () => {
  host = await startFileHost()
})
afterAll(() => host.close())
beforeEach(async () => {
  dest = mkdtempSync(join(tmpdir(), "smurfs-data-pull-"))
  ;({ pieces, groups } = await serveSample(host))
  host.reset()
})
afterEach(() => rmSync(dest, { recursive: true, force: true }))

const env = () => ({ HF_ENDPOINT: host.url, SMURFS_GITHUB_RAW: host.url })
const pull = (extra: Partial<PullOptions> = {}) =>
  pullData({
    dest,
    pieces,
    command: "smurfs data pull stabletoolbench",
    env: env(),
    offline: false,
    retryDelayMs: () => 10,
    ...extra
  })
const queryPath = `/THUNLP-MT/StableToolBench/${SAMPLE_COMMIT}/solvable_queries/test_instruction/G1_instruction.json`

describe("smurfs data pull (in process, against a loopback host)", () => {
  it("fetches the queries and unpacks the archives into the layout bench --data reads, with progress", async () => {
    const progress: Array<{ label: string; p: DownloadProgress }> = []
    const outcomes = await pull({
      reporter: (label) => ({ onProgress: (p) => progress.push({ label, p }), onWait: () => {}, stop: () => {} })
    })
    expect(outcomes.map((o) => [o.name, o.status])).toEqual([
      ["queries", "fetched"],
      ["cache", "fetched"],
      ["tools", "fetched"]
    ])
    expect(dataLayout(dest)).toEqual({
      queries: join(dest, "solvable_queries", "test_instruction"),
      queryIds: join(dest, "solvable_queries", "test_query_ids"),
      toolResponseCache: join(dest, "server", "tool_response_cache")
    })
    const queries = await Effect.runPromise(loadQueries({ dir: dest, groups }))
    expect(queries.length).toBeGreaterThanOrEqual(groups.length)
    expect(
      readFileSync(
        join(dest, "server", "tool_response_cache", "Data", "theclique_for_Data", "transfermarkt_search.json"),
        "utf8"
      )
    ).toContain("RECORDED-IN-THE-CACHE")
    // the tools archive of one top folder: its content is server/tools
    expect(existsSync(join(dest, "server", "tools", "Data", "theclique.json"))).toBe(true)
    expect(readdirSync(dest).sort()).toEqual([STATE_FILE, "server", "solvable_queries"].sort())
    const labels = new Set(progress.map((x) => x.label))
    expect(labels).toEqual(new Set([`queries (${groups.length * 2} files)`, "server_cache.zip", "tools.tar.gz"]))
    const zip = progress.filter((x) => x.label === "server_cache.zip").map((x) => x.p)
    expect(zip.at(-1)).toMatchObject({ done: true })
    expect(zip.at(-1)!.received).toBe(zip.at(-1)!.total)
  })

  it("a second pull makes no request, offline or not", async () => {
    await pull()
    host.requests.length = 0
    expect((await pull()).map((o) => o.status)).toEqual(["present", "present", "present"])
    expect((await pull({ offline: true })).map((o) => o.status)).toEqual(["present", "present", "present"])
    expect(host.requests).toEqual([])
  })

  it("a file cut mid-body is resumed with a Range request", async () => {
    host.fault(queryPath, { fault: "cut", after: 2000 })
    await pull()
    const gets = host.requests.filter((r) => r.path === queryPath)
    expect(gets.map((r) => r.range === undefined)).toEqual([true, false])
    expect(gets[1]!.range).toMatch(/^bytes=[1-9]\d*-$/)
    await Effect.runPromise(loadQueries({ dir: dest, groups: ["G1_instruction"] }))
  })

  it("a file whose git blob id differs is refused and not kept", async () => {
    host.fault(queryPath, { fault: "corrupt", times: 10 })
    const e = await pull().then(
      () => expect.unreachable(),
      (e: unknown) => e
    )
    expect(e).toBeInstanceOf(DownloadUnavailable)
    expect(exitCodeOf(e)).toBe(4)
    expect((e as Error).message).toContain("git blob SHA-1")
    const dir = join(dest, "solvable_queries", "test_instruction")
    expect(readdirSync(dir).filter((f) => f.startsWith("G1_instruction"))).toEqual([])
  })

  it("an archive whose SHA-256 differs from the listing is refused, and nothing is unpacked", async () => {
    host.fault("/datasets/stabletoolbench/Cache/resolve/main/server_cache.zip", { fault: "corrupt", times: 10 })
    const e = await pull().then(
      () => expect.unreachable(),
      (e: unknown) => e
    )
    expect((e as Error).message).toContain("SHA-256")
    expect(existsSync(join(dest, "server", "tool_response_cache"))).toBe(false)
    // the queries fetched before it are kept, and the next pull fetches only what is missing
    host.reset()
    await pull()
    expect(host.requests.some((r) => r.path.includes("solvable_queries"))).toBe(false)
  })

  it("an archive with an entry that would land outside the folder is refused, and nothing is written", async () => {
    host.hfRepo(
      "stabletoolbench/Cache",
      [
        {
          path: "server_cache.zip",
          bytes: zipOf({ "server/tool_response_cache/A/b_for_A/c.json": "{}", "../../escaped.txt": "x" }),
          lfs: true
        }
      ],
      "dataset"
    )
    const e = await pull({ pieces: pieces.filter((p) => p.name === "cache") }).then(
      () => expect.unreachable(),
      (e: unknown) => e
    )
    expect((e as DownloadUnavailable).problem).toBe("corrupt")
    expect((e as Error).message).toContain("cannot be unpacked")
    expect(existsSync(join(dest, "..", "escaped.txt"))).toBe(false)
    expect(existsSync(join(dest, "escaped.txt"))).toBe(false)
    expect(existsSync(join(dest, "server"))).toBe(false)
    expect(existsSync(join(dest, ".downloads", "server_cache.zip"))).toBe(false)
  })

  it("offline with files missing: unavailable, no request, every URL listed", async () => {
    const e = await pull({ offline: true }).then(
      () => expect.unreachable(),
      (e: unknown) => e
    )
    expect(e).toBeInstanceOf(DataUnavailable)
    expect(exitCodeOf(e)).toBe(4)
    const message = (e as Error).message
    expect(message).toContain(`${host.url}${queryPath}`)
    expect(message).toContain(`${host.url}/datasets/stabletoolbench/Cache/resolve/main/server_cache.zip`)
    expect(message).toContain("smurfs data pull stabletoolbench")
    expect(host.requests).toEqual([])
  })

  it("offline, an archive downloaded by hand to the path the message gives is unpacked with no request", async () => {
    const cacheOnly = pieces.filter((p) => p.name === "cache")
    const e = await pull({ pieces: cacheOnly, offline: true }).then(
      () => expect.unreachable(),
      (e: unknown) => e
    )
    const path = /-> (.*server_cache\.zip)/.exec((e as Error).message)![1]!
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, sampleCacheZip())
    expect((await pull({ pieces: cacheOnly, offline: true })).map((o) => o.status)).toEqual(["fetched"])
    expect(dataLayout(dest).toolResponseCache).toBe(join(dest, "server", "tool_response_cache"))
    expect(host.requests).toEqual([])
  })

  it("a host that cannot be reached: unavailable, with the URLs still to fetch", async () => {
    const e = await pull({
      env: { HF_ENDPOINT: "http://127.0.0.1:1", SMURFS_GITHUB_RAW: "http://127.0.0.1:1" },
      attempts: 2
    }).then(
      () => expect.unreachable(),
      (e: unknown) => e
    )
    expect(e).toBeInstanceOf(DataUnavailable)
    expect((e as Error).message).toContain(`http://127.0.0.1:1${queryPath}`)
  })
})

describe("the pieces of each dataset", () => {
  it("StableToolBench: queries and texts always; the cache, baselines and tools when asked", () => {
    expect(stableToolBenchPieces({}).map((p) => p.name)).toEqual(["queries", "texts"])
    expect(stableToolBenchPieces({ cache: true, baselines: true, tools: true }).map((p) => p.name)).toEqual([
      "queries",
      "texts",
      "cache",
      "baselines",
      "tools"
    ])
    const texts = stableToolBenchPieces({})[1]!.source
    expect(texts.kind === "github" && texts.files.map((f) => f.path)).toContain(
      "toolbench/inference/Prompts/ReAct_prompts.py"
    )
  })

  it("τ²-bench: each domain's database, policy, tasks and split, under data/tau2/domains/<domain>", () => {
    const paths = tau2Pieces(["retail"]).flatMap((p) =>
      p.source.kind === "github" ? p.source.files.map((f) => f.path) : []
    )
    expect(paths).toContain("data/tau2/domains/retail/db.json")
    expect(paths).toContain("data/tau2/domains/retail/tasks.json")
    expect(paths.some((p) => p.includes("airline"))).toBe(false)
  })
})
