// Test helper: a small StableToolBench-layout sample (the fixture's queries and ids, a cache zip, a tools tar.gz) served by a loopback file host, and the pieces that pull it.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as tar from "tar"
import type { DataPiece, GithubFiles } from "../bench/data-pull/sources.ts"
import { MINI_DATA } from "./data.ts"
import { type FileHost, gitBlobSha1 } from "./fake-servers/files.ts"
import { zipOf } from "./zip.ts"

export const SAMPLE_COMMIT = "0123456789abcdef0123456789abcdef01234567"

/** The cache zip as StableToolBench ships it: a server/ folder holding tool_response_cache/ and tools/. */
export const sampleCacheZip = (): Buffer =>
  zipOf({
    "server/": "",
    "server/tool_response_cache/Data/theclique_for_Data/transfermarkt_search.json": JSON.stringify({
      "{'name': 'Lionel Messi'}": { error: "", response: "RECORDED-IN-THE-CACHE" }
    }),
    "server/tools/Data/theclique.json": JSON.stringify({ tool_name: "theclique", api_list: [] })
  })

/** A tools tar.gz of one top folder, as ToolEnv2404 ships. */
export const sampleToolsTarGz = async (): Promise<Buffer> => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-tools-tar-"))
  try {
    mkdirSync(join(dir, "toolenv", "Data"), { recursive: true })
    writeFileSync(join(dir, "toolenv", "Data", "theclique.json"), JSON.stringify({ tool_name: "theclique" }))
    await tar.c({ gzip: true, file: join(dir, "tools.tar.gz"), cwd: dir }, ["toolenv"])
    return readFileSync(join(dir, "tools.tar.gz"))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Serve the fixture's query and id files at GitHub raw paths of a sample commit (and the archives as Hugging Face
 * datasets), and return the pieces that pull them, checked by their real git blob ids and SHA-256s.
 */
export const serveSample = async (host: FileHost): Promise<{ pieces: Array<DataPiece>; groups: Array<string> }> => {
  const groups = readdirSync(join(MINI_DATA.path, "queries")).map((f) => f.replace(/\.json$/, ""))
  const files: GithubFiles["files"][number][] = []
  for (const group of groups)
    for (const [from, to] of [
      ["queries", "test_instruction"],
      ["query_ids", "test_query_ids"]
    ] as const) {
      const bytes = readFileSync(join(MINI_DATA.path, from, `${group}.json`))
      const path = `solvable_queries/${to}/${group}.json`
      host.file(`/THUNLP-MT/StableToolBench/${SAMPLE_COMMIT}/${path}`, bytes)
      files.push({ path, size: bytes.length, gitBlobSha1: gitBlobSha1(bytes) })
    }
  host.hfRepo("stabletoolbench/Cache", [{ path: "server_cache.zip", bytes: sampleCacheZip(), lfs: true }], "dataset")
  host.hfRepo(
    "stabletoolbench/ToolEnv2404",
    [{ path: "tools.tar.gz", bytes: await sampleToolsTarGz(), lfs: true }],
    "dataset"
  )
  const pieces: Array<DataPiece> = [
    {
      name: "queries",
      what: "the sample's queries",
      licence: "Apache-2.0",
      source: { kind: "github", owner: "THUNLP-MT", repo: "StableToolBench", commit: SAMPLE_COMMIT, files }
    },
    {
      name: "cache",
      what: "the sample's cache",
      licence: "Apache-2.0",
      source: {
        kind: "hf-archive",
        repo: "stabletoolbench/Cache",
        file: "server_cache.zip",
        revision: "main",
        place: [
          { folder: "tool_response_cache", to: "server/tool_response_cache" },
          { folder: "tools", to: "server/tools", optional: true }
        ]
      }
    },
    {
      name: "tools",
      what: "the sample's tools",
      licence: "Apache-2.0",
      source: {
        kind: "hf-archive",
        repo: "stabletoolbench/ToolEnv2404",
        file: "tools.tar.gz",
        revision: "main",
        place: [{ folder: ".", to: "server/tools" }]
      }
    }
  ]
  return { pieces, groups }
}
