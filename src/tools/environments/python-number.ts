// Numbers as Python writes them (`repr`, `json.dumps`), so that recorded calls' keys match ours.

/**
 * A number literal of recorded JSON text, kept as Python printed it: JSON.parse would turn `5.0`
 * into 5 and lose that the call was made with a float.
 */
export class PythonNumber {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

/**
 * Python's repr of a float: the shortest digits that round-trip (as JavaScript's), in fixed notation
 * when the decimal exponent is from -4 to 15 (always with a fraction: `5.0`), else in scientific
 * notation with a signed exponent of at least two digits (`1e-07`, `1e+16`, `1.5e+16`).
 */
export const pythonFloat = (n: number): string => {
  if (Number.isNaN(n)) return "nan"
  if (!Number.isFinite(n)) return n > 0 ? "inf" : "-inf"
  if (n === 0) return Object.is(n, -0) ? "-0.0" : "0.0"
  const [mantissa, exp] = n.toExponential().split("e") as [string, string]
  const exponent = Number(exp)
  if (exponent < -4 || exponent >= 16)
    return `${mantissa}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`
  const fixed = String(n).includes("e")
    ? n.toFixed(Math.max(0, -exponent + mantissa.replace(/^-?\d\.?/, "").length))
    : String(n)
  return fixed.includes(".") ? fixed : `${fixed}.0`
}

/**
 * A JavaScript number as Python would print the value a model wrote. JavaScript cannot tell `5` from
 * `5.0`: whole numbers below 1e16 are written as ints (as a model usually writes them), the rest as
 * floats; `asFloat` writes whole numbers as floats too, for a second lookup.
 */
export const pythonNumber = (n: number, asFloat = false): string =>
  Number.isInteger(n) && Math.abs(n) < 1e16 && !asFloat ? String(n) : pythonFloat(n)

/** A number literal of JSON text as Python's json.loads then repr would print it: ints as written, floats as floats. */
export const pythonNumberFromJson = (source: string, value: number): string =>
  /[.eE]/.test(source)
    ? pythonFloat(value)
    : /^-?\d+$/.test(source)
      ? source.replace(/^(-?)0+(?=\d)/, "$1")
      : pythonNumber(value)
