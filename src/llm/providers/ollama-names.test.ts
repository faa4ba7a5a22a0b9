// `ollama pull <model>` is suggested only for a name Ollama's registry could have.
import { describe, expect, it } from "vitest"
import { providerWording } from "../providers.ts"
import { pullableName } from "./ollama.ts"

describe("a model Ollama does not have", () => {
  it("suggests `ollama pull` for a name a registry could have", () => {
    for (const name of ["qwen2.5:7b", "llama3", "hf.co/bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M", "me/model:latest"])
      expect(pullableName(name), name).toBe(true)
    expect(providerWording("ollama").modelMissing("qwen2.5:7b")).toContain("`ollama pull qwen2.5:7b`")
  })

  it("says the name is wrong, not to pull it, for a path, a file or a name no registry could hold", () => {
    for (const name of ["/models/qwen.gguf", "qwen.gguf", "my model", "a/b/c/d", "qwen2.5:7b:q4", "../x", ""])
      expect(pullableName(name), name).toBe(false)
    const text = providerWording("ollama").modelMissing("./models/qwen.gguf")
    expect(text).not.toContain("ollama pull")
    expect(text).toContain("no registry could")
    expect(text).toContain("`ollama list`")
  })
})
