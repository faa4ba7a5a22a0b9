// The command line of a perf instrument: node's parseArgs with -h/--help, the usage on a bad option, the data folder.
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { type ParseArgsOptionsConfig, parseArgs } from "node:util"

const HELP = { help: { type: "boolean", short: "h" } } as const

type Values<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ args: Array<string>; options: O & typeof HELP }>
>["values"]

/**
 * The values of `options` (and `-h`/`--help`) in `argv`, or the exit code once `usage` is printed: 0 for `--help`, 2
 * after the error for an option that is unknown or lacks its value.
 */
export const parsePerfArgs = <O extends ParseArgsOptionsConfig>(
  argv: ReadonlyArray<string>,
  options: O,
  usage: string
): Values<O> | number => {
  let values: Values<O>
  try {
    values = parseArgs({ args: [...argv], options: { ...options, ...HELP } }).values as Values<O>
  } catch (e) {
    console.error(`${(e as Error).message}\n${usage}`)
    return 2
  }
  if ((values as { help?: boolean }).help === true) {
    console.log(usage)
    return 0
  }
  return values
}

/** The ToolBench data folder: `--data`, else ../shared/toolbench beside the repository. */
export const perfDataDir = (data: string | undefined): string =>
  resolve(data ?? fileURLToPath(new URL("../../../shared/toolbench", import.meta.url)))
