// solve.ts: the Promise API with a tool of your own (run it with `node solve.ts`).

import { defineTool, solve } from "smurfs"
import { z } from "zod"

const wordCount = defineTool({
  name: "word_count",
  description: "Count the words in a text.",
  parameters: z.object({ text: z.string().describe("the text to count") }),
  execute: ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length })
})

const trajectory = await solve("How many words are in 'the quick brown fox'?", {
  model: "ollama:qwen2.5:7b",
  tools: [wordCount],
  onEvent: (event) => console.error(event.type),
  signal: AbortSignal.timeout(5 * 60_000)
})
console.log(trajectory.finishType, trajectory.finalAnswer)
