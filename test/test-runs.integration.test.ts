// The test suite as a fresh clone runs it: a run leaves nothing in the temp folder, and an older Node is told the
// version it needs before anything runs.
import { execFile, execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { NEEDED_NODE, nodeVersionProblem } from "./node-version.ts"

const REPO = fileURLToPath(new URL("..", import.meta.url))
const VITEST = join(REPO, "node_modules", "vitest", "vitest.mjs")
const scratch = mkdtempSync(join(tmpdir(), "smurfs-test-runs-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const vitest = (node: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number; output: string }>((resolve) =>
    execFile(node, [VITEST, ...args], { cwd: REPO, env, encoding: "utf8" }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` })
    )
  )

/** An installed Node older than the tests need (the machine's system Node, say), if there is one. */
const oldNode = ["/usr/bin/node", "/usr/local/bin/node"].find((path) => {
  if (!existsSync(path)) return false
  const version = execFileSync(path, ["--version"], { encoding: "utf8" }).trim().replace(/^v/, "")
  return nodeVersionProblem(version) !== undefined
})

describe("test runs", () => {
  it("leave nothing in the temp folder, though a test file makes folders there and keeps them", async () => {
    // chain.test.ts makes its folders with mkdtempSync and never removes them
    const temp = mkdtempSync(join(scratch, "tmp-"))
    const { code, output } = await vitest(process.execPath, ["run", "src/tools/environments/chain.test.ts"], {
      ...process.env,
      NO_COLOR: "1",
      TMPDIR: temp
    })
    expect(code, output).toBe(0)
    expect(output).toMatch(/Tests\s+\d+ passed/)
    expect(readdirSync(temp)).toEqual([])
  })

  it("says which Node they need, on an older one", () => {
    expect(nodeVersionProblem("20.20.2")).toContain(`smurfs needs Node.js ${NEEDED_NODE} or newer`)
    expect(nodeVersionProblem("22.17.1")).toContain("found 22.17.1")
    expect(nodeVersionProblem("22.18.0")).toBeUndefined()
    expect(nodeVersionProblem("24.1.0")).toBeUndefined()
  })

  it.skipIf(oldNode === undefined)(
    `stop at once on an older Node with the version they need${oldNode ? "" : " (skipped: no older Node installed here)"}`,
    async () => {
      const { code, output } = await vitest(oldNode!, ["run", "--project", "unit"], process.env)
      expect(code).toBe(78)
      expect(output).toContain(`smurfs needs Node.js ${NEEDED_NODE} or newer to run its tests`)
    }
  )
})
