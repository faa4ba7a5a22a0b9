// Ctrl-C or SIGTERM while a command is still loading: held, then handed to the command once it listens.

const SIGNALS = ["SIGINT", "SIGTERM"] as const

/**
 * Hold SIGINT and SIGTERM until `release()`. Loading a command (effect, the model clients...) takes a
 * second or more; a signal in that window would otherwise end the process silently, without the
 * "finished tasks are kept, rerun with --resume" hint a command prints once it listens. `release()`
 * removes the holders and sends a held signal again: a command that listens by then stops cleanly,
 * any other ends as the signal always did.
 */
export const holdSignals = () => {
  let held: NodeJS.Signals | undefined
  const hold = (signal: NodeJS.Signals) => void (held ??= signal)
  for (const s of SIGNALS) process.on(s, hold)
  return {
    release: () => {
      for (const s of SIGNALS) process.off(s, hold)
      if (held) process.kill(process.pid, held)
    }
  }
}
