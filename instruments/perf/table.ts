// Plain-text tables for the perf report: a title, a header, aligned columns (numbers to the right).

export type Cell = string | number | null | undefined

const show = (c: Cell, digits: number): string =>
  c === null || c === undefined || (typeof c === "number" && !Number.isFinite(c))
    ? "-"
    : typeof c === "number"
      ? Number.isInteger(c)
        ? String(c)
        : c.toFixed(digits)
      : c

/** A titled table; `digits` fixes the decimals of non-integer numbers. */
export const table = (
  title: string,
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<Cell>>,
  digits = 2
): string => {
  const body = rows.map((r) => r.map((c) => show(c, digits)))
  const numeric = header.map(
    (_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === "number" || r[i] === null || r[i] === undefined)
  )
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? "").length)))
  const line = (r: ReadonlyArray<string>) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [title, line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n")
}
