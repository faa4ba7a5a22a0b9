// Opt-in OpenTelemetry export: with OTEL_EXPORTER_OTLP_ENDPOINT set, every span (the `Effect.fn` spans of the
// pipeline, model calls, tool calls, verdicts) goes to that collector over OTLP/HTTP (JSON); without it, nothing.

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { untracedLayer } from "./unexported-spans.ts"

/** The traces URL as the OpenTelemetry spec derives it: the signal's own variable as given, else the base + `/v1/traces`. */
export const otlpTracesUrl = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const own = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]?.trim()
  if (own) return own
  const base = env["OTEL_EXPORTER_OTLP_ENDPOINT"]?.trim()
  if (!base) return undefined
  return `${base.replace(/\/+$/, "")}/v1/traces`
}

/**
 * The tracer layer for a command, or one that records no spans when no endpoint is set or
 * `OTEL_SDK_DISABLED=true` (`untracedLayer`). An endpoint that is not a URL is reported once and export
 * is skipped: a typo never stops a run. The exporter flushes the spans still queued when the layer's scope
 * closes, so provide it around the whole program.
 */
export const otlpLayer = (
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = (line) => console.error(line)
) => {
  const url = otlpTracesUrl(env)
  if (url === undefined || env["OTEL_SDK_DISABLED"]?.trim().toLowerCase() === "true") return untracedLayer
  if (!URL.canParse(url)) {
    warn(
      `smurfs: OTEL_EXPORTER_OTLP_ENDPOINT "${url}" is not a URL; no traces are exported. Set it to the collector's base URL, e.g. http://127.0.0.1:4318`
    )
    return untracedLayer
  }
  // effect's http and observability modules (some 160) load only when spans are exported, not at every CLI start
  return Layer.unwrap(Effect.promise(() => import("./otlp-exporter.ts")).pipe(Effect.map((m) => m.otlpExporter(url))))
}
