// Test helper: a tiny generated GGUF model (scripts/tiny-gguf.ts), written once per seed into a temporary folder
// of the test file that asks for it and removed with it.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { writeTinyGguf } from "../../scripts/tiny-gguf.ts"

const written = new Map<number, string>()
let folder: string | undefined

/** The path of the tiny model of `seed`, generated on first use. */
export const tinyModelFile = (seed = 1): string => {
  let path = written.get(seed)
  if (path === undefined) {
    folder ??= mkdtempSync(join(tmpdir(), "smurfs-tiny-gguf-"))
    path = writeTinyGguf(join(folder, `tiny-${seed}.gguf`), { seed })
    written.set(seed, path)
  }
  return path
}

/** Remove the generated models (a test file's afterAll). */
export const removeTinyModels = (): void => {
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true })
  folder = undefined
  written.clear()
}
