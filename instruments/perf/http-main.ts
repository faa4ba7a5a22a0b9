// `npm run bench:http`: the overhead-through-HTTP section of `npm run bench:perf` alone, for quick re-measuring.
// It prints figures; it asserts nothing about timings.
import { loadavg } from "node:os"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { measureHttpOverhead } from "./http-overhead.ts"

const { values } = parseArgs({
  options: {
    data: { type: "string", default: resolve(fileURLToPath(new URL("../../../shared/toolbench", import.meta.url))) },
    "per-group": { type: "string", default: "100" },
    seconds: { type: "string", default: "8" },
    "in-flight": { type: "string", default: "16" },
    latency: { type: "string", default: "50" },
    rounds: { type: "string", default: "3" }
  }
})

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")
const before = load()
const http = await measureHttpOverhead({
  data: values.data!,
  inFlight: Number(values["in-flight"]),
  latencyMs: Number(values.latency),
  perGroup: Number(values["per-group"]),
  loopSeconds: Number(values.seconds),
  rounds: Number(values.rounds)
})
console.log(`load average before ${before}, after ${load()}`)
console.log(
  `bare loops   ${http.bareRequestsPerSecond.toFixed(1)} requests/s (whole run ${http.wholeRun.bareRequestsPerSecond.toFixed(1)})`
)
console.log(
  `smurfs bench ${http.benchRequestsPerSecond.toFixed(1)} requests/s (whole run ${http.wholeRun.benchRequestsPerSecond.toFixed(1)}; ${http.benchRequests} requests)`
)
console.log(
  `ratio ${http.ratio.toFixed(3)} (whole run ${http.wholeRun.ratio.toFixed(3)}), over the middle 80% of each client's requests; ${http.roundRatios.length === 1 ? "one round" : `the median of ${http.roundRatios.length} rounds: ${http.roundRatios.map((r) => r.toFixed(3)).join(", ")}`}`
)
