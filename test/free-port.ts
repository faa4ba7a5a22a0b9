// A free TCP port on 127.0.0.1, for the tests that start a real server on one.
import { createServer } from "node:net"

/** A port nothing listens on at the moment of asking (the OS picks it; the probe closes before it resolves). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
