// `smurfs chat` in a real pseudo-terminal (tmux): what a person sees, typing, ask_user, /exit, Ctrl-D and Ctrl-C.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { isKind } from "../../src/trace/events.ts"
import { hasTmux } from "../tmux.ts"

const repo = fileURLToPath(new URL("../../", import.meta.url))

const tmux = (...args: Array<string>) => execFileSync("tmux", args, { encoding: "utf8" })

/** A chat in a detached tmux session; the pane stays open after the process ends so its exit code can be read. */
const startChat = (name: string, script: object, save: string) => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-chat-tty-"))
  const file = join(dir, "script.json")
  writeFileSync(file, JSON.stringify(script))
  const command = `cd ${repo} && NO_COLOR=1 ${process.execPath} bin/smurfs.js chat -m scripted:${file} --save ${save}; echo EXITED:$?; sleep 60`
  tmux("new-session", "-d", "-s", name, "-x", "200", "-y", "60", command)
  const screen = () => tmux("capture-pane", "-p", "-t", name, "-S", "-200")
  const waitFor = async (text: string) => {
    for (let i = 0; i < 150; i++) {
      if (screen().includes(text)) return
      await new Promise((r) => setTimeout(r, 100))
    }
    // capture-pane drops trailing spaces, so prompts are waited for without theirs
    throw new Error(`the screen never showed "${text}":\n${screen()}`)
  }
  const type = (text: string) => tmux("send-keys", "-t", name, "-l", text)
  const key = (k: string) => tmux("send-keys", "-t", name, k)
  const close = () => {
    try {
      tmux("kill-session", "-t", name)
    } catch {
      // already gone
    }
  }
  return { screen, waitFor, type, key, close, dir }
}

// `smurfs chat` runs the default Smurfs loop (it has no --executor): the fused executor's one JSON object per step, and
// short tool responses are the steps' answers (no Answer agent call), so the verifier reads each response itself.
const script = {
  "chat.intent": [
    { intent: "small_talk", reply: "Hello! Ask me about facts, units, money, dates or arithmetic." },
    { intent: "capabilities" },
    { intent: "task", task: "What is the capital of the user's country?" },
    { intent: "task", task: "What is (3 + 4) * 6?" }
  ],
  planner: [{ subtasks: ["What is the capital of the user's country?"] }, { subtasks: ["Compute (3 + 4) * 6"] }],
  "executor.fused": [
    {
      thought: "I need the country; ask the user.",
      tool: "ask_user",
      arguments: { question: "Which country are you in?" }
    },
    { thought: "Look up the capital.", tool: "lookup_fact", arguments: { subject: "France", attribute: "capital" } },
    { thought: "Use the calculator.", tool: "calculator", arguments: { expression: "(3 + 4) * 6" } }
  ],
  verifier: [
    { status: "pending", reason: "the country is not the capital", hint: "look up the capital of France" },
    { status: "solved", reason: "ok" },
    { status: "solved", reason: "ok" }
  ],
  "answerer.final": [{ answer: "The capital of France is Paris." }, { answer: "(3 + 4) * 6 is 42." }]
}

type Event = { type: string; data: Record<string, unknown> }
const rolesOf = (turn: { trajectory: { events: Array<Event> } }) =>
  turn.trajectory.events.filter((e) => isKind(e, "model_call")).map((e) => e.data["role"])

describe.skipIf(!hasTmux)("smurfs chat in a terminal (tmux)", () => {
  it("routes messages, shows the steps, asks the person, remembers turns and ends with /exit", async () => {
    const save = join(mkdtempSync(join(tmpdir(), "smurfs-chat-save-")), "transcript.json")
    const chat = startChat(`smurfs-chat-${process.pid}-a`, script, save)
    try {
      await chat.waitFor("type /exit to end.")
      await chat.waitFor("you>")
      chat.type("hi there")
      chat.key("Enter")
      await chat.waitFor("smurfs> Hello! Ask me about facts")
      chat.type("what can you do?")
      chat.key("Enter")
      await chat.waitFor("- lookup_fact: Look up a fact")
      chat.type("what is the capital of my country?")
      chat.key("Enter")
      // the executor asks; the person answers on the next line
      await chat.waitFor("smurfs asks: Which country are you in?")
      await chat.waitFor("answer>")
      chat.type("France")
      chat.key("Enter")
      await chat.waitFor("smurfs> The capital of France is Paris.")
      chat.type("and (3+4)*6?")
      chat.key("Enter")
      await chat.waitFor("smurfs> (3 + 4) * 6 is 42.")
      chat.type("/exit")
      chat.key("Enter")
      await chat.waitFor("EXITED:0")
      const screen = chat.screen()
      // the step stream of smurfs run, between the question and the reply
      expect(screen).toContain("Subtask 1: What is the capital of the user's country?")
      expect(screen).toContain("asked the person: Which country are you in? -> France")
      expect(screen).toContain('call lookup_fact {"subject":"France","attribute":"capital"}')
      expect(screen).toContain("verifier: solved")
      expect(screen).toContain("bye")
      expect(screen).not.toContain("failed: The model server")
      const transcript = JSON.parse(readFileSync(save, "utf8"))
      expect(transcript.format).toBe("smurfs-chat/1")
      expect(transcript.turns.map((t: { intent: string }) => t.intent)).toEqual([
        "small_talk",
        "capabilities",
        "task",
        "task"
      ])
      expect(
        transcript.turns[2].trajectory.events.some(
          (e: { type: string; data: { reply?: string } }) =>
            e.type === "dev.smurfs.ask_user" && e.data.reply === "France"
        )
      ).toBe(true)
      // the default loop: one request per step for thought, tool and arguments; the short responses ("France",
      // "Paris", "42") are the steps' answers, so no Answer agent call before the verdicts
      expect(rolesOf(transcript.turns[2])).toEqual([
        "planner",
        "executor.fused",
        "verifier",
        "executor.fused",
        "verifier",
        "answerer.final"
      ])
      expect(rolesOf(transcript.turns[3])).toEqual(["planner", "executor.fused", "verifier", "answerer.final"])
    } finally {
      chat.close()
    }
  }, 300_000)

  it("ends cleanly on Ctrl-D and on Ctrl-C", async () => {
    const save = join(mkdtempSync(join(tmpdir(), "smurfs-chat-save-")), "transcript.json")
    const d = startChat(`smurfs-chat-${process.pid}-d`, script, save)
    const c = startChat(`smurfs-chat-${process.pid}-c`, script, `${save}.c`)
    try {
      await d.waitFor("you>")
      d.key("C-d")
      await d.waitFor("EXITED:0")
      expect(d.screen()).toContain("bye")
      await c.waitFor("you>")
      c.key("C-c")
      await c.waitFor("EXITED:130")
      expect(c.screen()).toContain("bye (interrupted)")
      expect(c.screen()).not.toMatch(/Error|at .*\.ts:\d+/)
      // the transcript was written at the start, so even an empty session leaves a valid file
      expect(JSON.parse(readFileSync(save, "utf8")).turns).toEqual([])
    } finally {
      d.close()
      c.close()
    }
  }, 300_000)
})

describe.skipIf(!hasTmux)("Ctrl-C at an ask_user question (tmux)", () => {
  it("cancels that question only: the agents go on without the answer and the chat continues", async () => {
    const save = join(mkdtempSync(join(tmpdir(), "smurfs-chat-save-")), "transcript.json")
    const chat = startChat(
      `smurfs-chat-${process.pid}-q`,
      {
        ...script,
        "chat.intent": [script["chat.intent"][2]!, script["chat.intent"][3]!],
        // the cancelled ask_user call fails, so the same step's next request looks the capital up: no pending verdict
        verifier: [script.verifier[1]!, script.verifier[2]!]
      },
      save
    )
    try {
      await chat.waitFor("you>")
      chat.type("what is the capital of my country?")
      chat.key("Enter")
      await chat.waitFor("smurfs asks: Which country are you in?")
      await chat.waitFor("answer>")
      chat.key("C-c")
      await chat.waitFor("(question cancelled)")
      await chat.waitFor("smurfs> The capital of France is Paris.")
      expect(chat.screen()).not.toContain("EXITED")
      chat.type("and (3+4)*6?")
      chat.key("Enter")
      await chat.waitFor("smurfs> (3 + 4) * 6 is 42.")
      chat.type("/exit")
      chat.key("Enter")
      await chat.waitFor("EXITED:0")
      const transcript = JSON.parse(readFileSync(save, "utf8"))
      const asked = transcript.turns[0].trajectory.events.find(
        (e: { type: string }) => e.type === "dev.smurfs.ask_user"
      )
      expect(asked.data.error).toMatch(/cancelled the question/)
      // the agents went on without the answer: the failed question is excluded, the next call answers the subtask
      const screen = chat.screen()
      expect(screen.indexOf('call lookup_fact {"subject":"France","attribute":"capital"}')).toBeGreaterThan(
        screen.indexOf("(question cancelled)")
      )
      expect(screen).not.toContain("failed: The model server")
      expect(rolesOf(transcript.turns[0])).toEqual([
        "planner",
        "executor.fused",
        "executor.fused",
        "verifier",
        "answerer.final"
      ])
    } finally {
      chat.close()
    }
  }, 300_000)
})

describe.skipIf(hasTmux)("smurfs chat in a terminal", () => {
  it.skip("needs tmux (apt-get install tmux) to drive a pseudo-terminal", () => {})
})
