// The `scripted:<file.json>` provider: deterministic replies read from a script file, for tests and demos.
import * as Effect from "effect/Effect"
import { type ProviderCheck, type ProviderChecks, registerProvider } from "../providers.ts"
import { readScript, type Script, scriptedFileLayer } from "../scripted.ts"

/** Whether a script can answer the doctor's probe: a plain list of replies, or replies for the role "doctor" (or "*"). */
const answersProbe = (script: Script): boolean =>
  Array.isArray(script) ||
  Array.isArray((script as Record<string, unknown>)["doctor"]) ||
  Array.isArray((script as Record<string, unknown>)["*"])

/** A scripted model needs no server; its script must be readable, and the probe is asked only when the script can answer it. */
const doctor = (file: string): Effect.Effect<ProviderChecks> =>
  Effect.gen(function* () {
    const server: ProviderCheck = {
      name: "server",
      status: "skip",
      detail: "a scripted model needs no server: nothing to start or pull"
    }
    const script = yield* Effect.result(readScript(file))
    if (script._tag === "Failure")
      return {
        checks: [server, { name: "script", status: "fail", detail: script.failure.message }],
        problem: "bad-spec"
      } satisfies ProviderChecks
    const roles = Array.isArray(script.success)
      ? `${script.success.length} replies`
      : `replies for ${Object.keys(script.success)
          .filter((k) => !k.startsWith("$"))
          .join(", ")}`
    const read: ProviderCheck = { name: "script", status: "pass", detail: `${file} holds ${roles}` }
    if (!answersProbe(script.success))
      return {
        checks: [server, read],
        instead: {
          name: "structured output",
          status: "skip",
          detail: 'the script has no reply for the probe (role "doctor"); replies are only what the script holds'
        }
      } satisfies ProviderChecks
    return { checks: [server, read] } satisfies ProviderChecks
  })

registerProvider({
  name: "scripted",
  usage: "scripted:<file.json>",
  restName: "file",
  refuse: (rest) => (rest === "" ? 'the script file after "scripted:" is missing' : undefined),
  claims: (bare) => /\.json$/i.test(bare),
  layer: (file) => scriptedFileLayer(file),
  doctor,
  // the script is a file of the machine that reads it
  portable: () => false,
  testModel: true
})
