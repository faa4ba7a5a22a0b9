// Every command's options table, loaded on demand: for shell completion and for the settings file's check of its keys.
import type { ParseArgsOptionsConfig } from "node:util"

/** A command as completion and the settings check see it: its name (`tools search` for the subcommand), summary, options. */
export interface CommandSpecEntry {
  readonly name: string
  readonly summary: string
  readonly options: ParseArgsOptionsConfig
}

/** Every command's options (this loads every command's module: call it only for completion or an unknown setting). */
export const commandSpecs = async (): Promise<Array<CommandSpecEntry>> => {
  const { commandTable } = await import("./main.ts")
  const entries = await Promise.all(
    commandTable().map(async ({ name, summary, load }) => {
      const module = await load()
      return { name, summary, options: (module.COMMAND?.options ?? {}) as ParseArgsOptionsConfig }
    })
  )
  const search = await import("./commands/tools-search.ts")
  return [
    ...entries,
    { name: "tools search", summary: "rank a library's tools for a query", options: search.COMMAND.options }
  ]
}
