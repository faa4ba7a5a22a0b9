// Small inline-SVG charts (grouped vertical bars with error whiskers, horizontal bars): no scripts, no external assets.

export const PALETTE = ["#3b6fb6", "#e0813a", "#4a9a5b", "#c2464f", "#7b61b0", "#8c6d4f", "#d16ba5", "#6f7f8f"]

export const colorOf = (index: number): string => PALETTE[index % PALETTE.length]!

/** The methods a report shows most, each with a colour of its own in every report and page. */
const METHOD_COLORS: Readonly<Record<string, string>> = { smurfs: PALETTE[0]!, react: PALETTE[1]!, dfsdt: PALETTE[2]! }

/** FNV-1a, 32 bits: a name's hash that is the same in every run and on every machine. */
const hashOf = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}

/**
 * A method's colour, from its name alone (never from the order methods happen to come in), so that
 * smurfs is the same blue in every run's report: smurfs, react and dfsdt have fixed colours; any other
 * name takes one of the other colours of the palette by its hash.
 */
export const methodColor = (name: string): string =>
  METHOD_COLORS[name] ?? PALETTE[3 + (hashOf(name) % (PALETTE.length - 3))]!

export const escapeXml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

export interface Series {
  readonly name: string
  /** One value per category; undefined draws no bar. */
  readonly values: ReadonlyArray<number | undefined>
  /** Half-height of an error whisker per category. */
  readonly errors?: ReadonlyArray<number | undefined> | undefined
  /** Fill colour; defaults to the palette colour of the series' position. */
  readonly color?: string | undefined
}

/** A "nice" axis top: 1, 2 or 5 times a power of ten at or above `value`. */
export const niceMax = (value: number): number => {
  if (value <= 0) return 1
  const p = 10 ** Math.floor(Math.log10(value))
  return [1, 2, 5, 10].map((m) => m * p).find((m) => m >= value) ?? 10 * p
}

const fmt = (v: number) => (Math.abs(v) >= 100 || Number.isInteger(v) ? v.toFixed(0) : v.toFixed(1))

const WIDTH = 1000

const svg = (height: number, body: ReadonlyArray<string>, label: string) =>
  `<svg viewBox="0 0 ${WIDTH} ${height}" width="100%" role="img" aria-label="${escapeXml(label)}" preserveAspectRatio="xMinYMin meet">${body.join("")}</svg>`

/** Vertical bars grouped by category, one colour per series (legend drawn by the page), values on top. */
export const groupedBars = (o: {
  readonly categories: ReadonlyArray<string>
  readonly series: ReadonlyArray<Series>
  readonly max?: number
  readonly axis: string
}): string => {
  const plotTop = 22,
    plotHeight = 240,
    left = 64,
    right = 12
  const height = plotTop + plotHeight + 32
  const top =
    o.max ?? niceMax(Math.max(0, ...o.series.flatMap((s) => s.values.map((v, i) => (v ?? 0) + (s.errors?.[i] ?? 0)))))
  const slot = (WIDTH - left - right) / Math.max(1, o.categories.length)
  const barWidth = Math.min(56, (slot * 0.8) / Math.max(1, o.series.length))
  const y = (v: number) => plotTop + plotHeight - (Math.min(v, top) / top) * plotHeight
  const parts: Array<string> = []
  for (let t = 0; t <= 4; t++) {
    const v = (top * t) / 4
    parts.push(`<line x1="${left}" x2="${WIDTH - right}" y1="${y(v)}" y2="${y(v)}" class="grid"/>`)
    parts.push(`<text x="${left - 8}" y="${y(v) + 4}" class="tick" text-anchor="end">${fmt(v)}</text>`)
  }
  parts.push(
    `<text x="16" y="${plotTop + plotHeight / 2}" class="axis" transform="rotate(-90 16 ${plotTop + plotHeight / 2})" text-anchor="middle">${escapeXml(o.axis)}</text>`
  )
  o.categories.forEach((category, c) => {
    const present = o.series.map((s, i) => ({ s, i })).filter(({ s }) => s.values[c] !== undefined)
    const start = left + c * slot + (slot - barWidth * present.length) / 2
    present.forEach(({ s, i }, k) => {
      const v = s.values[c]!
      const x = start + k * barWidth
      parts.push(
        `<rect x="${x + 3}" y="${y(v)}" width="${barWidth - 6}" height="${plotTop + plotHeight - y(v)}" fill="${s.color ?? colorOf(i)}" rx="2"><title>${escapeXml(`${s.name} · ${category}: ${fmt(v)}`)}</title></rect>`
      )
      const e = s.errors?.[c]
      if (e !== undefined && e > 0) {
        const cx = x + barWidth / 2
        parts.push(
          `<path d="M${cx} ${y(v + e)}V${y(Math.max(0, v - e))}M${cx - 5} ${y(v + e)}h10M${cx - 5} ${y(Math.max(0, v - e))}h10" class="whisker"/>`
        )
      }
      parts.push(
        `<text x="${x + barWidth / 2}" y="${y(v + (e ?? 0)) - 6}" class="value" text-anchor="middle">${fmt(v)}</text>`
      )
    })
    parts.push(
      `<text x="${left + c * slot + slot / 2}" y="${plotTop + plotHeight + 22}" class="category" text-anchor="middle">${escapeXml(category)}</text>`
    )
  })
  parts.push(
    `<line x1="${left}" x2="${WIDTH - right}" y1="${plotTop + plotHeight}" y2="${plotTop + plotHeight}" class="baseline"/>`
  )
  return svg(height, parts, o.axis)
}

export interface BarRow {
  readonly label: string
  /** One value per segment (stacked) or per series (side by side). */
  readonly values: ReadonlyArray<number | undefined>
}

/**
 * Horizontal bars, one row per label: stacked segments with the total at the end, or one thin bar
 * per series with its value. Labels get as much room as the longest needs.
 */
export const horizontalBars = (o: {
  readonly rows: ReadonlyArray<BarRow>
  readonly names: ReadonlyArray<string>
  readonly stacked: boolean
  readonly axis: string
}): string => {
  const longest = Math.max(8, ...o.rows.map((r) => r.label.length))
  // a label too long for the left margin goes on its own line above its bars, never cut at the edge
  const above = 16 + longest * 7.2 > 380
  const left = above ? 16 : 16 + longest * 7.2,
    right = 70,
    top = 6
  const labelRow = above ? 18 : 0
  const barHeight = o.stacked ? 18 : 12
  const rowHeight = labelRow + (o.stacked ? 28 : 8 + barHeight * o.names.length)
  const plotBottom = top + o.rows.length * rowHeight
  const height = plotBottom + 40
  const totals = o.rows.map((r) =>
    o.stacked ? r.values.reduce<number>((a, b) => a + (b ?? 0), 0) : Math.max(0, ...r.values.map((v) => v ?? 0))
  )
  const max = niceMax(Math.max(0, ...totals))
  const scale = (v: number) => ((WIDTH - left - right) * v) / max
  const parts: Array<string> = []
  for (let t = 0; t <= 4; t++) {
    const x = left + scale((max * t) / 4)
    parts.push(`<line x1="${x}" x2="${x}" y1="${top}" y2="${plotBottom}" class="grid"/>`)
    parts.push(`<text x="${x}" y="${plotBottom + 16}" class="tick" text-anchor="middle">${fmt((max * t) / 4)}</text>`)
  }
  parts.push(
    `<text x="${WIDTH - right}" y="${plotBottom + 34}" class="axis" text-anchor="end">${escapeXml(o.axis)}</text>`
  )
  o.rows.forEach((row, r) => {
    const y = top + r * rowHeight
    parts.push(
      above
        ? `<text x="${left}" y="${y + 14}" class="category">${escapeXml(row.label)}</text>`
        : `<text x="${left - 10}" y="${y + rowHeight / 2 + 4}" class="category" text-anchor="end">${escapeXml(row.label)}</text>`
    )
    // the bars' own band, below the label's line when it has one
    const band = y + labelRow,
      bandHeight = rowHeight - labelRow
    if (o.stacked) {
      let x = left
      row.values.forEach((v, s) => {
        if (!v) return
        parts.push(
          `<rect x="${x}" y="${band + (bandHeight - barHeight) / 2}" width="${scale(v)}" height="${barHeight}" fill="${colorOf(s)}"><title>${escapeXml(`${row.label} · ${o.names[s]}: ${fmt(v)}`)}</title></rect>`
        )
        x += scale(v)
      })
      const known = row.values.some((v) => v !== undefined)
      parts.push(
        `<text x="${x + 6}" y="${band + bandHeight / 2 + 4}" class="value">${known ? fmt(totals[r]!) : "n/a"}</text>`
      )
    } else {
      row.values.forEach((v, s) => {
        const by = band + 4 + s * barHeight
        if (v === undefined) return
        parts.push(
          `<rect x="${left}" y="${by + 1}" width="${scale(v)}" height="${barHeight - 2}" fill="${colorOf(s)}" rx="1"><title>${escapeXml(`${row.label} · ${o.names[s]}: ${fmt(v)}`)}</title></rect>`
        )
        parts.push(`<text x="${left + scale(v) + 5}" y="${by + barHeight - 2}" class="value">${fmt(v)}</text>`)
      })
    }
  })
  parts.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${plotBottom}" class="baseline"/>`)
  return svg(height, parts, o.axis)
}
