import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { otlpTracesUrl } from "../../src/trace/otlp.ts"
import { type FakeOtlp, startFakeOtlp } from "../fake-servers/otlp.ts"
import { demoQuery, demoScript, smurfs } from "./spawn.ts"

interface OtlpAttribute {
  readonly key: string
  readonly value: { readonly stringValue?: string; readonly intValue?: number | string; readonly boolValue?: boolean }
}
interface OtlpSpan {
  readonly name: string
  readonly traceId: string
  readonly attributes: ReadonlyArray<OtlpAttribute>
}
interface OtlpRequest {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource: { readonly attributes: ReadonlyArray<OtlpAttribute> }
    readonly scopeSpans: ReadonlyArray<{ readonly spans: ReadonlyArray<OtlpSpan> }>
  }>
}

let collector: FakeOtlp
beforeAll(async () => {
  collector = await startFakeOtlp()
})
afterAll(() => collector.close())
/** The exports received so far, their bodies parsed (the JSON encoding). */
const exports = () => collector.requests.map((q) => ({ ...q, body: JSON.parse(q.body) as OtlpRequest }))

const attr = (span: OtlpSpan, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.boolValue)
}

describe("OpenTelemetry export", () => {
  it("sends model-call, tool-call and verifier spans with token counts before the process exits", async () => {
    const r = await smurfs(["run", demoQuery, "--model", `scripted:${demoScript}`, "--tools", "demo"], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint }
    })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("3483.86 feet")
    const requests = exports()
    expect(requests.length).toBeGreaterThan(0)
    expect(requests.every((q) => q.path === "POST /v1/traces" && q.contentType.includes("application/json"))).toBe(true)
    const resource = requests[0]!.body.resourceSpans[0]!.resource
    expect(resource.attributes.find((a) => a.key === "service.name")?.value.stringValue).toBe("smurfs")
    const spans = requests.flatMap((q) => q.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)))
    const modelCalls = spans.filter((s) => s.name === "LanguageModel.call")
    expect(modelCalls.length).toBeGreaterThan(3)
    const planner = modelCalls.find((s) => attr(s, "role") === "planner")!
    expect(planner).toBeDefined()
    expect(attr(planner, "gen_ai.usage.input_tokens")).toBeGreaterThan(0)
    expect(attr(planner, "gen_ai.usage.output_tokens")).toBeGreaterThan(0)
    const tools = spans.filter((s) => s.name === "Tool.call")
    expect(tools.map((s) => attr(s, "tool"))).toContain("convert_units")
    expect(tools.length).toBe(3)
    expect(tools.every((s) => attr(s, "ok") === true)).toBe(true)
    const verdicts = spans.filter((s) => s.name === "Verifier.verify")
    expect(verdicts.length).toBeGreaterThan(0)
    expect(verdicts.map((s) => attr(s, "verdict"))).toContain("pending")
    // one task, one trace: the spans nest under the task's span
    expect(new Set(spans.filter((s) => s.name !== "LanguageModel.generateObject").map((s) => s.traceId)).size).toBe(1)
  }, 300_000)

  it("derives the traces URL as OpenTelemetry does and skips a value that is not a URL", () => {
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318/" })).toBe("http://h:4318/v1/traces")
    expect(
      otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t/x" })
    ).toBe("http://t/x")
    expect(otlpTracesUrl({})).toBeUndefined()
  })

  it("runs normally with a warning when the endpoint is not a URL", async () => {
    const r = await smurfs(["run", demoQuery, "--model", `scripted:${demoScript}`, "--tools", "demo"], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }
    })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("3483.86 feet")
    expect(r.stderr).toContain("is not a URL; no traces are exported")
  }, 300_000)
})
