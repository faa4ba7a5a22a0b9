// Tokens for lexical search: words split at case and digit boundaries, stop words dropped, plurals folded.

/** Words that carry no meaning for choosing a tool; frequent in queries ("I need to get the ..."). */
const STOP_WORDS = new Set(
  (
    "a about above after again all also am an and any are as at be because been before being below between both but by can could " +
    "did do does doing down during each few for from further had has have having he her here hers him his how i if in into is it its " +
    "itself just me more most my no nor not now of off on once only or other our ours out over own please same she should so some " +
    "such than that the their theirs them then there these they this those through to too under until up very was we were what when " +
    "where which while who whom why will with would you your yours also want wants need needs like get give tell provide help find " +
    "let know could can may might must shall using use via per"
  ).split(" ")
)

/** Split identifiers and prose: snake_case, kebab-case, camelCase, letters/digits. */
export const tokenize = (text: string): Array<string> =>
  text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/([A-Za-z])(\d)|(\d)([A-Za-z])/g, (_m, a?: string, b?: string, c?: string, d?: string) =>
      a ? `${a} ${b}` : `${c} ${d}`
    )
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0)

/**
 * A term as indexed: lowercase, stop words dropped, English plurals folded to the singular
 * ("concerts" and "concert" match; "categories" -> "category"). Deliberately light: a full stemmer
 * conflates too much in API names ("news" -> "new").
 */
export const processTerm = (term: string): string | null => {
  const t = term.toLowerCase()
  if (t.length < 2 || STOP_WORDS.has(t)) return null
  if (t.length > 4 && t.endsWith("ies")) return `${t.slice(0, -3)}y`
  if (t.length > 3 && t.endsWith("s") && !/(ss|us|is|news)$/.test(t)) return t.slice(0, -1)
  return t
}
