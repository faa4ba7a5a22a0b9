// The README's custom-tool example loads through the CLI, importing the package by its name.
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("..", import.meta.url))

describe("examples/my-tools.ts", () => {
  it("is listed by `smurfs tools` with its declared parameter", () => {
    const out = execFileSync(
      process.execPath,
      ["bin/smurfs.js", "tools", "--tools", "examples/my-tools.ts", "--json"],
      { cwd: root, encoding: "utf8" }
    )
    const listed = JSON.parse(out)
    const text = JSON.stringify(listed)
    expect(text).toContain("word_count")
    expect(text).toContain("text")
  })
})
