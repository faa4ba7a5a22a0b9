// Demo tool: look a fact up in the small offline facts table.
import { z } from "zod"
import { defineTool } from "../define-tool.ts"
import { FACTS, lookupFacts } from "./facts.ts"

const subjects = [...new Set(FACTS.map((f) => f.subject))]

export const lookupFactTool = defineTool({
  name: "lookup_fact",
  description:
    "Look up a fact in a small offline table: capitals and census populations of some countries, heights of famous mountains, a few physical constants.\n" +
    "Each fact carries its source. Leave out the attribute to get every fact about the subject.",
  parameters: z.object({
    subject: z.string().describe('What the fact is about, e.g. "France", "Mount Everest", "speed of light"'),
    attribute: z.string().optional().describe('Which fact, e.g. "capital", "population", "height"')
  }),
  execute: ({ subject, attribute }) => {
    const found = lookupFacts(subject, attribute)
    if (found.length === 0) {
      const about = lookupFacts(subject)
      if (about.length > 0)
        throw new Error(
          `no "${attribute}" fact about ${about[0]!.subject}; known attributes: ${[...new Set(about.map((f) => f.attribute))].join(", ")}`
        )
      throw new Error(`no facts about "${subject}"; known subjects: ${subjects.join(", ")}`)
    }
    return found
  }
})
