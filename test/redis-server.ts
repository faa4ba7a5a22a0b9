// A real Debian redis-server on a free loopback port, for the queue tests; stopped (and its files removed) after.
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "./free-port.ts"

export interface RedisServer {
  readonly url: string
  readonly port: number
  readonly stop: () => Promise<void>
}

/** Why the queue tests cannot run here, or undefined when redis-server is installed. */
export const redisUnavailable = (): string | undefined =>
  spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0
    ? undefined
    : "redis-server is not installed (apt-get install redis-server; .ci/run installs it)"

/** Start redis-server on 127.0.0.1 with no persistence (on `port`, to restart one empty); resolves once it accepts connections. */
export const startRedis = async (port?: number): Promise<RedisServer> => {
  port ??= await freePort()
  const dir = mkdtempSync(join(tmpdir(), "smurfs-redis-"))
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: ["ignore", "pipe", "pipe"] }
  )
  await new Promise<void>((resolve, reject) => {
    let out = ""
    const timer = setTimeout(() => reject(new Error(`redis-server did not start on port ${port}: ${out}`)), 10_000)
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes("Ready to accept connections")) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited with ${code}: ${out}`))
    })
  })
  // once: a killed child keeps exitCode null (its signalCode is set), so a second stop must not wait for another exit
  let stopped: Promise<void> | undefined
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGKILL")
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    stop: () => (stopped ??= stop())
  }
}
