import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import type { Tool } from "../tools/tool.ts"
import { LISTED_DESCRIPTION, toolDoc, toolList } from "./tool-docs.ts"

const tool = (description: string): Tool => ({
  name: "weather",
  description,
  parameters: z.object({ city: z.string() }),
  call: () => Effect.succeed({ ok: true, content: "" })
})

describe("tool docs", () => {
  it("repeats a description in the argument doc only when the tool list does not show it whole", () => {
    const short = tool("Weather of a city.")
    expect(toolList([short])).toContain("Weather of a city.")
    expect(toolDoc(short, true).description).toBe(LISTED_DESCRIPTION)
    expect(toolDoc(short).description).toBe("Weather of a city.")
    // the list cuts a long description: the argument doc gives it whole
    const long = tool(`Weather of a city. ${"Details. ".repeat(60)}`.trim())
    expect(toolList([long]).length).toBeLessThan(long.description.length)
    expect(toolDoc(long, true).description).toBe(long.description)
    expect(JSON.parse(toolDoc(long, true).schema)).toMatchObject({ properties: { city: { type: "string" } } })
  })

  it("shows a ToolBench API's own description, and a schema without the catch-all or empty descriptions", () => {
    const api: Tool = {
      ...tool(
        'This is the subfunction for tool "meteo", you can use this tool.The description of this function is: "Weather."'
      ),
      meta: { doc: { api_description: "Weather of a city." } },
      parametersJsonSchema: {
        type: "object",
        properties: { city: { type: "string", description: "" }, days: { type: "number", description: "how many" } },
        required: ["city"],
        additionalProperties: { type: ["string", "number"] }
      }
    }
    expect(toolList([api])).toBe("- weather: Weather of a city.")
    expect(toolDoc(api, true).description).toBe(LISTED_DESCRIPTION)
    expect(JSON.parse(toolDoc(api, true).schema)).toEqual({
      type: "object",
      properties: { city: { type: "string" }, days: { type: "number", description: "how many" } },
      required: ["city"]
    })
  })
})
