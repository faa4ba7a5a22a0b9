import { describe, expect, it } from "vitest"
import { render } from "./prompt-template.ts"

describe("render", () => {
  it("fills each placeholder (spaces inside the braces allowed) with its value as given, never re-reading what it inserted", () => {
    const text = "a {{x}} b {{ y }} c {{x}}"
    expect(render(text, { x: "1", y: 2 })).toBe("a 1 b 2 c 1")
    // the same text again, with other values (its split is kept)
    expect(render(text, { x: "$& {{y}}", y: "" })).toBe("a $& {{y}} b  c $& {{y}}")
    expect(render("no placeholders", {})).toBe("no placeholders")
    expect(render("{{ not-a-name }} {{x}}", { x: "v" })).toBe("{{ not-a-name }} v")
  })

  it("refuses a placeholder without a value, naming the first one missing", () => {
    expect(() => render("{{a}} {{b}}", { b: 1 })).toThrow("prompt placeholder {{a}} has no value")
  })
})
