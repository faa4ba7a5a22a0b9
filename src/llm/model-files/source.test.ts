import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FileHost, fakeGguf, sha256, startFileHost } from "../../../test/fake-servers/files.ts"
import { exitCodeOf } from "../../cli/exit-codes.ts"
import { defaultModelsDir, offlineByEnv } from "./cache-dir.ts"
import type { DownloadProgress } from "./download.ts"
import { DownloadUnavailable, ModelSourceInvalid } from "./errors.ts"
import { DEFAULT_MODEL_SOURCE, modelSourceStatus, resolveModelSource } from "./source.ts"

let host: FileHost
let cacheDir: string
const model = fakeGguf(200_000, 7)
const other = fakeGguf(150_000, 8)
const REPO = "someone/Tiny-GGUF"

beforeAll(async () => {
  host = await startFileHost()
})
afterAll(() => host.close())
beforeEach(() => {
  cacheDir = mkdtempSync(join(tmpdir(), "smurfs-models-"))
  host.reset()
  host.hfRepo(REPO, [
    { path: "README.md", bytes: Buffer.from("# tiny") },
    { path: "tiny-Q8_0.gguf", bytes: other, lfs: true },
    { path: "tiny-Q4_K_M.gguf", bytes: model, lfs: true }
  ])
})
afterEach(() => rmSync(cacheDir, { recursive: true, force: true }))

const env = () => ({ HF_ENDPOINT: host.url })
const options = (extra: object = {}) => ({
  cacheDir,
  env: env(),
  offline: false,
  retryDelayMs: () => 10,
  ...extra
})
const failure = async (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => expect.unreachable("it should fail"),
    (e: unknown) => e
  )
const leftovers = () =>
  existsSync(join(cacheDir, "hf", "someone", "Tiny-GGUF"))
    ? readdirSync(join(cacheDir, "hf", "someone", "Tiny-GGUF"))
    : []

describe("resolveModelSource: hf: specs", () => {
  it("picks the quantization's file from the repository listing, reports progress and checks the SHA-256", async () => {
    const progress: Array<DownloadProgress> = []
    const path = await resolveModelSource(
      `hf:${REPO}:Q4_K_M`,
      options({ onProgress: (p: DownloadProgress) => progress.push(p) })
    )
    expect(path).toBe(join(cacheDir, "hf", "someone", "Tiny-GGUF", "tiny-Q4_K_M.gguf"))
    expect(sha256(readFileSync(path))).toBe(sha256(model))
    expect(host.requests.map((r) => r.path)).toEqual([`/api/models/${REPO}`, `/${REPO}/resolve/main/tiny-Q4_K_M.gguf`])
    const received = progress.map((p) => p.received)
    expect(received).toEqual([...received].sort((a, b) => a - b))
    expect(progress.every((p) => p.total === model.length)).toBe(true)
    expect(progress.at(-1)).toMatchObject({ done: true, received: model.length })
    expect(leftovers()).toEqual(["tiny-Q4_K_M.gguf"])
  })

  it("a file already in the cache is returned with no request at all, offline or not", async () => {
    const first = await resolveModelSource(`hf:${REPO}:q4_k_m`, options())
    host.requests.length = 0
    expect(await resolveModelSource(`hf:${REPO}:Q4_K_M`, options())).toBe(first)
    expect(await resolveModelSource(`hf:${REPO}:Q4_K_M`, options({ offline: true }))).toBe(first)
    expect(await resolveModelSource(`hf:${REPO}/tiny-Q4_K_M.gguf`, options({ offline: true }))).toBe(first)
    expect(host.requests).toEqual([])
  })

  it("a named file is downloaded as named", async () => {
    const path = await resolveModelSource(`hf:${REPO}/tiny-Q8_0.gguf`, options())
    expect(sha256(readFileSync(path))).toBe(sha256(other))
  })

  it("`llama` alone is the default model, fetched from $HF_ENDPOINT", async () => {
    const [user, repo] = DEFAULT_MODEL_SOURCE.slice(3).split(":")[0]!.split("/")
    host.hfRepo(`${user}/${repo}`, [{ path: "Qwen3-1.7B-Q4_K_M.gguf", bytes: model, lfs: true }])
    const path = await resolveModelSource("llama", options())
    expect(path).toBe(join(cacheDir, "hf", user!, repo!, "Qwen3-1.7B-Q4_K_M.gguf"))
    expect(host.requests[0]!.path).toBe(`/api/models/${user}/${repo}`)
  })

  it("a quantization the repository lacks is bad input that lists what it has", async () => {
    const e = await failure(resolveModelSource(`hf:${REPO}:Q2_K`, options()))
    expect(e).toBeInstanceOf(ModelSourceInvalid)
    expect(exitCodeOf(e)).toBe(3)
    expect((e as Error).message).toContain("tiny-Q8_0.gguf, tiny-Q4_K_M.gguf")
  })

  it("a repository Hugging Face does not have is bad input", async () => {
    const e = await failure(resolveModelSource("hf:nobody/nothing:Q4_K_M", options()))
    expect(e).toBeInstanceOf(ModelSourceInvalid)
    expect((e as Error).message).toContain("no repository nobody/nothing")
  })
})

describe("resolveModelSource: interrupted, corrupt and refused downloads", () => {
  it("a body cut mid-way is resumed with a Range request, in the same call", async () => {
    host.fault(`/${REPO}/resolve/main/tiny-Q4_K_M.gguf`, { fault: "cut", after: 60_000 })
    const path = await resolveModelSource(`hf:${REPO}:Q4_K_M`, options())
    expect(sha256(readFileSync(path))).toBe(sha256(model))
    const gets = host.requests.filter((r) => r.path.endsWith(".gguf"))
    expect(gets).toHaveLength(2)
    expect(gets[0]!.range).toBeUndefined()
    const from = Number(/^bytes=(\d+)-$/.exec(gets[1]!.range ?? "")?.[1])
    expect(from).toBeGreaterThan(0)
    expect(from).toBeLessThanOrEqual(60_000)
  })

  it("a download that gave up keeps its .part, and the next call resumes it", async () => {
    host.fault(`/${REPO}/resolve/main/tiny-Q4_K_M.gguf`, { fault: "cut", after: 80_000 })
    const e = await failure(resolveModelSource(`hf:${REPO}:Q4_K_M`, options({ attempts: 1 })))
    expect(e).toBeInstanceOf(DownloadUnavailable)
    expect(exitCodeOf(e)).toBe(4)
    const part = join(cacheDir, "hf", "someone", "Tiny-GGUF", "tiny-Q4_K_M.gguf.part")
    const kept = statSync(part).size
    expect(kept).toBeGreaterThan(0)
    host.requests.length = 0
    const path = await resolveModelSource(`hf:${REPO}:Q4_K_M`, options())
    expect(sha256(readFileSync(path))).toBe(sha256(model))
    expect(host.requests.find((r) => r.path.endsWith(".gguf"))!.range).toBe(`bytes=${kept}-`)
    expect(leftovers()).toEqual(["tiny-Q4_K_M.gguf"])
  })

  it("a whole .part left by a process killed before its rename is checked and kept, with no byte sent again", async () => {
    host.file("/files/whole.gguf", model)
    const status = modelSourceStatus(`${host.url}/files/whole.gguf`, options())
    mkdirSync(join(status.path!, ".."), { recursive: true })
    writeFileSync(`${status.path}.part`, model)
    const path = await resolveModelSource(`${host.url}/files/whole.gguf`, options())
    expect(sha256(readFileSync(path))).toBe(sha256(model))
    expect(host.requests).toEqual([{ method: "GET", path: "/files/whole.gguf", range: `bytes=${model.length}-` }])
  })

  it("a server that ignores Range restarts the file from its first byte", async () => {
    host.fault(`/${REPO}/resolve/main/tiny-Q4_K_M.gguf`, { fault: "cut", after: 50_000 })
    host.fault(`/${REPO}/resolve/main/tiny-Q4_K_M.gguf`, { fault: "cut", after: 50_000 })
    await failure(resolveModelSource(`hf:${REPO}:Q4_K_M`, options({ attempts: 1 })))
    host.fault(`/${REPO}/resolve/main/tiny-Q4_K_M.gguf`, { fault: "no-range" })
    const path = await resolveModelSource(`hf:${REPO}:Q4_K_M`, options())
    expect(sha256(readFileSync(path))).toBe(sha256(model))
  })

  it("bytes whose SHA-256 differs from the listing are refused, and nothing is kept", async () => {
    host.fault(`/${REPO}/resolve/main/tiny-Q4_K_M.gguf`, { fault: "corrupt", times: 10 })
    const e = await failure(resolveModelSource(`hf:${REPO}:Q4_K_M`, options()))
    expect(e).toBeInstanceOf(DownloadUnavailable)
    expect((e as DownloadUnavailable).problem).toBe("corrupt")
    expect((e as Error).message).toContain("SHA-256")
    expect(leftovers()).toEqual([])
  })

  it("a file whose size differs from the listing is refused", async () => {
    host.hfRepo(REPO, [{ path: "tiny-Q4_K_M.gguf", bytes: model, lfs: true, reportedSize: model.length + 5 }])
    const e = await failure(resolveModelSource(`hf:${REPO}:Q4_K_M`, options()))
    expect((e as DownloadUnavailable).problem).toBe("corrupt")
    expect((e as Error).message).toContain(`${model.length} bytes where ${model.length + 5} were expected`)
    expect(leftovers()).toEqual([])
  })

  it("an https URL that is not a GGUF file is refused", async () => {
    host.file("/files/page.gguf", Buffer.from("<html>login</html>"))
    const e = await failure(resolveModelSource(`${host.url}/files/page.gguf`, options()))
    expect((e as DownloadUnavailable).problem).toBe("corrupt")
    expect((e as Error).message).toContain("not a GGUF model")
  })

  it("an https URL is cached: the second resolution makes no request", async () => {
    host.file("/files/m.gguf", model)
    const path = await resolveModelSource(`${host.url}/files/m.gguf`, options())
    expect(sha256(readFileSync(path))).toBe(sha256(model))
    host.requests.length = 0
    expect(await resolveModelSource(`${host.url}/files/m.gguf`, options())).toBe(path)
    expect(host.requests).toEqual([])
  })

  it("a server error is retried; a 404 of the file is not", async () => {
    host.fault(`/${REPO}/resolve/main/tiny-Q4_K_M.gguf`, { fault: "status", status: 503 })
    await resolveModelSource(`hf:${REPO}:Q4_K_M`, options())
    host.file("/files/gone.gguf", model)
    host.fault("/files/gone.gguf", { fault: "status", status: 404, times: 5 })
    const e = await failure(resolveModelSource(`${host.url}/files/gone.gguf`, options()))
    expect((e as DownloadUnavailable).problem).toBe("http")
    expect(host.requests.filter((r) => r.path === "/files/gone.gguf")).toHaveLength(1)
  })
})

describe("resolveModelSource: credentials", () => {
  it("HF_TOKEN goes to the Hugging Face host, and not to the host a download is redirected to", async () => {
    const seen: Array<[string, string | undefined]> = []
    const cdn = createServer((req, res) => {
      seen.push(["cdn", req.headers.authorization])
      res.writeHead(200, { "content-length": String(model.length) })
      res.end(model)
    })
    await new Promise<void>((r) => cdn.listen(0, "127.0.0.1", r))
    const hub = createServer((req, res) => {
      seen.push([req.url!.startsWith("/api/") ? "api" : "hub", req.headers.authorization])
      if (req.url!.startsWith("/api/")) {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ siblings: [{ rfilename: "m-Q4_K_M.gguf", size: model.length }] }))
      } else {
        res.writeHead(302, { location: `http://127.0.0.1:${(cdn.address() as AddressInfo).port}/blob` })
        res.end()
      }
    })
    await new Promise<void>((r) => hub.listen(0, "127.0.0.1", r))
    try {
      const endpoint = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`
      await resolveModelSource("hf:gated/M-GGUF:Q4_K_M", {
        cacheDir,
        env: { HF_ENDPOINT: endpoint, HF_TOKEN: "hf_secret" }
      })
      expect(seen).toEqual([
        ["api", "Bearer hf_secret"],
        ["hub", "Bearer hf_secret"],
        ["cdn", undefined]
      ])
    } finally {
      hub.close()
      cdn.close()
    }
  })
})

describe("resolveModelSource: offline and unreachable", () => {
  it("offline without the file: unavailable (exit 4), no request, the URL and the pull command in the message", async () => {
    const e = await failure(resolveModelSource(`hf:${REPO}/tiny-Q4_K_M.gguf`, options({ offline: true })))
    expect(e).toBeInstanceOf(DownloadUnavailable)
    expect(exitCodeOf(e)).toBe(4)
    expect((e as Error).message).toContain(`${host.url}/${REPO}/resolve/main/tiny-Q4_K_M.gguf`)
    expect((e as Error).message).toContain(`smurfs pull hf:${REPO}/tiny-Q4_K_M.gguf`)
    expect(host.requests).toEqual([])
  })

  it("SMURFS_OFFLINE and HF_HUB_OFFLINE make it offline", async () => {
    const e = await failure(
      resolveModelSource(`hf:${REPO}:Q4_K_M`, { cacheDir, env: { ...env(), HF_HUB_OFFLINE: "1" } })
    )
    expect((e as DownloadUnavailable).problem).toBe("offline")
    expect((e as Error).message).toContain(`${host.url}/${REPO}`)
    expect(host.requests).toEqual([])
    expect(offlineByEnv({ SMURFS_OFFLINE: "1" })).toBe(true)
    expect(offlineByEnv({ SMURFS_OFFLINE: "0" })).toBe(false)
  })

  it("an unreachable host: unavailable with the URL", async () => {
    const e = await failure(
      resolveModelSource(`hf:${REPO}:Q4_K_M`, { cacheDir, env: { HF_ENDPOINT: "http://127.0.0.1:1" } })
    )
    expect(exitCodeOf(e)).toBe(4)
    expect((e as Error).message).toContain("cannot download http://127.0.0.1:1/api/models/someone/Tiny-GGUF")
    expect((e as Error).message).toContain("smurfs pull")
    expect((e as Error).message).toContain(
      `download its Q4_K_M .gguf file from http://127.0.0.1:1/someone/Tiny-GGUF/tree/main by hand into ${join(cacheDir, "hf", "someone", "Tiny-GGUF")}`
    )
  })
})

describe("resolveModelSource: paths and the cache folder", () => {
  it("a relative path is the user's, against the working directory; a missing one is bad input", async () => {
    writeFileSync(join(cacheDir, "own.gguf"), model)
    expect(await resolveModelSource("own.gguf", options({ cwd: cacheDir }))).toBe(join(cacheDir, "own.gguf"))
    expect(await resolveModelSource("llama:own.gguf", options({ cwd: cacheDir }))).toBe(join(cacheDir, "own.gguf"))
    const e = await failure(resolveModelSource("missing.gguf", options({ cwd: cacheDir })))
    expect(exitCodeOf(e)).toBe(3)
    expect(host.requests).toEqual([])
  })

  it("the status of a source says where its file is and whether it is there, without a request", async () => {
    expect(modelSourceStatus(`hf:${REPO}:Q4_K_M`, options())).toMatchObject({
      present: false,
      url: `${host.url}/${REPO}`
    })
    await resolveModelSource(`hf:${REPO}:Q4_K_M`, options())
    host.requests.length = 0
    expect(modelSourceStatus(`hf:${REPO}:Q4_K_M`, options())).toMatchObject({ present: true })
    expect(host.requests).toEqual([])
  })

  it("the cache folder: SMURFS_MODELS, else the platform's user cache", () => {
    expect(defaultModelsDir({ SMURFS_MODELS: "/m" }, "linux", "/h")).toBe("/m")
    expect(defaultModelsDir({ XDG_CACHE_HOME: "/x" }, "linux", "/h")).toBe(join("/x", "smurfs", "models"))
    expect(defaultModelsDir({}, "linux", "/h")).toBe(join("/h", ".cache", "smurfs", "models"))
    expect(defaultModelsDir({}, "darwin", "/h")).toBe(join("/h", "Library", "Caches", "smurfs", "models"))
    expect(defaultModelsDir({ LOCALAPPDATA: "/l" }, "win32", "/h")).toBe(join("/l", "smurfs", "Cache", "models"))
  })
})

describe("the download lock", () => {
  it("a lock left by a process that is gone is taken over at once", async () => {
    const dir = join(cacheDir, "hf", "someone", "Tiny-GGUF")
    mkdirSync(dir, { recursive: true })
    let dead = 4_194_000
    for (;;) {
      try {
        process.kill(dead, 0)
        dead++
      } catch {
        break
      }
    }
    writeFileSync(
      join(dir, "tiny-Q4_K_M.gguf.lock"),
      JSON.stringify({ pid: dead, host: hostname(), token: "old", since: "" })
    )
    const started = Date.now()
    const path = await resolveModelSource(`hf:${REPO}:Q4_K_M`, options())
    expect(Date.now() - started).toBeLessThan(5000)
    expect(sha256(readFileSync(path))).toBe(sha256(model))
    expect(leftovers()).toEqual(["tiny-Q4_K_M.gguf"])
  })

  it("a lock of another machine that went unrefreshed past its stale age is taken over", async () => {
    const dir = join(cacheDir, "hf", "someone", "Tiny-GGUF")
    mkdirSync(dir, { recursive: true })
    const lock = join(dir, "tiny-Q4_K_M.gguf.lock")
    writeFileSync(lock, JSON.stringify({ pid: 1, host: "elsewhere", token: "old", since: "" }))
    const old = new Date(Date.now() - 120_000)
    utimesSync(lock, old, old)
    const path = await resolveModelSource(`hf:${REPO}:Q4_K_M`, options())
    expect(existsSync(path)).toBe(true)
    expect(existsSync(lock)).toBe(false)
  })
})
