import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { ModelServerError } from "../llm/errors.ts"
import { LanguageModel } from "../llm/language-model.ts"
import { makeScriptedModel, type ScriptedReply } from "../llm/scripted.ts"
import { generateObject } from "../llm/structured.ts"
import { dataOf, isKind } from "../trace/events.ts"
import { recording } from "../trace/trajectory.ts"
import { callNative } from "./tool-call-recovery.ts"

/** A model whose server cannot parse any native call; JSON requests get the scripted replies. */
const unparsable = (json: ReadonlyArray<ScriptedReply>) => {
  const script = makeScriptedModel({ "*": [...json] })
  return LanguageModel.of({
    ...script,
    generate: (request) =>
      request.tools
        ? Effect.fail(
            new ModelServerError({ status: 500, host: "h", detail: "error parsing tool call", unparsedToolCall: true })
          )
        : script.generate(request)
  })
}

const guardrails = (json: ReadonlyArray<ScriptedReply>) =>
  Effect.runPromise(
    recording(
      "t",
      Effect.exit(
        callNative(
          {
            role: "react",
            messages: [{ role: "user", content: "go" }],
            tools: [{ name: "f", description: "", parameters: {} }]
          },
          (messages) =>
            Effect.map(
              generateObject({ role: "react", messages, schema: z.object({ action: z.string() }) }),
              (r) => r.response
            )
        )
      ).pipe(Effect.provideService(LanguageModel, unparsable(json)))
    )
  ).then(({ events }) =>
    events
      .filter((e) => isKind(e, "guardrail"))
      .map((e) => [dataOf(e, "guardrail").guardrail, dataOf(e, "guardrail").recovered])
  )

describe("callNative", () => {
  it("traces the server's parse errors before the JSON fallback's own guardrails, in the order of the replies", async () => {
    expect(await guardrails(["no JSON here", { action: "f" }])).toEqual([
      ["tool_call_parse", true],
      ["tool_call_parse", true],
      ["tool_call_parse", true],
      ["format", true]
    ])
  })

  it("when the fallback fails too, none is recovered, still in order", async () => {
    expect(await guardrails(["no", "JSON", "here"])).toEqual([
      ["tool_call_parse", false],
      ["tool_call_parse", false],
      ["tool_call_parse", false],
      ["format", false],
      ["format", false],
      ["format", false]
    ])
  })
})
