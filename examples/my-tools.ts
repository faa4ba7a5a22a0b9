// An example custom tool library: pass it with `smurfs run ... --tools examples/my-tools.ts`.

import { defineTool } from "smurfs"
import { z } from "zod"

export const tools = [
  defineTool({
    name: "word_count",
    description: "Count the words in a text.",
    parameters: z.object({ text: z.string().describe("the text to count") }),
    execute: ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length })
  })
]
