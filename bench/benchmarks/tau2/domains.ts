// The τ² domains this port has: one entry per domain (a database schema, its tools; the policy and tasks are read
// from the user's checkout).
import { AIRLINE } from "./airline/index.ts"
import type { Tau2DomainSpec } from "./domain.ts"
import { RETAIL } from "./retail/index.ts"

export const TAU2_DOMAIN_SPECS: ReadonlyArray<Tau2DomainSpec<unknown>> = [
  RETAIL as unknown as Tau2DomainSpec<unknown>,
  AIRLINE as unknown as Tau2DomainSpec<unknown>
]

/** The names `--domain` takes. */
export const tau2DomainNames = (): ReadonlyArray<string> => TAU2_DOMAIN_SPECS.map((d) => d.name)

export const tau2DomainSpec = (name: string): Tau2DomainSpec<unknown> | undefined =>
  TAU2_DOMAIN_SPECS.find((d) => d.name === name)
