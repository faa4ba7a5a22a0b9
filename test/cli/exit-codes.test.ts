// Every command ends with the codes the README's table and its --help name: usage 2, bad input 3, server down 4, interrupted 130, from one exitCodeOf.
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { type AddressInfo, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeFakeRun } from "../../bench/eval/test-fixtures.ts"
import {
  COMMAND_EXIT_CODES,
  EXIT_CODE_OF_KIND,
  EXIT_CODE_TABLE,
  ExitCode,
  renderExitCodeTable
} from "../../src/cli/exit-codes.ts"
import { commandNames } from "../../src/cli/main.ts"
import { MINI_DATA } from "../data.ts"
import { bin, repo, smurfs } from "./spawn.ts"

const README = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8")
const DATA = MINI_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-exit-codes-"))

/** The help of each command, as its module defines it. */
const helpOf = async (command: string): Promise<string> => {
  if (command === "tools search") return (await import("../../src/cli/commands/tools-search.ts")).SEARCH_HELP
  const module = (await import(`../../src/cli/commands/${command}.ts`)) as { COMMAND: { help: string } }
  return module.COMMAND.help
}

/** The codes a help's "exit codes:" paragraph names: each number followed by its meaning. */
const documentedCodes = (help: string): Array<number> => {
  const at = help.indexOf("\nexit codes:")
  if (at < 0) return []
  const paragraph = help.slice(at).split("\n\n")[0]!
  return [...paragraph.matchAll(/(?:^|[:,]\s*|\n)(\d{1,3}) /g)].map((m) => Number(m[1]))
}

describe("the exit-code table", () => {
  it("the README's table is the one exit-codes.ts renders", () => {
    const block = /<!-- exit-codes -->\n([\s\S]*?)\n<!-- \/exit-codes -->/.exec(README)?.[1]
    expect(block, "README.md needs the <!-- exit-codes --> block; paste renderExitCodeTable()'s output there").toBe(
      renderExitCodeTable()
    )
  })

  it("every kind of failure has a code the table explains", () => {
    const explained = EXIT_CODE_TABLE.map((r) => r.code)
    for (const code of Object.values(EXIT_CODE_OF_KIND)) expect(explained).toContain(code)
  })

  it.each([...commandNames(), "tools search"])(
    "smurfs %s --help names the codes exit-codes.ts lists for it, each in the table",
    async (command) => {
      const codes = documentedCodes(await helpOf(command))
      expect(codes, `smurfs ${command} --help`).toEqual(COMMAND_EXIT_CODES[command])
      for (const code of codes) expect(EXIT_CODE_TABLE.map((r) => r.code)).toContain(code)
    }
  )
})

/** A loopback port nobody listens on (it was free a moment ago): connecting is refused. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

/** An HTTP server that takes requests and never answers, counting them. */
const hangingServer = async () => {
  let requests = 0
  const server = createHttpServer(() => void requests++)
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => (server.closeAllConnections(), server.close())
  }
}

let down: string
let run: string
const closers: Array<() => void> = []
beforeAll(async () => {
  down = `http://127.0.0.1:${await closedPort()}`
  run = await writeFakeRun([{ taskId: "1" }])
})
afterAll(() => {
  for (const close of closers) close()
  rmSync(scratch, { recursive: true, force: true })
})

const env = () => ({ OLLAMA_HOST: down, OPENAI_BASE_URL: `${down}/v1`, OPENAI_API_KEY: "test" })

describe("each command's codes, spawned as a user runs it", () => {
  const cases: ReadonlyArray<[string, ReadonlyArray<string>, number, string?]> = [
    ...[...commandNames(), "tools search"].map((c): [string, ReadonlyArray<string>, number] => [
      `${c}: an unknown flag`,
      [...c.split(" "), "--bogus"],
      ExitCode.Usage
    ]),
    [
      "run: a model script that does not exist",
      ["run", "q", "--model", "scripted:/nonexistent/script.json"],
      ExitCode.BadInput
    ],
    [
      "chat: a model script that does not exist",
      ["chat", "--model", "scripted:/nonexistent/script.json"],
      ExitCode.BadInput
    ],
    ["tools: a tools module that does not exist", ["tools", "--tools", "/nonexistent/tools.ts"], ExitCode.BadInput],
    [
      "tools search: a tools module that does not exist",
      ["tools", "search", "q", "--tools", "/nonexistent/tools.ts"],
      ExitCode.BadInput
    ],
    [
      "doctor: a model script that does not exist",
      ["doctor", "--model", "scripted:/nonexistent/script.json"],
      ExitCode.BadInput
    ],
    [
      "bench: a data folder that does not exist",
      ["bench", "--data", "/nonexistent/data", "--model", "ollama:m", "--out", join(scratch, "bad-data")],
      ExitCode.BadInput
    ],
    [
      "eval: a run that does not exist",
      ["eval", "--run", "/nonexistent/run", "--judge", "ollama:m"],
      ExitCode.BadInput
    ],
    ["compare: a folder that does not exist", ["compare", "/nonexistent/run"], ExitCode.BadInput],
    ["results: a folder that does not exist", ["results", "/nonexistent/run"], ExitCode.BadInput],
    ["show: a folder that does not exist", ["show", "/nonexistent/run", "1"], ExitCode.BadInput],
    ["worker: a queue URL that is not Redis's", ["worker", "--queue", "http://127.0.0.1:1"], ExitCode.BadInput],
    [
      "run: nobody answers at the model server",
      ["run", "q", "--model", "ollama:m"],
      ExitCode.ModelUnavailable,
      "Cannot reach Ollama"
    ],
    ["doctor: nobody answers at the model server", ["doctor", "--model", "ollama:m"], ExitCode.ModelUnavailable],
    [
      "bench: nobody answers at the model server",
      [
        "bench",
        "--data",
        DATA,
        "--group",
        "G1_tool",
        "--limit",
        "1",
        "--method",
        "react",
        "--model",
        "ollama:m",
        "--out",
        join(scratch, "down")
      ],
      ExitCode.ModelUnavailable
    ],
    [
      "eval: nobody answers at the judge's server",
      ["eval", "--run", "<run>", "--judge", "ollama:m"],
      ExitCode.ModelUnavailable,
      "Cannot reach Ollama"
    ],
    ["worker: nobody answers at the queue", ["worker", "--queue", "<down-redis>"], ExitCode.ModelUnavailable]
  ]
  it.concurrent.each(cases)(
    "%s",
    async (_label, args, code, says) => {
      const argv = args.map((a) => (a === "<run>" ? run : a === "<down-redis>" ? down.replace("http:", "redis:") : a))
      const input = argv[0] === "chat" ? "hello\n" : undefined
      const result = await smurfsWithInput(argv, input)
      expect(result.code, `${argv.join(" ")}\n${result.stderr}`).toBe(code)
      if (says) expect(result.stderr).toContain(says)
      expect(result.stderr).not.toContain("This is a bug")
    },
    60_000
  )

  it.concurrent.each<[string, ReadonlyArray<string>]>([
    ["run", ["run", "q", "--model", "<hanging>"]],
    ["chat", ["chat", "--model", "<hanging>"]],
    [
      "bench",
      [
        "bench",
        "--data",
        DATA,
        "--group",
        "G1_tool",
        "--limit",
        "1",
        "--method",
        "react",
        "--model",
        "<hanging>",
        "--out",
        join(scratch, "interrupted")
      ]
    ],
    ["eval", ["eval", "--run", "<run>", "--judge", "<hanging>"]]
  ])(
    "%s: SIGINT while the model server is asked ends with 130",
    async (command, args) => {
      // a server of its own: the first request it takes is this command's
      const hanging = await hangingServer()
      closers.push(hanging.close)
      const argv = args.map((a) => (a === "<hanging>" ? "openai:m" : a === "<run>" ? run : a))
      const child = spawn(process.execPath, [bin, ...argv], {
        cwd: repo,
        env: { ...process.env, NO_COLOR: "1", OPENAI_BASE_URL: `${hanging.url}/v1`, OPENAI_API_KEY: "test" }
      })
      let stderr = ""
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
      if (command === "chat") child.stdin.write("hello\n")
      const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
      while (hanging.requests() === 0) await new Promise((r) => setTimeout(r, 20))
      child.kill("SIGINT")
      expect(await exited, stderr).toBe(ExitCode.Interrupted)
    },
    60_000
  )
})

/** `smurfs <args>` with `input` on its stdin (then closed). */
const smurfsWithInput = (args: ReadonlyArray<string>, input: string | undefined) => {
  if (input === undefined) return smurfs(args, { env: env() })
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: repo,
      env: { ...process.env, NO_COLOR: "1", ...env() }
    })
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.stdin.end(input)
    child.on("exit", (code) => resolve({ code, stderr }))
  })
}
