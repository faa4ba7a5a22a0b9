// Test helper of the store-link tests: one call of a simulated API (Data / Search / find) whose simulator model answers
// {"name": "found"}, through a simulated environment with the store or cache folders a test points at a link.
import * as Effect from "effect/Effect"
import { scriptedLayer } from "../../src/llm/scripted.ts"
import { makeReplayIndex } from "../../src/tools/environments/recorded.ts"
import { makeSimulatedEnvironment, type SimulatedOptions } from "../../src/tools/environments/simulated.ts"
import { ApiDoc } from "../../src/tools/toolbench/api-doc.ts"

export const FIND_DOC = ApiDoc.parse({
  category_name: "Data",
  tool_name: "Search",
  api_name: "find",
  api_description: "find things",
  required_parameters: [],
  template_response: { name: "str" }
})

/** Serve one call of FIND_DOC by a simulated environment of `options` (an empty replay index). */
export const serveFind = async (options: Omit<SimulatedOptions, "index">) => {
  const env = await Effect.runPromise(
    makeSimulatedEnvironment({ index: makeReplayIndex(), ...options }).pipe(
      Effect.provide(scriptedLayer({ "tool.simulate": [{ error: "", response: { name: "found" } }] }))
    )
  )
  return Effect.runPromise(env.serve({ doc: FIND_DOC, stdTool: "search", stdApi: "find", args: {} }))
}
