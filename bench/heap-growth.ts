// The V8 heap setting of the long-running commands (`smurfs bench`, `smurfs worker`): a full collection sooner.
import { setFlagsFromString } from "node:v8"

/** How far the old generation may grow past what survived the last full collection before the next one, in percent. */
export const HEAP_GROWING_PERCENT = 30

const FLAG = /^--heap[-_]growing[-_]percent\b/

/**
 * V8 lets a busy process's old generation grow to up to four times what survived the last full collection
 * (it judges collections cheap while the program mostly waits), so a bench at concurrency 256 whose live
 * objects take about 120 MB peaked near 500 MB of resident memory. Growing by 30% instead held it under
 * 300 MB at the same CPU time (50%: 10 MB more; `npm run bench:memory`, docs/performance.md). V8 reads the
 * flag each time it sets the next limit, so setting it once the process runs takes effect; a value given
 * to node itself (`node --heap-growing-percent=<n> bin/smurfs.js`) is left as it is.
 */
export const boundHeapGrowth = (): void => {
  const flag = heapGrowthFlag(process.execArgv)
  if (flag !== undefined) setFlagsFromString(flag)
}

/** The V8 flag `boundHeapGrowth` sets, or undefined when node was given one (NODE_OPTIONS may not carry it). */
export const heapGrowthFlag = (execArgv: ReadonlyArray<string>): string | undefined =>
  execArgv.some((a) => FLAG.test(a)) ? undefined : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`
