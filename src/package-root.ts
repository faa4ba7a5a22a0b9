// The package's root folder (where package.json and prompts/ live), from source or from a dist/ build.
import { existsSync } from "node:fs"

const find = (): URL => {
  for (let dir = new URL("./", import.meta.url); ; dir = new URL("../", dir)) {
    if (existsSync(new URL("package.json", dir)) && existsSync(new URL("prompts/", dir))) return dir
    if (dir.pathname === "/") throw new Error("smurfs: cannot find its package folder (package.json beside prompts/)")
  }
}

export const packageRoot: URL = find()
