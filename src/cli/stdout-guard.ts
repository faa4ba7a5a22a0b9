// While user code runs (tool modules load and run inside the CLI), whatever it writes to stdout goes to
// stderr, so the command's own output (`run --json`, the final answer) stays the only thing on stdout.

/** Route process.stdout writes (console.log included) to stderr until the returned function is called. */
export const routeStdoutToStderr = (): (() => void) => {
  const realWrite = process.stdout.write
  const toStderr = ((...args: Parameters<typeof process.stdout.write>) =>
    (process.stderr.write as (...a: Array<unknown>) => boolean)(...args)) as typeof process.stdout.write
  process.stdout.write = toStderr
  return () => {
    if (process.stdout.write === toStderr) process.stdout.write = realWrite
  }
}
