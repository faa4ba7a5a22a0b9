// The CLI keeps Node's compile cache in the temp folder, and runs the same where that folder cannot take it.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { version } from "../../src/version.ts"
import { smurfs } from "./spawn.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-compile-cache-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
/** The temp folder the CLI sees; Node's own compile cache settings are left out so that only bin/smurfs.js acts. */
const withTmp = (dir: string) => ({
  env: { TMPDIR: dir, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined }
})

describe("the CLI's compile cache", () => {
  it("is written to node-compile-cache in the temp folder", async () => {
    const tmp = join(scratch, "tmp")
    mkdirSync(tmp)
    const result = await smurfs(["--version"], withTmp(tmp))
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: "" })
    expect(existsSync(join(tmp, "node-compile-cache"))).toBe(true)
  })

  it("is skipped without a word when the temp folder is missing or is a file", async () => {
    const file = join(scratch, "a-file")
    writeFileSync(file, "")
    for (const dir of [join(scratch, "missing"), file]) {
      const result = await smurfs(["--version"], withTmp(dir))
      expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: "" })
      expect(existsSync(join(scratch, "missing"))).toBe(false)
    }
  })
})
