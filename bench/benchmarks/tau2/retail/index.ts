// The retail domain: its database schema and tools behind the domain adapter.
import type { Tau2DomainSpec } from "../domain.ts"
import { RetailDb } from "./data-model.ts"
import { RETAIL_TOOLS } from "./tools.ts"

export const RETAIL: Tau2DomainSpec<RetailDb> = {
  name: "retail",
  toolkitClass: "RetailTools",
  parseDb: (value) => RetailDb.parse(value),
  tools: RETAIL_TOOLS
}
