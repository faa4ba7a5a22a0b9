// Demo tool: convert money with a FIXED table of demo rates (offline and repeatable, not market data).
import { z } from "zod"
import { defineTool } from "../define-tool.ts"

/**
 * Units of each currency per 1 US dollar. These are fixed demo rates, roughly the 2024 average,
 * kept constant so that demo runs are repeatable; they are not live exchange rates.
 */
export const DEMO_RATES_PER_USD: Readonly<Record<string, number>> = {
  USD: 1,
  EUR: 0.92,
  GBP: 0.78,
  JPY: 151.5,
  CNY: 7.2,
  INR: 83.5,
  CAD: 1.37,
  AUD: 1.52,
  CHF: 0.88,
  BRL: 5.4,
  MXN: 18.3,
  KRW: 1365,
  SEK: 10.6,
  NZD: 1.65,
  ZAR: 18.3
}

const rate = (code: string): number => {
  const r = DEMO_RATES_PER_USD[code.trim().toUpperCase()]
  if (r === undefined)
    throw new Error(`unknown currency "${code}"; known: ${Object.keys(DEMO_RATES_PER_USD).join(", ")}`)
  return r
}

/** Convert an amount between currencies through USD with the fixed demo rates. */
export const convertCurrency = (amount: number, from: string, to: string): number =>
  Math.round((amount / rate(from)) * rate(to) * 100) / 100

export const convertCurrencyTool = defineTool({
  name: "convert_currency",
  description:
    "Convert an amount of money between currencies using a fixed table of demo exchange rates (not live rates).\n" +
    `Currencies: ${Object.keys(DEMO_RATES_PER_USD).join(", ")}.`,
  parameters: z.object({
    amount: z.number().describe("The amount of money"),
    from: z.string().describe('ISO 4217 code of the amount\'s currency, e.g. "USD"'),
    to: z.string().describe('ISO 4217 code of the currency to convert to, e.g. "EUR"')
  }),
  execute: ({ amount, from, to }) => ({
    amount,
    from: from.toUpperCase(),
    to: to.toUpperCase(),
    result: convertCurrency(amount, from, to),
    note: "fixed demo rates, not live market data"
  })
})
