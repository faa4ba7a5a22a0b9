// Secrets never reach traces, run directories or logs, even when the model echoes its Authorization header.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { REDACTED, redactText, redactValue, secretValues } from "../../src/trace/redact.ts"
import { MINI_DATA } from "../data.ts"
import { type EchoServer, startEchoServer } from "./echo-server.ts"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const data = MINI_DATA.path
const SECRET = "sk-test-SECRET-7f3a9c2e41"
/** Any trace of the key, whole or cut. */
const LEAKS = [SECRET, "SECRET-7f3a", "7f3a9c2e41"]

describe("redaction", () => {
  const secrets = secretValues({
    OPENAI_API_KEY: SECRET,
    MY_SERVICE_TOKEN: "tok-abcdef123456",
    HOME: "/home/someone",
    SHORT_TOKEN: "abc"
  })

  it("finds secret values in the environment by name, leaving ordinary variables and short values", () => {
    expect(secrets).toEqual([SECRET, "tok-abcdef123456"])
  })

  it("redacts secret values, headers, bearer tokens, sk- keys and key assignments", () => {
    expect(redactText(`key ${SECRET} end`, secrets)).toBe(`key ${REDACTED} end`)
    expect(redactText("Authorization: Bearer abc.def-123456789", [])).toBe(`Authorization: ${REDACTED}`)
    expect(redactText('{"authorization": "Basic dXNlcjpwYXNzd29yZA=="}', [])).toBe(`{"authorization": "${REDACTED}"}`)
    expect(redactText("got bearer eyJhbGciOiJIUzI1NiJ9.e30.x1 back", [])).toBe(`got bearer ${REDACTED} back`)
    expect(redactText("use sk-proj-abcdefghijklmnop now", [])).toBe(`use ${REDACTED} now`)
    expect(redactText("url?api_key=abcdef0123456789&x=1", [])).toBe(`url?api_key=${REDACTED}&x=1`)
    // every shape, in any letter case, gets past the quick word test that lets ordinary texts skip the patterns
    expect(redactText("X-API-KEY: abcdef0123456789", [])).toBe(`X-API-KEY: ${REDACTED}`)
    expect(redactText("Proxy-Authorization: Basic dXNlcjpwYXNz", [])).toBe(`Proxy-Authorization: ${REDACTED}`)
    expect(redactText("ACCESS_TOKEN=abcdef0123456789", [])).toBe(`ACCESS_TOKEN=${REDACTED}`)
    expect(redactText('{"Secret": "abcdef0123456789"}', [])).toBe(`{"Secret": "${REDACTED}"}`)
    expect(redactText("apikey: abcdef0123456789", [])).toBe(`apikey: ${REDACTED}`)
    expect(redactText("x tok-abcdef123456 y", secrets)).toBe(`x ${REDACTED} y`)
  })

  it("leaves ordinary text alone", () => {
    const prose =
      "Basic arithmetic: bearer instruments and the task-12345678 of Mount Everest (29032 ft); secret recipe"
    expect(redactText(prose, secrets)).toBe(prose)
  })

  it("redacts every string of a nested value, keys included, without touching numbers", () => {
    const value = { a: [`x ${SECRET}`, 3, { [SECRET]: true, deep: { t: `Bearer ${SECRET}` } }], n: 29032 }
    const out = redactValue(value, secrets)
    expect(JSON.stringify(out)).not.toContain("SECRET")
    expect(out.n).toBe(29032)
    expect(out.a[1]).toBe(3)
    expect(JSON.stringify(value)).toContain(SECRET) // the input is left as it was
  })

  it("copies keys in their order, a key named __proto__ as data (as JSON.parse made it)", () => {
    const value = JSON.parse(`{"b":1,"__proto__":{"t":"x ${SECRET}"},"a":[2]}`) as Record<string, unknown>
    const out = redactValue(value, secrets)
    expect(Object.keys(out)).toEqual(["b", "__proto__", "a"])
    expect(Object.hasOwn(out, "__proto__")).toBe(true)
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
    expect(JSON.stringify(out)).toBe(`{"b":1,"__proto__":{"t":"x ${REDACTED}"},"a":[2]}`)
  })
})

/** Every file under a directory, with its text. */
const filesOf = (dir: string): Array<{ path: string; text: string }> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesOf(path) : [{ path, text: readFileSync(path, "utf8") }]
  })

describe("no secret in what a run writes", () => {
  let server: EchoServer
  let out: string
  beforeAll(async () => {
    server = await startEchoServer()
    out = mkdtempSync(join(tmpdir(), "smurfs-secrets-"))
  })
  afterAll(async () => {
    await server.close()
    rmSync(out, { recursive: true, force: true })
  })

  const smurfs = (args: ReadonlyArray<string>) =>
    promisify(execFile)(process.execPath, ["bin/smurfs.js", ...args], {
      cwd: repo,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: SECRET, OPENAI_BASE_URL: server.baseURL, SMURFS_MODEL: "" }
    }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr })
    )

  const expectClean = (label: string, text: string) => {
    for (const leak of LEAKS) expect(text.includes(leak), `${label} contains "${leak}"`).toBe(false)
  }

  it("smurfs run --json: the trajectory has the echoes, redacted", async () => {
    const r = await smurfs(["run", "What is 2 + 3?", "--model", "openai:test-model", "--json"])
    expect(r.code, r.stderr).toBe(0)
    expect(server.authorizations).toContain(`Bearer ${SECRET}`) // the key was really in play
    expectClean("stdout", r.stdout)
    expectClean("stderr", r.stderr)
    expect(r.stdout).toContain(REDACTED)
    expect(JSON.parse(r.stdout).finishType).toBe("give_answer")
  }, 300_000)

  it("smurfs run (live view and final answer)", async () => {
    const r = await smurfs(["run", "What is 2 + 3?", "--model", "openai:test-model"])
    expect(r.code, r.stderr).toBe(0)
    expectClean("stdout", r.stdout)
    expectClean("stderr", r.stderr)
    expect(r.stderr).toContain(REDACTED)
  }, 300_000)

  it("smurfs bench: records, converted files, run.json and the simulated responses store", async () => {
    const run = join(out, "bench")
    const r = await smurfs([
      "bench",
      "--data",
      data,
      "--group",
      "G1_instruction",
      "--limit",
      "2",
      "--env",
      "simulated",
      "--model",
      "openai:test-model",
      "--out",
      run,
      "--full-trace"
    ])
    expect(r.code, r.stderr).toBe(0)
    expectClean("stdout", r.stdout)
    expectClean("stderr", r.stderr)
    const files = filesOf(run)
    expect(files.some((f) => f.path.includes("/tasks/"))).toBe(true)
    expect(files.some((f) => f.path.includes("/simulated/"))).toBe(true) // simulated tool responses, stored for replay
    for (const f of files) expectClean(f.path, f.text)
    expect(files.some((f) => f.text.includes(REDACTED))).toBe(true)
  }, 300_000)
})
