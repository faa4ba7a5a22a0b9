// The tests' redis-server helper: stopping it twice (a test's own stop, then an afterAll) must not hang.
import { describe, expect, it } from "vitest"
import { redisUnavailable, startRedis } from "./redis-server.ts"

const missing = redisUnavailable()

describe.skipIf(missing !== undefined)(`the redis-server helper${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("stops once, however often stop is called, in turn or at once", async () => {
    const first = await startRedis()
    await first.stop()
    await first.stop() // killed: exitCode stays null, the signal is set; a second wait for "exit" would never end
    const second = await startRedis()
    await Promise.all([second.stop(), second.stop()])
    const state = await fetch(`http://127.0.0.1:${second.port}`).then(
      () => "still listening",
      () => "closed"
    )
    expect(state).toBe("closed")
  }, 60_000)
})
