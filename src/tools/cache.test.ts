import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { makeToolCache, toolCallKey } from "./cache.ts"
import { PythonNumber } from "./environments/canonical.ts"
import type { ToolEnvironment } from "./environments/environment.ts"
import { plainJson, pythonJsonLoads, serverResponseText } from "./environments/python-json.ts"
import { rememberWritten } from "./environments/written-args.ts"
import type { Tool, ToolResult } from "./tool.ts"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A tool that counts its calls and fails for the city "nowhere". */
const weather = () => {
  let calls = 0
  const tool: Tool = {
    name: "weather_for_meteo",
    description: "Weather of a city",
    parameters: z.object({ city: z.string(), days: z.number().optional() }),
    call: (args) =>
      Effect.sync((): ToolResult => {
        calls++
        return args["city"] === "nowhere"
          ? { ok: false, content: "", error: "unknown city" }
          : { ok: true, content: `call ${calls}: sunny in ${String(args["city"])}` }
      })
  }
  return { tool, calls: () => calls }
}

const call = (tool: Tool, args: Record<string, unknown>) => Effect.runPromise(tool.call(args))

describe("tool cache", () => {
  it("returns the stored result for the same tool and arguments, whatever their key order", async () => {
    const inner = weather()
    const cache = await Effect.runPromise(makeToolCache())
    const tool = cache.wrapTool(inner.tool)
    const first = await call(tool, { city: "Paris", days: 2 })
    const second = await call(tool, { days: 2, city: "Paris" })
    expect(second).toEqual({ ...first, cached: true })
    expect(inner.calls()).toBe(1)
    await call(tool, { city: "Lyon", days: 2 })
    expect(inner.calls()).toBe(2)
    expect(cache.store.stats).toMatchObject({ hits: 1, misses: 2 })
    expect(tool.name).toBe(inner.tool.name)
    expect(tool.parameters).toBe(inner.tool.parameters)
  })

  it("does not keep failures unless asked, since they may be passing", async () => {
    const inner = weather()
    const tool = (await Effect.runPromise(makeToolCache())).wrapTool(inner.tool)
    await call(tool, { city: "nowhere" })
    await call(tool, { city: "nowhere" })
    expect(inner.calls()).toBe(2)

    const final = weather()
    const keeping = (await Effect.runPromise(makeToolCache({ cacheErrors: true }))).wrapTool(final.tool)
    const a = await call(keeping, { city: "nowhere" })
    const b = await call(keeping, { city: "nowhere" })
    expect(final.calls()).toBe(1)
    expect(b).toEqual({ ...a, cached: true })
    expect(b.ok).toBe(false)
  })

  it("persists across caches sharing a directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "smurfs-tool-cache-"))
    dirs.push(dir)
    const first = weather()
    const stored = await call((await Effect.runPromise(makeToolCache({ dir }))).wrapTool(first.tool), { city: "Paris" })
    const second = weather()
    const replayed = await call((await Effect.runPromise(makeToolCache({ dir }))).wrapTool(second.tool), {
      city: "Paris"
    })
    expect(second.calls()).toBe(0)
    expect(replayed).toEqual({ ...stored, cached: true })
  })

  it("scopes a wrapped library's keys by the library name", async () => {
    const cache = await Effect.runPromise(makeToolCache())
    const a = weather()
    const b = weather()
    const libA = cache.wrapLibrary({ name: "A", tools: [a.tool] })
    const libB = cache.wrapLibrary({ name: "B", tools: [b.tool] })
    await call(libA.tools[0]!, { city: "Paris" })
    await call(libB.tools[0]!, { city: "Paris" })
    await call(libA.tools[0]!, { city: "Paris" })
    expect([a.calls(), b.calls()]).toEqual([1, 1])
    expect(toolCallKey("t", { x: 1 }, "A")).not.toBe(toolCallKey("t", { x: 1 }, "B"))
  })

  it("wraps a ToolBench environment, keyed by tool, API and canonical arguments", async () => {
    let served = 0
    const env: ToolEnvironment = {
      name: "replay",
      serve: (call) =>
        Effect.sync(() => (served++, call.stdApi === "missing" ? undefined : { ok: true, content: `served ${served}` }))
    }
    const cached = (await Effect.runPromise(makeToolCache())).wrapEnvironment(env)
    const doc = { tool_name: "T", api_name: "A" } as never
    const first = await Effect.runPromise(cached.serve({ doc, stdTool: "t", stdApi: "a", args: { n: 5 } }))
    const second = await Effect.runPromise(cached.serve({ doc, stdTool: "t", stdApi: "a", args: { n: "5" } }))
    expect(second).toEqual({ ...first, cached: true })
    expect(served).toBe(1)
    await Effect.runPromise(cached.serve({ doc, stdTool: "t", stdApi: "missing", args: {} }))
    await Effect.runPromise(cached.serve({ doc, stdTool: "t", stdApi: "missing", args: {} }))
    expect(served).toBe(3)
  })

  it("keeps the reference profile's calls apart by the arguments as written, and a structured response's numbers through the disk", async () => {
    const dir = mkdtempSync(join(tmpdir(), "smurfs-tool-cache-"))
    dirs.push(dir)
    let served = 0
    const env: ToolEnvironment = {
      name: "recorded",
      serve: () =>
        Effect.sync((): ToolResult => {
          served++
          return { ok: true, content: '{"price":10}', structured: { price: new PythonNumber("10.0") } }
        })
    }
    const doc = { tool_name: "T", api_name: "A" } as never
    const written = (text: string) => {
      const decoded = pythonJsonLoads(text)
      return rememberWritten(plainJson(decoded) as Record<string, unknown>, decoded)
    }
    const first = (await Effect.runPromise(makeToolCache({ dir }))).wrapEnvironment(env)
    await Effect.runPromise(first.serve({ doc, stdTool: "t", stdApi: "a", args: written('{"n": 5}') }))
    // "5" is another str(tool_input): not answered from the cache
    await Effect.runPromise(first.serve({ doc, stdTool: "t", stdApi: "a", args: written('{"n": "5"}') }))
    expect(served).toBe(2)
    // a later run reads the cache file: the same call is a hit whose response still has its 10.0
    const later = (await Effect.runPromise(makeToolCache({ dir }))).wrapEnvironment(env)
    const hit = await Effect.runPromise(later.serve({ doc, stdTool: "t", stdApi: "a", args: written('{"n": 5}') }))
    expect(served).toBe(2)
    expect(hit?.cached).toBe(true)
    expect(serverResponseText("", hit)).toBe('{"error": "", "response": {"price": 10.0}}')
  })
})
