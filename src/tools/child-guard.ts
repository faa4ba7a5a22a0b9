// Child processes a tool starts must not keep the CLI alive once its work is done: while the guard is on,
// every child process started in this process is noted; when the command ends, those still running are
// stopped and let go, each named in a warning.
import { ChildProcess } from "node:child_process"

/** The instance method behind every way of starting a child (Node's own, left out of its types). */
type Spawn = (this: ChildProcess, options: unknown) => unknown
type Spawning = { spawn: Spawn }

/** What a stray child is told as: its command line, cut. */
const commandOf = (child: ChildProcess): string => {
  const line = child.spawnargs.join(" ")
  return line.length > 120 ? `${line.slice(0, 117)}...` : line
}

/**
 * Note every child process started from now on (spawn, exec, execFile and fork all go through
 * `ChildProcess.prototype.spawn`). `end(warn)` stops noting, then sends SIGTERM to those still running
 * and unrefs them and their pipes, so that the process exits now rather than when they do. A child
 * already being killed by its owner (an MCP server the SDK is closing) is let go without a warning.
 */
export const watchToolChildren = (): { readonly end: (warn: (line: string) => void) => void } => {
  const started = new Set<ChildProcess>()
  const proto = ChildProcess.prototype as unknown as Spawning
  const realSpawn = proto.spawn
  const noting: Spawn = function (this: ChildProcess, options: unknown) {
    const result = realSpawn.call(this, options)
    started.add(this)
    this.once("exit", () => started.delete(this))
    return result
  }
  proto.spawn = noting
  return {
    end: (warn) => {
      if (proto.spawn === noting) proto.spawn = realSpawn
      for (const child of started) {
        if (child.exitCode !== null || child.signalCode !== null) continue
        if (!child.killed) {
          warn(
            `smurfs: a tool's child process (pid ${child.pid ?? "?"}: ${commandOf(child)}) was still running when the command finished; ` +
              "it was stopped (SIGTERM) so that the command could exit. A tool should wait for the processes it starts, or end them."
          )
          child.kill("SIGTERM")
        }
        child.unref()
        for (const stream of [child.stdin, child.stdout, child.stderr])
          (stream as { unref?: () => void } | null)?.unref?.()
      }
      started.clear()
    }
  }
}
