import { mkdtempSync, writeFileSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it, vi } from "vitest"
import { captureConsole } from "../../../test/capture-console.ts"
import { MINI_DATA } from "../../../test/data.ts"
import { startFakeOllama } from "../../../test/fake-servers/ollama.ts"
import { ExitCode } from "../exit-codes.ts"
import { run } from "./tools.ts"

const DATA = MINI_DATA.path
const FAKE_MCP = fileURLToPath(new URL("../../../test/fake-servers/mcp.ts", import.meta.url))

afterEach(() => vi.restoreAllMocks())

/** A loopback port nobody listens on (it was free a moment ago): connecting is refused. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

describe("smurfs tools search", () => {
  it("ranks a library's tools for a query", async () => {
    const { out } = captureConsole()
    expect(await run(["search", "convert 10 km to miles", "--top", "2"])).toBe(ExitCode.Ok)
    const lines = out.join("\n").split("\n")
    expect(lines[0]).toBe('demo: 2 of 5 tools for "convert 10 km to miles" (lexical)')
    expect(lines[2]).toMatch(/^ {2}1\. convert_units {2}\d+\.\d{3}$/)
    expect(lines[3]).toContain("Convert a quantity between units")
  })

  it("prints tool_name/api_name for the ToolBench corpus, as in the data's api_list", async () => {
    const { out } = captureConsole()
    expect(
      await run([
        "search",
        "suggest popular sites and main keywords for the search query 'birthday party ideas'",
        "--data",
        DATA,
        "--top",
        "5",
        "--json"
      ])
    ).toBe(ExitCode.Ok)
    const rows = JSON.parse(out.join("\n")) as Array<Record<string, unknown>>
    expect(rows).toHaveLength(5)
    expect(Object.keys(rows[0]!)).toEqual(["tool_name", "api_name", "score"])
    expect(rows).toContainEqual(
      expect.objectContaining({ tool_name: "Keyword Analysis", api_name: "PopularSitesForQuery" })
    )
    expect(rows.map((r) => r.score as number)).toEqual([...rows.map((r) => r.score as number)].sort((a, b) => b - a))
  }, 300_000)

  it("prints name/score for other libraries, MCP servers included", async () => {
    const { out } = captureConsole()
    expect(
      await run([
        "search",
        "echo the text back",
        "--tools",
        `mcp:${process.execPath} ${FAKE_MCP}`,
        "--top",
        "1",
        "--json"
      ])
    ).toBe(ExitCode.Ok)
    expect(JSON.parse(out.join("\n"))).toEqual([{ name: "echo", score: expect.any(Number) }])
  }, 300_000)

  it("is hybrid with --embed and re-ranks with --rerank --model", async () => {
    const ollama = await startFakeOllama({ models: [{ name: "nomic-embed-text" }] })
    const saved = process.env["OLLAMA_HOST"]
    process.env["OLLAMA_HOST"] = ollama.url
    try {
      const cache = mkdtempSync(join(tmpdir(), "smurfs-search-"))
      const hybrid = captureConsole()
      expect(
        await run([
          "search",
          "convert 10 km to miles",
          "--embed",
          "ollama:nomic-embed-text",
          "--embed-cache",
          cache,
          "--top",
          "2"
        ])
      ).toBe(ExitCode.Ok)
      expect(hybrid.out[0]).toContain("(hybrid)")
      vi.restoreAllMocks()
      const script = join(cache, "rerank.json")
      writeFileSync(script, JSON.stringify({ rerank: [{ tools: ["calculator", "convert_units"] }] }))
      const reranked = captureConsole()
      expect(
        await run([
          "search",
          "convert 10 km to miles with a calculator",
          "--rerank",
          "--model",
          `scripted:${script}`,
          "--top",
          "2",
          "--json"
        ])
      ).toBe(ExitCode.Ok)
      expect(JSON.parse(reranked.out.join("\n")).map((r: { name: string }) => r.name)).toEqual([
        "calculator",
        "convert_units"
      ])
    } finally {
      saved === undefined ? delete process.env["OLLAMA_HOST"] : (process.env["OLLAMA_HOST"] = saved)
      await ollama.close()
    }
  })

  it('falls back to the lexical ranking with a warning when the re-ranking model cannot be reached; one tool is "1 tool"', async () => {
    const saved = process.env["OLLAMA_HOST"]
    process.env["OLLAMA_HOST"] = `http://127.0.0.1:${await closedPort()}`
    try {
      const { out, err } = captureConsole()
      expect(await run(["search", "convert 10 km to miles", "--rerank", "--model", "ollama:m", "--top", "2"])).toBe(
        ExitCode.Ok
      )
      expect(out[0]!.trim()).toBe('demo: 2 of 5 tools for "convert 10 km to miles" (lexical)')
      expect(out.join("\n")).toMatch(/1\. convert_units/)
      expect(err.join("\n")).toMatch(/warning: .*the lexical ranking is shown instead/)
      vi.restoreAllMocks()
      const module = join(mkdtempSync(join(tmpdir(), "smurfs-one-tool-")), "one-tool.ts")
      const defineTool = fileURLToPath(new URL("../../tools/define-tool.ts", import.meta.url))
      writeFileSync(
        module,
        `import { z } from "zod"\nimport { defineTool } from ${JSON.stringify(defineTool)}\nexport const tools = [defineTool({ name: "word_count", description: "Count the words in a text.", parameters: z.object({ text: z.string() }), execute: ({ text }) => ({ words: text.split(" ").length }) })]\n`
      )
      const one = captureConsole()
      expect(await run(["search", "count words", "--tools", module]), one.err.join("\n")).toBe(ExitCode.Ok)
      expect(one.out[0]).toMatch(/: 1 of 1 tool for "count words"/)
    } finally {
      saved === undefined ? delete process.env["OLLAMA_HOST"] : (process.env["OLLAMA_HOST"] = saved)
    }
  })

  it("says what is wrong with its input", async () => {
    const { err } = captureConsole()
    expect(await run(["search"])).toBe(ExitCode.Usage)
    expect(await run(["search", "x", "--tools", "demo", "--data", DATA])).toBe(ExitCode.Usage)
    expect(await run(["search", "x", "--top", "0"])).toBe(ExitCode.Usage)
    expect(await run(["search", "x", "--embed", "nomic"])).toBe(ExitCode.BadInput)
    expect(err.join("\n")).toContain("ollama:<model>")
    expect(await run(["search", "x", "--data", "/no/such/dir"])).toBe(ExitCode.BadInput)
  })
})
