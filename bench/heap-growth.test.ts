import { describe, expect, it } from "vitest"
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from "./heap-growth.ts"

describe("the heap growth of long runs", () => {
  it("is bounded unless node was given its own value", () => {
    expect(heapGrowthFlag([])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
    expect(heapGrowthFlag(["--max-old-space-size=4096"])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
    expect(heapGrowthFlag(["--heap-growing-percent=80"])).toBeUndefined()
    expect(heapGrowthFlag(["--trace-gc", "--heap_growing_percent=10"])).toBeUndefined()
  })
})
