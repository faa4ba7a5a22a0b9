// Reasoning models' thinking: split `<think>...</think>` out of a reply's text so that it is traced,
// never parsed as the answer and never passed on to another agent.

/** Tags reasoning models wrap their thinking in (qwen3, deepseek-r1: think; some fine-tunes: thinking, reasoning). */
const TAGS = ["think", "thinking", "reasoning"] as const

export interface SplitReply {
  /** The reply without its thinking. */
  readonly text: string
  /** The thinking, when there was any. */
  readonly thinking?: string | undefined
}

/**
 * Split thinking from a reply's text. Handles a closed block anywhere, a block whose opening tag the
 * chat template already sent (text starts mid-thought and only `</think>` appears), and a block cut
 * off by the token limit (no closing tag: everything after the opening tag is thinking).
 */
export const splitThinking = (raw: string): SplitReply => {
  let text = raw
  const thoughts: Array<string> = []
  for (const tag of TAGS) {
    const open = `<${tag}>`
    const close = `</${tag}>`
    if (!text.includes(open) && !text.includes(close)) continue
    const closeAt = text.indexOf(close)
    const openAt = text.indexOf(open)
    if (closeAt >= 0 && (openAt < 0 || closeAt < openAt)) {
      thoughts.push(text.slice(0, closeAt))
      text = text.slice(closeAt + close.length)
    }
    for (let start = text.indexOf(open); start >= 0; start = text.indexOf(open)) {
      const end = text.indexOf(close, start + open.length)
      if (end < 0) {
        thoughts.push(text.slice(start + open.length))
        text = text.slice(0, start)
        break
      }
      thoughts.push(text.slice(start + open.length, end))
      text = text.slice(0, start) + text.slice(end + close.length)
    }
  }
  const thinking = thoughts
    .map((t) => t.trim())
    .filter((t) => t.length > 0)
    .join("\n\n")
  return thoughts.length === 0 ? { text: raw } : { text: text.trim(), ...(thinking ? { thinking } : {}) }
}

/** A reply's text and thinking from a server that may give thinking in a field of its own, in the text, or both. */
export const replyWithThinking = (content: string, field: unknown): SplitReply => {
  const split = splitThinking(content)
  const own = typeof field === "string" && field.trim().length > 0 ? field.trim() : undefined
  const thinking = [own, split.thinking].filter((t): t is string => t !== undefined).join("\n\n")
  return { text: split.text, ...(thinking ? { thinking } : {}) }
}
