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
})
