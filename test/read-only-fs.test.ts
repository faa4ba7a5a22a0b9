// A run directory on a read-only file system: the message says read-only (EROFS) with the path, never "disk full".
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { ExitCode } from "../src/cli/exit-codes.ts"
import { writeProblem } from "../src/trace/fs-problem.ts"
import { MINI_DATA } from "./data.ts"

const REPO = fileURLToPath(new URL("../", import.meta.url))
const DATA = MINI_DATA.path
const SCRIPT = join(REPO, "examples", "bench-script.json")
const scratch = mkdtempSync(join(tmpdir(), "smurfs-rofs-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A read-only tmpfs needs a mount namespace: `unshare -rm` (user namespaces) where the kernel allows it. */
const canMountReadOnly = (() => {
  const probe = join(scratch, "probe")
  mkdirSync(probe)
  return (
    spawnSync("unshare", ["-rm", "sh", "-c", `mount -t tmpfs -o ro tmpfs ${probe} && ! touch ${probe}/x 2>/dev/null`])
      .status === 0
  )
})()

describe("a read-only file system", () => {
  it("each write errno gets its own cause and advice", () => {
    const at = (code: string) => writeProblem(Object.assign(new Error(`${code}: failed`), { code }))
    expect(at("EROFS").problem).toContain("read-only (EROFS)")
    expect(at("ENOSPC").problem).toContain("disk is full (ENOSPC)")
    expect(at("EACCES").problem).toContain("permission denied")
    expect(at("EIO").problem).not.toMatch(/read-only|full/)
  })

  it.skipIf(!canMountReadOnly)(
    "smurfs bench --out on a read-only mount: exit 3, 'read-only (EROFS)' and the path (skipped where `unshare -rm` cannot mount)",
    () => {
      const ro = join(scratch, "ro")
      mkdirSync(ro)
      const out = join(ro, "run")
      const command = `mount -t tmpfs -o ro tmpfs ${ro} && exec "${process.execPath}" bin/smurfs.js bench --data "${DATA}" --group G1_instruction --ids 1073 --method react --model "scripted:${SCRIPT}" --out "${out}"`
      const r = spawnSync("unshare", ["-rm", "sh", "-c", command], {
        cwd: REPO,
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1" }
      })
      expect(r.status, r.stderr).toBe(ExitCode.BadInput)
      expect(r.stderr).toContain(`${out}: cannot write: the file system is read-only (EROFS)`)
      expect(r.stderr).not.toMatch(/disk is full|not full/)
    }
  )
})
