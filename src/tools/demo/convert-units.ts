// Demo tool: convert length, mass, volume and temperature with fixed, exact factors.
import { z } from "zod"
import { defineTool } from "../define-tool.ts"

/** Factors to the base unit of each dimension (metre, kilogram, litre); exact by definition. */
const LINEAR: Readonly<Record<string, { dimension: string; toBase: number; aliases: ReadonlyArray<string> }>> = {
  m: { dimension: "length", toBase: 1, aliases: ["meter", "meters", "metre", "metres"] },
  km: { dimension: "length", toBase: 1000, aliases: ["kilometer", "kilometers", "kilometre", "kilometres"] },
  cm: { dimension: "length", toBase: 0.01, aliases: ["centimeter", "centimeters", "centimetre", "centimetres"] },
  mm: { dimension: "length", toBase: 0.001, aliases: ["millimeter", "millimeters", "millimetre", "millimetres"] },
  mi: { dimension: "length", toBase: 1609.344, aliases: ["mile", "miles"] },
  yd: { dimension: "length", toBase: 0.9144, aliases: ["yard", "yards"] },
  ft: { dimension: "length", toBase: 0.3048, aliases: ["foot", "feet"] },
  in: { dimension: "length", toBase: 0.0254, aliases: ["inch", "inches"] },
  nmi: { dimension: "length", toBase: 1852, aliases: ["nautical mile", "nautical miles"] },
  kg: { dimension: "mass", toBase: 1, aliases: ["kilogram", "kilograms", "kilo", "kilos"] },
  g: { dimension: "mass", toBase: 0.001, aliases: ["gram", "grams"] },
  mg: { dimension: "mass", toBase: 0.000001, aliases: ["milligram", "milligrams"] },
  t: { dimension: "mass", toBase: 1000, aliases: ["tonne", "tonnes", "metric ton", "metric tons"] },
  lb: { dimension: "mass", toBase: 0.45359237, aliases: ["lbs", "pound", "pounds"] },
  oz: { dimension: "mass", toBase: 0.028349523125, aliases: ["ounce", "ounces"] },
  st: { dimension: "mass", toBase: 6.35029318, aliases: ["stone", "stones"] },
  l: { dimension: "volume", toBase: 1, aliases: ["liter", "liters", "litre", "litres"] },
  ml: { dimension: "volume", toBase: 0.001, aliases: ["milliliter", "milliliters", "millilitre", "millilitres"] },
  m3: { dimension: "volume", toBase: 1000, aliases: ["cubic meter", "cubic meters", "cubic metre", "cubic metres"] },
  gal: { dimension: "volume", toBase: 3.785411784, aliases: ["gallon", "gallons", "us gallon", "us gallons"] },
  qt: { dimension: "volume", toBase: 0.946352946, aliases: ["quart", "quarts"] },
  pt: { dimension: "volume", toBase: 0.473176473, aliases: ["pint", "pints"] },
  cup: { dimension: "volume", toBase: 0.2365882365, aliases: ["cups"] },
  floz: { dimension: "volume", toBase: 0.0295735295625, aliases: ["fl oz", "fluid ounce", "fluid ounces"] },
  tbsp: { dimension: "volume", toBase: 0.01478676478125, aliases: ["tablespoon", "tablespoons"] },
  tsp: { dimension: "volume", toBase: 0.00492892159375, aliases: ["teaspoon", "teaspoons"] }
}

const TEMPERATURE: Readonly<
  Record<string, { toKelvin: (x: number) => number; fromKelvin: (k: number) => number; aliases: ReadonlyArray<string> }>
> = {
  c: { toKelvin: (x) => x + 273.15, fromKelvin: (k) => k - 273.15, aliases: ["celsius", "°c", "degc", "centigrade"] },
  f: {
    toKelvin: (x) => ((x - 32) * 5) / 9 + 273.15,
    fromKelvin: (k) => ((k - 273.15) * 9) / 5 + 32,
    aliases: ["fahrenheit", "°f", "degf"]
  },
  k: { toKelvin: (x) => x, fromKelvin: (k) => k, aliases: ["kelvin", "kelvins"] }
}

const canonicalUnit = (
  unit: string,
  table: Readonly<Record<string, { aliases: ReadonlyArray<string> }>>
): string | undefined => {
  const u = unit.trim().toLowerCase()
  if (u in table) return u
  return Object.keys(table).find((key) => table[key]!.aliases.includes(u))
}

const tidy = (x: number): number => Number.parseFloat(x.toPrecision(12))

/** Convert `value` from one unit to another; throws naming the problem for unknown or mismatched units. */
export const convertUnits = (value: number, from: string, to: string): { result: number; dimension: string } => {
  const tf = canonicalUnit(from, TEMPERATURE)
  const tt = canonicalUnit(to, TEMPERATURE)
  if (tf && tt)
    return { result: tidy(TEMPERATURE[tt]!.fromKelvin(TEMPERATURE[tf]!.toKelvin(value))), dimension: "temperature" }
  const lf = canonicalUnit(from, LINEAR)
  const lt = canonicalUnit(to, LINEAR)
  const known = `known units: ${[...Object.keys(LINEAR), "C", "F", "K"].join(", ")}`
  if (!lf && !tf) throw new Error(`unknown unit "${from}"; ${known}`)
  if (!lt && !tt) throw new Error(`unknown unit "${to}"; ${known}`)
  const df = lf ? LINEAR[lf]!.dimension : "temperature"
  const dt = lt ? LINEAR[lt]!.dimension : "temperature"
  if (!lf || !lt || df !== dt) throw new Error(`cannot convert ${df} (${from}) to ${dt} (${to})`)
  return { result: tidy((value * LINEAR[lf]!.toBase) / LINEAR[lt]!.toBase), dimension: df }
}

export const convertUnitsTool = defineTool({
  name: "convert_units",
  description:
    "Convert a quantity between units of length, mass, volume or temperature (exact conversion factors).\n" +
    "Units: m, km, cm, mm, mi, yd, ft, in, nmi; kg, g, mg, t, lb, oz, st; l, ml, m3, gal (US), qt, pt, cup, floz, tbsp, tsp; C, F, K.",
  parameters: z.object({
    value: z.number().describe("The quantity to convert"),
    from: z.string().describe('The unit of the quantity, e.g. "km" or "fahrenheit"'),
    to: z.string().describe('The unit to convert to, e.g. "mi" or "C"')
  }),
  execute: ({ value, from, to }) => ({ value, from, to, ...convertUnits(value, from, to) })
})
