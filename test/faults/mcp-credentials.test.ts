// The credential sent to an MCP server (SMURFS_MCP_AUTHORIZATION, or the variable #auth=VAR names) is
// never shown, stored, exported or sent to a model, even when the server echoes it in its tool list and results.
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bin, repo, smurfs } from "../cli/spawn.ts"
import { type FakeMcpHttp, startFakeMcpHttp } from "../fake-servers/mcp.ts"
import { type FakeOtlp, startFakeOtlp } from "../fake-servers/otlp.ts"
import { type EchoServer, startEchoServer } from "./echo-server.ts"

/** No digits, no key shape: only knowing the value can redact it. */
const TOKEN = "mcpcred-QWERTYuiopASDFghjk"
const CREDENTIAL = `Token ${TOKEN}`
const LEAKS = [TOKEN, "QWERTYuiop", "ASDFghjk"]

let mcp: FakeMcpHttp
let model: EchoServer
let otlp: FakeOtlp
const scratch = mkdtempSync(join(tmpdir(), "smurfs-mcp-credentials-"))

beforeAll(async () => {
  mcp = await startFakeMcpHttp({ echoAuthorization: true })
  model = await startEchoServer()
  otlp = await startFakeOtlp()
})
afterAll(async () => {
  await mcp.close()
  await model.close()
  await otlp.close()
  rmSync(scratch, { recursive: true, force: true })
})

const expectClean = (label: string, text: string) => {
  for (const leak of LEAKS) expect(text.includes(leak), `${label} contains "${leak}"`).toBe(false)
}

describe("an MCP server that echoes its Authorization header", () => {
  it.each([
    ["SMURFS_MCP_AUTHORIZATION, run --json", "", "SMURFS_MCP_AUTHORIZATION", ["--json"]],
    ["#auth=TEAM_MCP_CRED, the live view and the final answer", "#auth=TEAM_MCP_CRED", "TEAM_MCP_CRED", []]
  ] as const)(
    "%s: the value is in no output, span or model request",
    async (_label, fragment, variable, extra) => {
      const sentBefore = model.bodies.length
      otlp.requests.length = 0
      const r = await smurfs(
        ["run", "Who am I?", "--model", "openai:test-model", "--tools", `mcp+${mcp.url}${fragment}`, ...extra],
        {
          env: {
            [variable]: CREDENTIAL,
            OPENAI_BASE_URL: model.baseURL,
            OPENAI_API_KEY: "none",
            OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint
          }
        }
      )
      expect(r.code, r.stderr).toBe(0)
      expect(mcp.authorizations).toContain(CREDENTIAL) // the credential was really in play
      const requests = model.bodies.slice(sentBefore)
      expect(requests.some((b) => b.includes("whoami"))).toBe(true) // the tool was offered...
      expect(requests.some((b) => b.includes("you are the holder of"))).toBe(true) // ...called, and its result sent on
      // the default loop ran: its one executor request per step (thought, tool and arguments), whose task prefix lists
      // the tools' parameters (whoami's describes itself with the token)
      const asked = requests
        .filter((b) => b.startsWith("{")) // a GET /models has no body
        .map((b) => Object.keys(JSON.parse(b).response_format?.json_schema?.schema?.properties ?? {}).join(","))
      expect(asked).toContain("thought,tool,arguments")
      for (const [i, body] of requests.entries()) expectClean(`model request ${i}`, body)
      expectClean("stdout", r.stdout)
      expectClean("stderr", r.stderr)
      expect(otlp.requests.length).toBeGreaterThan(0)
      for (const [i, { body }] of otlp.requests.entries()) expectClean(`OTLP export ${i}`, body)
    },
    60_000
  )

  it("smurfs tools: the tool list shows the description without the value", async () => {
    const r = await smurfs(["tools", "--tools", `mcp+${mcp.url}`], { env: { SMURFS_MCP_AUTHORIZATION: CREDENTIAL } })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("whoami")
    expectClean("stdout", r.stdout)
    expectClean("stderr", r.stderr)
  }, 30_000)

  it("smurfs chat --save: neither the conversation nor the transcript holds the value", async () => {
    const save = join(scratch, "chat.json")
    const sentBefore = model.bodies.length
    // the servers live in this process: the chat runs beside it, not blocking it (spawnSync would)
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [bin, "chat", "--model", "openai:test-model", "--tools", `mcp+${mcp.url}#auth=TEAM_MCP_CRED`, "--save", save],
        {
          cwd: repo,
          timeout: 60_000,
          env: {
            ...process.env,
            NO_COLOR: "1",
            SMURFS_MODEL: "",
            TEAM_MCP_CRED: CREDENTIAL,
            OPENAI_BASE_URL: model.baseURL,
            OPENAI_API_KEY: "none"
          }
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr })
      )
      child.stdin?.end("Who am I?\n/exit\n")
    })
    expect(r.code, r.stderr).toBe(0)
    // the echo model routes the message as small talk; the tool list it was shown carried the echoed token, redacted
    expect(model.bodies.slice(sentBefore).some((b) => b.includes("Tell who the caller is (token [REDACTED])"))).toBe(
      true
    )
    for (const [i, body] of model.bodies.slice(sentBefore).entries()) expectClean(`model request ${i}`, body)
    expectClean("stdout", r.stdout)
    expectClean("stderr", r.stderr)
    expectClean("transcript", readFileSync(save, "utf8"))
  }, 60_000)
})
