// `smurfs eval`'s judge model as `bench` sets it (issue 35 §6): --think and --timeout, and the model names an
// OpenAI-compatible server serves (llama.cpp's server answers any name: a warning, not a refusal).
import { afterEach, describe, expect, it } from "vitest"
import { writeFakeRun } from "../../../bench/eval/test-fixtures.ts"
import { runCapturingStderr } from "../../../test/capture-console.ts"
import { type FakeOpenAI, startFakeOpenAI } from "../../../test/fake-servers/openai.ts"
import { ExitCode } from "../exit-codes.ts"
import { run } from "./eval.ts"

const saved = process.env["OPENAI_BASE_URL"]
let server: FakeOpenAI | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
  if (saved === undefined) delete process.env["OPENAI_BASE_URL"]
  else process.env["OPENAI_BASE_URL"] = saved
})

const judgeAt = async (options: Parameters<typeof startFakeOpenAI>[0]) => {
  server = await startFakeOpenAI(options)
  process.env["OPENAI_BASE_URL"] = server.baseURL
  return server
}

describe("eval's judge model", () => {
  it("takes --think and any name llama.cpp's server answers, with a warning; every judge request has its limit", async () => {
    const fake = await judgeAt({
      imitate: "llama.cpp",
      chat: [JSON.stringify({ answer_status: "Solved", reason: "fine" })]
    })
    const dir = await writeFakeRun([{ taskId: "1" }])
    const result = await runCapturingStderr(run, [
      "--run",
      dir,
      "--judge",
      "openai:my-judge",
      "--k",
      "1",
      "--think",
      "off",
      "--timeout",
      "30000"
    ])
    expect(result.code, result.stderr).toBe(ExitCode.Ok)
    expect(result.stderr).toContain(
      `smurfs eval: openai:my-judge: llama.cpp's server serves one model under any name: "my-judge" runs /models/tiny.gguf.`
    )
    const sent = fake.chatRequests()
    expect(sent.length).toBeGreaterThan(0)
    for (const body of sent) {
      expect(body.chat_template_kwargs).toEqual({ enable_thinking: false })
      expect(body.max_tokens).toBe(1000) // ToolEval's max_tokens
    }
  })

  it("gives each judge request --timeout: a judge slower than it fails the decision, it is not waited for", async () => {
    await judgeAt({
      models: ["judge"],
      chat: [{ delayMs: 5000, content: JSON.stringify({ answer_status: "Solved", reason: "late" }) }]
    })
    const dir = await writeFakeRun([{ taskId: "1" }])
    const started = Date.now()
    const result = await runCapturingStderr(run, [
      "--run",
      dir,
      "--judge",
      "openai:judge",
      "--k",
      "1",
      "--timeout",
      "300"
    ])
    expect(result.code).not.toBe(ExitCode.Ok)
    expect(result.stderr).toContain("within 300 ms")
    expect(Date.now() - started).toBeLessThan(5000)
  })
})
