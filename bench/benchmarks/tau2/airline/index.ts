// The airline domain: its database schema and tools behind the domain adapter.
import type { Tau2DomainSpec } from "../domain.ts"
import { AirlineDb } from "./data-model.ts"
import { AIRLINE_TOOLS } from "./tools.ts"

export const AIRLINE: Tau2DomainSpec<AirlineDb> = {
  name: "airline",
  toolkitClass: "AirlineTools",
  parseDb: (value) => AirlineDb.parse(value),
  tools: AIRLINE_TOOLS
}
