// Child processes of a process, read from Linux /proc: how tests and benchmarks see a leaked server.
import { readdirSync, readFileSync } from "node:fs"

export interface ChildProcessInfo {
  readonly pid: number
  /** The command line, arguments joined by spaces. */
  readonly command: string
}

/** The live (not zombie) children of `parent` (this process by default); empty where /proc does not exist. */
export const childProcesses = (parent: number = process.pid): Array<ChildProcessInfo> => {
  let entries: Array<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return []
  }
  const children: Array<ChildProcessInfo> = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      // the command name in parentheses may hold spaces: the fields after the last ")" are state, ppid, ...
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(ppid) !== parent || state === "Z") continue
      children.push({
        pid: Number(entry),
        command: readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim()
      })
    } catch {
      // the process ended while we looked
    }
  }
  return children
}
