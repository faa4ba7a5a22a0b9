// Once per test run (vitest's globalSetup, both projects): the temporary folder of everything the run makes. Test files
// and the programs they start make their folders in the OS temp folder; here that is one folder per run (TMPDIR, which
// os.tmpdir() reads and the forked workers and spawned processes inherit), removed when the run ends, so that a run
// leaves nothing behind in /tmp, however a test file cleans up after itself.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export default function setup(): () => void {
  const outer = process.env["TMPDIR"]
  const dir = mkdtempSync(join(tmpdir(), "smurfs-test-run-"))
  process.env["TMPDIR"] = dir
  return () => {
    if (outer === undefined) delete process.env["TMPDIR"]
    else process.env["TMPDIR"] = outer
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
  }
}
