// The ported τ² domains (bench/benchmarks/tau2: domain, tools, gold replay, scoring) as the conversation harness reads
// them (port.ts).
import * as Effect from "effect/Effect"
import { DatasetError } from "../../datasets.ts"
import type { Tau2DomainLoader } from "./port.ts"

/** Load a domain of a τ² checkout for the harness. */
export const loadTau2DomainView: Tau2DomainLoader = (dir, domain) =>
  Effect.fail(
    new DatasetError({
      path: dir,
      problem: `the τ² ${domain} domain is not ported in this build`,
      hint: "Use a smurfs build with the τ² domain port (bench/benchmarks/tau2)."
    })
  )
