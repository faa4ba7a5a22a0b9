// Counts in messages: "1 tool", "2 tools".

/** `count` followed by the noun, in the plural unless the count is exactly one. */
export const plural = (count: number, noun: string, nouns = `${noun}s`): string =>
  `${count} ${count === 1 ? noun : nouns}`
