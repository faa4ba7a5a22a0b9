// The OTLP/HTTP span exporter (effect's http and observability modules): otlp.ts loads it only when an endpoint is set.

import { FetchHttpClient } from "effect/http"
import * as Layer from "effect/Layer"
import { OtlpSerialization, OtlpTracer } from "effect/observability"
import { version } from "../version.ts"
import { redactValue } from "./redact.ts"

/** The tracer exporting to `url` every second, flushing what is queued when its scope closes (otlpLayer). */
export const otlpExporter = (url: string) =>
  OtlpTracer.layer({
    url,
    resource: { serviceName: "smurfs", serviceVersion: version },
    exportInterval: "1 second",
    shutdownTimeout: "3 seconds"
  }).pipe(Layer.provide(FetchHttpClient.layer), Layer.provide(redactedSerialization))

/**
 * OTLP/JSON with every string redacted (span names, attributes, status messages, exception events and their
 * stack traces): an error whose message carries an echoed Authorization header is redacted on stderr, and
 * so it is here, whatever span or event it reached.
 */
const redactedSerialization = Layer.effect(
  OtlpSerialization.OtlpSerialization,
  OtlpSerialization.OtlpSerialization.useSync((json) => ({
    traces: (data) => json.traces(redactValue(data)),
    metrics: (data) => json.metrics(redactValue(data)),
    logs: (data) => json.logs(redactValue(data))
  }))
).pipe(Layer.provide(OtlpSerialization.layerJson))
