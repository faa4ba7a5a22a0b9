// `smurfs chat --save` to a file it cannot write: a warning that says what to do, and the conversation goes on.
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { ExitCode } from "../../src/cli/exit-codes.ts"

const REPO = fileURLToPath(new URL("../../", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "smurfs-chat-save-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("smurfs chat --save on an unwritable path", () => {
  it("warns with the path and the cause, keeps the conversation going and ends normally", () => {
    const script = join(scratch, "script.json")
    writeFileSync(script, "{}")
    const blocker = join(scratch, "not-a-directory")
    writeFileSync(blocker, "")
    const save = join(blocker, "transcript.json")
    const r = spawnSync(process.execPath, ["bin/smurfs.js", "chat", "-m", `scripted:${script}`, "--save", save], {
      cwd: REPO,
      input: "what can you do?\n/exit\n",
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" }
    })
    expect(r.status, r.stderr).toBe(ExitCode.Ok)
    expect(r.stderr).toContain(
      `smurfs chat: the transcript was not saved: ${save}: cannot write: a file stands where a directory should be`
    )
    expect(r.stderr).toContain("another --save file")
    // one warning per attempt: at the start and after the turn; the session itself went on to the end
    expect(r.stderr.match(/the transcript was not saved/g)).toHaveLength(2)
    expect(r.stdout).toContain("bye")
  })
})
