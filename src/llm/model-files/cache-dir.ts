// Where fetched models live: $SMURFS_MODELS, else the user's cache folder of the platform.
import { homedir } from "node:os"
import { join } from "node:path"

/** The environment variable that names the model cache folder. */
export const MODELS_ENV = "SMURFS_MODELS"

/**
 * The model cache folder: `$SMURFS_MODELS`, else `$XDG_CACHE_HOME/smurfs/models` (`~/.cache/smurfs/models`) on
 * Linux, `~/Library/Caches/smurfs/models` on macOS, `%LOCALAPPDATA%\smurfs\Cache\models` on Windows.
 */
export const defaultModelsDir = (
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir()
): string => {
  const own = env[MODELS_ENV]
  if (own) return own
  if (platform === "darwin") return join(home, "Library", "Caches", "smurfs", "models")
  if (platform === "win32")
    return join(env["LOCALAPPDATA"] || join(home, "AppData", "Local"), "smurfs", "Cache", "models")
  return join(env["XDG_CACHE_HOME"] || join(home, ".cache"), "smurfs", "models")
}

/** Offline by the environment: `SMURFS_OFFLINE=1` (ours) or `HF_HUB_OFFLINE=1` (huggingface_hub's). */
export const offlineByEnv = (env: NodeJS.ProcessEnv = process.env): boolean =>
  ["SMURFS_OFFLINE", "HF_HUB_OFFLINE"].some((k) => {
    const v = (env[k] ?? "").trim().toLowerCase()
    return v !== "" && v !== "0" && v !== "false" && v !== "no"
  })
