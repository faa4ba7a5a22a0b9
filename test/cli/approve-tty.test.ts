// `smurfs run` at a real terminal (tmux) with an MCP tool that may change things: it asks before the call (the
// default at a terminal); "n" refuses it (the agents see a failed call and go on), "y" makes it.
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { noteCopyFolder } from "../note-copy.ts"
import { hasTmux } from "../tmux.ts"

const repo = fileURLToPath(new URL("../../", import.meta.url))
const tmux = (...args: Array<string>) => execFileSync("tmux", args, { encoding: "utf8" })
const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** `smurfs run` (or `chat`) in a detached tmux session whose scripted model writes a copy of a note, then reads the note. */
const startRun = (name: string, command: "run" | "chat" = "run") => {
  const { dir, model } = noteCopyFolder("smurfs-approve-tty-")
  dirs.push(dir)
  const line = `cd ${repo} && NO_COLOR=1 ${process.execPath} bin/smurfs.js ${command === "run" ? '"run" "Copy the note"' : "chat"} -m scripted:${model} -t "mcp:node_modules/.bin/mcp-server-filesystem ${dir}"; echo EXITED:$?; sleep 60`
  tmux("new-session", "-d", "-s", name, "-x", "200", "-y", "60", line)
  const screen = () => tmux("capture-pane", "-p", "-t", name, "-S", "-200")
  const waitFor = async (text: string) => {
    for (let i = 0; i < 600; i++) {
      if (screen().includes(text)) return
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error(`the screen never showed "${text}":\n${screen()}`)
  }
  const answer = (text: string) => {
    tmux("send-keys", "-t", name, "-l", text)
    tmux("send-keys", "-t", name, "Enter")
  }
  const close = () => {
    try {
      tmux("kill-session", "-t", name)
    } catch {
      // already gone
    }
  }
  return { dir, screen, waitFor, answer, close }
}

describe.skipIf(!hasTmux)("smurfs run asks before an MCP call that may change things (tmux)", () => {
  it.each([
    ["n", false],
    ["y", true]
  ])(
    "answering %s",
    async (reply, written) => {
      const run = startRun(`smurfs-approve-${process.pid}-${reply}`)
      try {
        await run.waitFor("[y]es / [a]lways for write_file / [n]o >")
        expect(run.screen()).toContain("? Allow the call write_file(")
        expect(run.screen()).toContain("It may change things: its server marks it destructive.")
        run.answer(reply)
        await run.waitFor("EXITED:")
        expect(run.screen()).toContain("EXITED:0")
        // the read-only tool was never asked about
        expect(run.screen()).not.toContain("Allow the call read_text_file")
        expect(existsSync(join(run.dir, "copy.txt"))).toBe(written)
        if (written) expect(readFileSync(join(run.dir, "copy.txt"), "utf8")).toBe("copied")
        else expect(run.screen()).toMatch(/not approved \(the user said no/)
      } finally {
        run.close()
      }
    },
    120_000
  )

  it("in chat the person answers the question on the next line they type", async () => {
    const chat = startRun(`smurfs-approve-${process.pid}-chat`, "chat")
    try {
      await chat.waitFor("you>")
      chat.answer("copy the note please")
      await chat.waitFor("[y]es / [a]lways for write_file / [n]o >")
      await chat.waitFor("allow>")
      chat.answer("n")
      await chat.waitFor("smurfs> ")
      expect(existsSync(join(chat.dir, "copy.txt"))).toBe(false)
      expect(chat.screen()).toMatch(/not approved \(the user said no/)
      chat.answer("/exit")
      await chat.waitFor("EXITED:0")
    } finally {
      chat.close()
    }
  }, 120_000)
})
