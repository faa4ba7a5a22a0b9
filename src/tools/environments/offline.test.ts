import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { ApiDoc } from "../toolbench/api-doc.ts"
import type { ToolCall } from "./environment.ts"
import { instantiateTemplate, makeOfflineEnvironment } from "./offline.ts"

const callWith = (template_response: unknown): ToolCall => ({
  doc: ApiDoc.parse({ tool_name: "TheClique", api_name: "Songkick concert", template_response }),
  stdTool: "theclique",
  stdApi: "songkick_concert",
  args: { id_conc: "1" }
})

const template = {
  name: "str",
  date: "str",
  capacity: "int",
  rating: "float",
  sold_out: "bool",
  venue: "NoneType",
  line_up: [{ name: "str", _list_length: 3 }],
  tags: ["list of str with length 4"],
  extra: "empty list"
}

describe("offline environment", () => {
  it("error mode answers every call with ok:false naming the API", async () => {
    const result = await Effect.runPromise(makeOfflineEnvironment("error").serve(callWith(template)))
    expect(result).toEqual({
      ok: false,
      content: "",
      error: "no recorded response for theclique.songkick_concert with these arguments (offline environment)"
    })
  })

  it("template mode answers with a deterministic instance of template_response", async () => {
    const env = makeOfflineEnvironment("template")
    const first = await Effect.runPromise(env.serve(callWith(template)))
    const second = await Effect.runPromise(env.serve(callWith(template)))
    expect(first).toEqual(second)
    expect(first?.ok).toBe(true)
    expect(JSON.parse(first!.content)).toEqual({
      name: "<name>",
      date: "<date>",
      capacity: 0,
      rating: 0,
      sold_out: false,
      venue: null,
      line_up: [{ name: "<name>" }],
      tags: ["<tags>"],
      extra: []
    })
  })

  it("template mode reads a template stored as JSON text, and falls back to the error without a template", async () => {
    const env = makeOfflineEnvironment("template")
    expect(JSON.parse((await Effect.runPromise(env.serve(callWith('{"id": "int"}'))))!.content)).toEqual({ id: 0 })
    expect((await Effect.runPromise(env.serve(callWith("plain words"))))!.content).toBe("plain words")
    expect(await Effect.runPromise(env.serve(callWith(undefined)))).toMatchObject({ ok: false })
    expect(instantiateTemplate(["int", "str"])).toEqual([0])
  })
})
