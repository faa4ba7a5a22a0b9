// Split an MCP server's command line into words, without a shell: quotes group, nothing is expanded.

/** A command line that cannot be split (an unclosed quote). */
export class CommandLineError extends Error {}

/**
 * Words of a command line: whitespace separates; '...' is literal; "..." is literal except `\"` and
 * `\\`; a backslash outside quotes escapes the next character. No variables, globs or operators are
 * interpreted: the server is started directly, never through a shell.
 */
export const splitCommandLine = (line: string): Array<string> => {
  const words: Array<string> = []
  let word = ""
  let inWord = false
  let quote: "'" | '"' | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quote === "'") {
      if (c === "'") quote = undefined
      else word += c
    } else if (quote === '"') {
      if (c === '"') quote = undefined
      else if (c === "\\" && (line[i + 1] === '"' || line[i + 1] === "\\")) word += line[++i]
      else word += c
    } else if (c === "'" || c === '"') {
      quote = c
      inWord = true
    } else if (c === "\\" && i + 1 < line.length) {
      word += line[++i]
      inWord = true
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word)
      word = ""
      inWord = false
    } else {
      word += c
      inWord = true
    }
  }
  if (quote) throw new CommandLineError(`the quote ${quote} is never closed`)
  if (inWord) words.push(word)
  return words
}
