// The package version, read once from package.json.
import { readFileSync } from "node:fs"
import { packageRoot } from "./package-root.ts"

export const version: string = (
  JSON.parse(readFileSync(new URL("package.json", packageRoot), "utf8")) as { version: string }
).version
