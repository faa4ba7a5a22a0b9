// A real llama.cpp `llama-server` on a free loopback port, for the optional test and the instrument that check smurfs
// against it (issue 33). Nothing builds one: its path comes from SMURFS_LLAMA_SERVER or the caller (llama.cpp's
// tools/server, built locally; docs/performance.md says how). Stopped with SIGKILL, its log kept until then.
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { accessSync, constants } from "node:fs"
import { freePort } from "./free-port.ts"

export interface LlamaServer {
  /** The OpenAI-compatible /v1 URL (smurfs' OPENAI_BASE_URL). */
  readonly baseURL: string
  /** The server's root, where /props, /slots, /metrics and /health answer. */
  readonly root: string
  readonly port: number
  /** Everything it wrote so far (stdout and stderr). */
  readonly log: () => string
  readonly stop: () => Promise<void>
}

export interface LlamaServerOptions {
  /** The llama-server binary. */
  readonly binary: string
  /** The GGUF it serves. */
  readonly model: string
  /** `--parallel`: its slots. */
  readonly slots: number
  /** The context of each slot: the server gets `-c` slots times this (it divides -c among its slots). */
  readonly ctxPerSlot: number
  readonly threads?: number | undefined
  /** More arguments (`--cache-ram 0`, `--no-jinja`, ...). */
  readonly extra?: ReadonlyArray<string> | undefined
}

/** Why `binary` cannot be run here, or undefined when it answers `--version`. */
export const llamaServerProblem = (binary: string | undefined): string | undefined => {
  if (binary === undefined || binary === "")
    return "no llama-server given: build llama.cpp's tools/server locally (docs/performance.md) and pass its path"
  try {
    accessSync(binary, constants.X_OK)
  } catch {
    return `${binary} is not an executable file`
  }
  const version = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 30_000 })
  return version.status === 0 ? undefined : `${binary} --version failed: ${`${version.stderr}`.trim().slice(-300)}`
}

/** What `binary --version` says (its build number and commit). */
export const llamaServerVersion = (binary: string): string => {
  const out = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 30_000 })
  return `${out.stdout}${out.stderr}`
    .split("\n")
    .filter((l) => /^version|^built with/.test(l))
    .join("; ")
}

const stopChild = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once("exit", resolve))
  child.kill("SIGKILL")
  await exited
}

/** Start llama-server on 127.0.0.1; resolves once /health answers 200 (the model loaded). */
export const startLlamaServer = async (options: LlamaServerOptions): Promise<LlamaServer> => {
  const port = await freePort()
  const args = [
    ...["-m", options.model, "--host", "127.0.0.1", "--port", String(port)],
    ...["--parallel", String(options.slots), "-c", String(options.slots * options.ctxPerSlot)],
    ...["--threads", String(options.threads ?? 1), "--metrics", "--slots"],
    ...(options.extra ?? [])
  ]
  // LLAMA_SERVER_SLOTS_DEBUG: /slots shows each slot's last prompt text
  const child = spawn(options.binary, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, LLAMA_SERVER_SLOTS_DEBUG: "1" }
  })
  let log = ""
  const keep = (chunk: Buffer) => {
    // the start's lines and the latest ones: a long run's log is not kept whole
    log = log.length > 256 * 1024 ? log.slice(0, 64 * 1024) + log.slice(-128 * 1024) : log
    log += chunk.toString()
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  let exited: number | string | null | undefined
  child.once("exit", (code, signal) => void (exited = code ?? signal))
  const root = `http://127.0.0.1:${port}`
  const until = Date.now() + 120_000
  for (;;) {
    if (exited !== undefined)
      throw new Error(`llama-server exited (${exited}) before it answered:\n${log.slice(-2000)}`)
    if (Date.now() > until) {
      await stopChild(child)
      throw new Error(`llama-server did not answer /health within 120 s:\n${log.slice(-2000)}`)
    }
    const ok = await fetch(`${root}/health`).then(
      (r) => r.ok,
      () => false
    )
    if (ok) break
    await new Promise((r) => setTimeout(r, 100))
  }
  let stopped: Promise<void> | undefined
  return { baseURL: `${root}/v1`, root, port, log: () => log, stop: () => (stopped ??= stopChild(child)) }
}

/** The server's Prometheus counters (`llamacpp:<name>` from /metrics, with `--metrics`). */
export const llamaServerMetrics = async (server: LlamaServer): Promise<Record<string, number>> => {
  const text = await (await fetch(`${server.root}/metrics`)).text()
  const metrics: Record<string, number> = {}
  for (const line of text.split("\n")) {
    const match = /^llamacpp:(\w+)\s+(\S+)$/.exec(line.trim())
    if (match) metrics[match[1]!] = Number(match[2])
  }
  return metrics
}
