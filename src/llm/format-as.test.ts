// How a request's reply shape is asked of each server: its JSON Schema (the default), only a JSON object (StableToolBench's
// simulator asks so), or nothing; the reply is checked against the schema either way.
import { describe, expect, it } from "vitest"
import type { GenerateRequest } from "./language-model.ts"
import { toChatRequest } from "./ollama.ts"
import { toCompletionRequest } from "./openai.ts"

const format = { type: "object", properties: { error: { type: "string" } }, required: ["error"] }
const request = (formatAs?: GenerateRequest["formatAs"]): GenerateRequest => ({
  role: "tool.simulate",
  messages: [{ role: "user", content: "hi" }],
  format,
  ...(formatAs === undefined ? {} : { formatAs })
})
const common = { model: "m", numCtx: 4096, timeoutMs: 1000, seed: 42, temperature: 0 }
const openai = (r: GenerateRequest) =>
  toCompletionRequest({ ...common, baseURL: "http://127.0.0.1:1/v1", apiKey: "k" }, r) as unknown as Record<
    string,
    unknown
  >
const ollama = (r: GenerateRequest) =>
  toChatRequest({ ...common, host: "127.0.0.1:1", keepAlive: "5m" }, r) as unknown as Record<string, unknown>

describe("formatAs", () => {
  it("OpenAI: json_schema by default, json_object when asked, nothing for none", () => {
    expect((openai(request()).response_format as { type: string }).type).toBe("json_schema")
    expect(openai(request("json_object")).response_format).toEqual({ type: "json_object" })
    expect("response_format" in openai(request("none"))).toBe(false)
  })

  it('Ollama: the schema by default, "json" when asked, nothing for none', () => {
    expect(ollama(request()).format).toEqual(format)
    expect(ollama(request("json_object")).format).toBe("json")
    expect("format" in ollama(request("none"))).toBe(false)
  })
})
