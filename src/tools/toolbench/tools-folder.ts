// StableToolBench's tools folder (`--stb-tools`): one JSON file a tool, `<Category>/<standardized tool>.json`, holding the
// tool's own description. Their task description and their tool server read a tool's description from it; a query's
// api_list does not carry it. Read at run time from the user's copy, one file per tool, when a task first needs it.
import { existsSync, readdirSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import { z } from "zod"
import { BadPathError } from "../../bad-path.ts"
import { readSourceFile } from "../../text/stabletoolbench-files.ts"
import type { ApiDoc } from "./api-doc.ts"
import { standardizeCategory, stdToolName } from "./names.ts"

/** The environment variable that names a tools folder when --stb-tools is not given. */
export const STB_TOOLS_ENV = "SMURFS_STB_TOOLS"

/** A tools folder that cannot be used as one. */
export class ToolsFolderError extends BadPathError("ToolsFolderError") {
  constructor(args: { readonly path: string; readonly problem: string }) {
    super({
      ...args,
      hint: `Pass --stb-tools (or ${STB_TOOLS_ENV}) StableToolBench's tools folder (the one their server's config.yml names tools_folder: <Category>/<tool>.json files), or leave it out: each tool is then described by its first API's description.`
    })
  }
}

/** The part of a tool's file that is read: its name and its own description. */
const ToolFile = z.looseObject({
  tool_name: z.string(),
  tool_description: z
    .string()
    .nullish()
    .transform((d) => d ?? "")
})

export interface ToolsFolder {
  /** The folder, absolute. */
  readonly dir: string
  /** A tool's own description from its file, or undefined when the folder has no file for it (or one that cannot be read). */
  readonly toolDescription: (doc: Pick<ApiDoc, "category_name" | "tool_name">) => string | undefined
}

/** The folder to read: the flag, else the environment, else none. */
export const stbToolsDirOf = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const dir = flag ?? env[STB_TOOLS_ENV]
  return dir === undefined || dir.trim() === "" ? undefined : resolve(dir)
}

const folders = new Map<string, ToolsFolder>()

/** Whether some category folder of `dir` holds a tool's .json file (the first categories are looked at, not all). */
const holdsToolFiles = (dir: string): boolean => {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .slice(0, 50)
      .some((e) => readdirSync(join(dir, e.name)).some((f) => f.endsWith(".json")))
  } catch {
    return false
  }
}

/** Where `smurfs data pull stabletoolbench --tools` puts their tools folder in a checkout: `server/tools`, beside their server. */
export const PULLED_TOOLS = join("server", "tools")

/** A checkout's pulled tools folder when it has one (the default of --stb-tools with --stb), else undefined. */
export const pulledToolsOf = (stbDir: string | undefined): string | undefined => {
  if (stbDir === undefined) return undefined
  const dir = join(resolve(stbDir), PULLED_TOOLS)
  return existsSync(dir) && statSync(dir).isDirectory() ? dir : undefined
}

/**
 * The tools folder at `dir` (checked to be a directory at once; throws ToolsFolderError). A tool's file is read when a
 * task first names the tool and kept for the process: `<dir>/<category>/<standardized tool>.json`, as StableToolBench's
 * `fetch_api_json` opens it (the category as the query writes it, else as their server standardizes it).
 */
export const toolsFolder = (dir: string): ToolsFolder => {
  const absolute = resolve(dir)
  const known = folders.get(absolute)
  if (known) return known
  if (!existsSync(absolute)) throw new ToolsFolderError({ path: absolute, problem: "not found" })
  if (!statSync(absolute).isDirectory()) throw new ToolsFolderError({ path: absolute, problem: "not a directory" })
  // a folder of another layout (one level too high or too low) would describe no tool, silently
  if (!holdsToolFiles(absolute))
    throw new ToolsFolderError({ path: absolute, problem: "holds no <Category>/<tool>.json file" })
  const read = new Map<string, string | undefined>()
  const readTool = (path: string, std: string): string | undefined => {
    if (!existsSync(path)) return undefined
    try {
      const file = ToolFile.safeParse(JSON.parse(readSourceFile(path, (problem) => new Error(problem))))
      // their white list is keyed by the standardized tool_name inside the file
      return file.success && stdToolName(file.data) === std ? file.data.tool_description : undefined
    } catch {
      return undefined
    }
  }
  const folder: ToolsFolder = {
    dir: absolute,
    toolDescription: (doc) => {
      const std = stdToolName(doc)
      const key = `${doc.category_name}\u0000${std}`
      if (read.has(key)) return read.get(key)
      const found =
        readTool(join(absolute, doc.category_name, `${std}.json`), std) ??
        readTool(join(absolute, standardizeCategory(doc.category_name), `${std}.json`), std)
      read.set(key, found)
      return found
    }
  }
  folders.set(absolute, folder)
  return folder
}

/** Where each tool's description comes from in a run, recorded in run.json (`toolDescriptions`). */
export const toolDescriptionsSource = (dir: string | undefined): string =>
  dir === undefined ? "api-list" : `tools-folder:${resolve(dir)}`

/** A doc with its tool's own description from the folder when the folder has the tool and the doc carries none. */
export const withToolDescription = <D extends ApiDoc>(doc: D, folder: ToolsFolder | undefined): D => {
  if (folder === undefined || typeof doc["tool_description"] === "string") return doc
  const description = folder.toolDescription(doc)
  return description === undefined ? doc : { ...doc, tool_description: description }
}
