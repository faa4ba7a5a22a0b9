// Demo tool: the time between two calendar dates (no clock: both dates are arguments).
import { z } from "zod"
import { defineTool } from "../define-tool.ts"

const DAY_MS = 86_400_000

const parseDate = (text: string): Date => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim())
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined
  if (!m || !date || date.getUTCMonth() !== Number(m[2]) - 1 || date.getUTCDate() !== Number(m[3]))
    throw new Error(`"${text}" is not a calendar date in the form YYYY-MM-DD`)
  return date
}

/** Whole days, weeks and calendar months/years from `start` to `end` (negative when `end` is earlier). */
export const dateDiff = (start: string, end: string) => {
  const a = parseDate(start)
  const b = parseDate(end)
  const sign = b >= a ? 1 : -1
  const [from, to] = sign === 1 ? [a, b] : [b, a]
  const days = Math.round((to.getTime() - from.getTime()) / DAY_MS)
  let months = (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + (to.getUTCMonth() - from.getUTCMonth())
  if (to.getUTCDate() < from.getUTCDate()) months -= 1
  return {
    start,
    end,
    days: sign * days,
    weeks: sign * Math.floor(days / 7),
    months: sign * months,
    years: sign * Math.floor(months / 12),
    weekday_of_end: b.toLocaleDateString("en-US", { weekday: "long", timeZone: "UTC" })
  }
}

export const dateDiffTool = defineTool({
  name: "date_diff",
  description:
    "Count the days, weeks, whole months and whole years between two dates (YYYY-MM-DD), and name the weekday of the end date.",
  parameters: z.object({
    start: z.string().describe("The first date, YYYY-MM-DD"),
    end: z.string().describe("The second date, YYYY-MM-DD")
  }),
  execute: ({ start, end }) => dateDiff(start, end)
})
