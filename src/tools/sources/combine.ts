// Several tool sources as one library: a name that two sources share is prefixed with its source's name.
import { makeToolLibrary } from "../library.ts"
import type { Tool, ToolLibrary } from "../tool.ts"
import { MAX_TOOL_NAME, modelSafeName, uniqueName } from "./tool-names.ts"

/** A library with the short name its tools are prefixed with when their names clash. */
export interface NamedLibrary {
  readonly prefix: string
  readonly library: ToolLibrary
}

/**
 * One library from several. Names unique across sources stay as they are, so a single source's tools
 * keep their own names; a clashing name becomes `<prefix>_<name>` in every source that has it (prefixes
 * that repeat get `_2`, `_3`...). The renamed tool keeps its meta; only the name the model sees changes.
 */
export const combineLibraries = (sources: ReadonlyArray<NamedLibrary>): ToolLibrary => {
  if (sources.length === 1) return sources[0]!.library
  const owners = new Map<string, number>()
  for (const { library } of sources)
    for (const tool of library.tools) owners.set(tool.name, (owners.get(tool.name) ?? 0) + 1)
  const prefixes = new Set<string>()
  const taken = new Set<string>()
  const tools: Array<Tool> = []
  for (const { prefix, library } of sources) {
    const unique = uniqueName(modelSafeName(prefix), prefixes)
    prefixes.add(unique)
    for (const tool of library.tools) {
      const wanted = (owners.get(tool.name) ?? 0) > 1 ? `${unique}_${tool.name}`.slice(0, MAX_TOOL_NAME) : tool.name
      const name = uniqueName(wanted, taken)
      taken.add(name)
      tools.push(name === tool.name ? tool : { ...tool, name })
    }
  }
  return makeToolLibrary(sources.map((s) => s.library.name).join("+"), tools)
}
