import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { tinyGgufBytes } from "../../scripts/tiny-gguf.ts"
import { removeTinyModels, tinyModelFile } from "./tiny-model.ts"

afterAll(removeTinyModels)

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex")

describe("the tiny GGUF generator", () => {
  it("writes the same bytes for a seed and other bytes for another seed", () => {
    const one = tinyGgufBytes({ seed: 7 })
    expect(sha(tinyGgufBytes({ seed: 7 }))).toBe(sha(one))
    expect(sha(tinyGgufBytes({ seed: 8 }))).not.toBe(sha(one))
    expect(one.subarray(0, 4).toString("latin1")).toBe("GGUF")
    expect(one.readUInt32LE(4)).toBe(3)
    expect(one.length).toBeLessThan(1_000_000)
  })

  it("is a llama model node-llama-cpp reads: SPM vocabulary with byte fallback, controls, ChatML template", async () => {
    const { readGgufFileInfo } = await import("node-llama-cpp")
    const info = await readGgufFileInfo(tinyModelFile())
    expect(info.version).toBe(3)
    const meta = info.metadata as unknown as {
      general: { architecture: string }
      llama: { embedding_length: number; block_count: number; attention: { head_count: number } }
      tokenizer: { ggml: Record<string, unknown>; chat_template: string }
    }
    expect(meta.general.architecture).toBe("llama")
    expect(meta.llama.embedding_length).toBe(64)
    expect(meta.llama.block_count).toBe(2)
    expect(meta.llama.attention.head_count).toBe(4)
    const tokens = meta.tokenizer.ggml["tokens"] as string[]
    const types = meta.tokenizer.ggml["token_type"] as number[]
    expect(meta.tokenizer.ggml["model"]).toBe("llama")
    expect(tokens).toContain("<0x00>")
    expect(tokens).toContain("<0xFF>")
    expect(tokens).toContain("\u2581")
    expect(types[tokens.indexOf("<0x41>")]).toBe(6)
    expect(types[tokens.indexOf("<|im_end|>")]).toBe(3)
    expect(meta.tokenizer.ggml["eos_token_id"]).toBe(tokens.indexOf("<|im_end|>"))
    expect(meta.tokenizer.chat_template).toContain("<|im_start|>")
    expect(readFileSync(tinyModelFile()).length).toBe(tinyGgufBytes({ seed: 1 }).length)
  })

  it("loads in llama.cpp and writes short printable text that ends, and valid JSON under a grammar", async () => {
    const { getLlama, LlamaChatSession, LlamaLogLevel } = await import("node-llama-cpp")
    const llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.error })
    const model = await llama.loadModel({ modelPath: tinyModelFile() })
    const context = await model.createContext({ contextSize: 1024, threads: 1 })
    try {
      const session = new LlamaChatSession({ contextSequence: context.getSequence() })
      expect(session.chatWrapper.wrapperName).toBe("ChatML")
      const text = await session.prompt("Hello, who are you?", { maxTokens: 64 })
      // printable, and ended by the model itself before the limit
      expect(text).toMatch(/^[\x20-\x7e]*$/)
      expect(session.sequence.tokenMeter.usedOutputTokens).toBeLessThan(64)
      const grammar = await llama.createGrammarForJsonSchema({
        type: "object",
        properties: { answer: { type: "string", maxLength: 20 }, n: { type: "number" }, ok: { type: "boolean" } },
        required: ["answer", "n", "ok"]
      })
      const json = await session.prompt("Reply in JSON", { grammar, maxTokens: 200 })
      const value = JSON.parse(json) as { answer: string; n: number; ok: boolean }
      expect(typeof value.answer).toBe("string")
      expect(Number.isFinite(value.n)).toBe(true)
      expect(typeof value.ok).toBe("boolean")
    } finally {
      await context.dispose()
      await model.dispose()
    }
  })
})
