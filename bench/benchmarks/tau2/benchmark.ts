// τ²-bench behind the Benchmark interface: conversations of a domain with a simulated user, scored as τ² scores them.
import * as Effect from "effect/Effect"
import type { Benchmark } from "../benchmark.ts"
import { CONVERSER_NAMES } from "./conversers.ts"
import { loadTau2DomainView } from "./domain-view.ts"
import { checkTau2Settings, runTau2Settings, TAU2_JUDGE, tau2Queries } from "./harness.ts"
import type { Tau2DomainLoader } from "./port.ts"

/** τ² with a domain loader (the ported domains by default; tests give a small one). */
export const tau2Benchmark = (loadDomain: Tau2DomainLoader = loadTau2DomainView): Benchmark => ({
  name: "tau2",
  label: "τ²-bench",
  selects: (settings) => settings.tau2 !== undefined,
  methods: CONVERSER_NAMES,
  scoredBy: "record",
  scoreJudge: TAU2_JUDGE,
  converted: false,
  check: checkTau2Settings,
  tasks: (settings) => Effect.flatMap(loadDomain(settings.tau2!, settings.domain), (d) => tau2Queries(d, settings)),
  run: (settings, progress) => runTau2Settings(settings, progress, loadDomain)
})
