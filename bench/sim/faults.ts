// Seeded misbehaviour of the simulated model: which fault a call gets, and how a malformed or refused reply reads.

import { FAULT_KINDS, type FaultKind, type SimOptions } from "./options.ts"
import type { FaultSurface } from "./policy.ts"

/**
 * The fault of one call, or none. `fault` is spread evenly over the kinds the call can show (a
 * planner call cannot name an unknown tool), so a 10% fault rate means 10% of calls misbehave;
 * per-kind rates add to that.
 */
export const drawFault = (
  options: Pick<SimOptions, "fault" | "faults">,
  surface: FaultSurface,
  rng: () => number
): FaultKind | undefined => {
  const fits = FAULT_KINDS.filter((k) =>
    k === "unknown_tool" ? surface.tool : k === "wrong_args" ? surface.args : true
  )
  const u = rng()
  let edge = 0
  for (const kind of fits) {
    edge += options.fault / fits.length + options.faults[kind]
    if (u < edge) return kind
  }
  return undefined
}

const REFUSAL = "I'm sorry, but I can't help with that request."

/** A reply that breaks the format: JSON cut short, prose with no JSON, or JSON of the wrong shape. */
export const malformed = (intended: string, rng: () => number): string => {
  const way = Math.floor(rng() * 3)
  if (way === 0) return intended.slice(0, Math.max(1, Math.floor(intended.length / 2)))
  if (way === 1)
    return "Let me think about this step by step. First I need to understand what the user is asking for, then decide on the next step."
  return JSON.stringify({ response: intended.slice(0, 200) })
}

/** A refusal, as chat models phrase one. */
export const refusal = (): string => REFUSAL
