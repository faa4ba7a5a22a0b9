import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { addCacheEntry } from "./cache-store.ts"

describe("addCacheEntry", () => {
  it("rewrites a cache file as their server's json.dump(indent=4) would: recorded numbers, DEL and non-ASCII escaped", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "smurfs-cache-store-")), "api.json")
    // CPython's json.dumps(..., indent=4) of the entry their server wrote
    const before =
      '{\n    "{\'a\': 1}": {\n        "error": "",\n        "response": {\n            "x": 10.0,\n' +
      '            "s": "\\u007f\\u00e9",\n            "t": 1e-07,\n            "n": 12345678901234567890\n' +
      "        }\n    }\n}"
    writeFileSync(file, before)
    await addCacheEntry(file, "{'b': 2}", { error: "", response: "ok" })
    // CPython's text after adding the entry to the dict
    expect(readFileSync(file, "utf8")).toBe(
      `${before.slice(0, -2)},\n    "{'b': 2}": {\n        "error": "",\n        "response": "ok"\n    }\n}`
    )
  })
})
