// Which tools each method of a run sees: its own `methodToolsets` entry, else the profile's (under `reference`
// Smurfs gets the task's relevant APIs as the authors' inference.py builds them, the baselines the whole api_list),
// else the run's `toolset`.
import { PROFILE_SETTINGS } from "../src/agents/profile.ts"
import { toolsetLabel } from "../src/tools/retrieval/toolset.ts"
import { type BenchSettings, toolsetOf } from "./settings.ts"

type Listed = "all" | "relevant"

/**
 * The listed toolset of `method` (all or relevant), or undefined when the run retrieves its tools. The profile's
 * choice applies only when the run asks for the default whole list: `--toolset relevant` gives every method
 * the relevant APIs, `--method-toolset smurfs=all` gives Smurfs the whole list under `reference`.
 */
export const methodToolsetOf = (
  settings: Pick<BenchSettings, "toolset" | "methodToolsets" | "profile">,
  method: string
): Listed | undefined => {
  const own = (settings.methodToolsets as Readonly<Record<string, Listed | undefined>>)[method]
  if (own !== undefined) return own
  const toolset = toolsetOf(settings)
  if (toolset.kind === "retrieve") return undefined
  if (toolset.kind === "all") return PROFILE_SETTINGS[settings.profile].toolsets[method] ?? "all"
  return toolset.kind
}

/** Each method's toolset as it ran, for run.json (`retrieve:<k>` when the run retrieves). */
export const methodToolsetsOf = (
  settings: Pick<BenchSettings, "toolset" | "methodToolsets" | "profile" | "methods">
): Record<string, string> =>
  Object.fromEntries(
    settings.methods.map((m) => [m, methodToolsetOf(settings, m) ?? toolsetLabel(toolsetOf(settings))])
  )
