// Where the distributed bench's queue lives: a redis:// URL to BullMQ connection options, and the queue's names.
// Loads neither bullmq nor ioredis (optional peer packages): commands read their defaults and check URLs from here.
import type { ConnectionOptions } from "bullmq"
import * as Data from "effect/Data"
import type { RedisOptions } from "ioredis"
import type { FailureKind } from "../../src/failure.ts"

/** The --queue URL cannot be used. */
export class QueueUrlError extends Data.TaggedError("QueueUrlError")<{
  readonly url: string
  readonly problem: string
}> {
  get kind(): FailureKind {
    return "bad-input"
  }
  override get message() {
    return `--queue ${this.url}: ${this.problem}. Give redis://[user:password@]host:port[/db], e.g. redis://127.0.0.1:6379/0.`
  }
}

/** Redis could not be reached or used. */
export class QueueUnavailable extends Data.TaggedError("QueueUnavailable")<{
  readonly url: string
  readonly detail: string
}> {
  get kind(): FailureKind {
    return "unavailable"
  }
  override get message() {
    return `Cannot use the queue at ${displayQueueUrl(this.url)} (${this.detail}). Start Redis there (redis-server, or apt-get install redis-server), or check --queue.`
  }
}

export const QUEUE_DEFAULTS = {
  attempts: 4,
  backoffMs: 5000,
  sweepMs: 2000,
  connectTimeoutMs: 5000,
  closeTimeoutMs: 2000
} as const

/** A worker's defaults (`smurfs worker`'s flags). */
export const WORKER_DEFAULTS = { concurrency: 4, lockMs: 30_000, progressMs: 1000 } as const

/** The queue every worker takes bench tasks from; jobs carry their run's id and settings. */
export const TASK_QUEUE = "smurfs-bench-tasks"

/** The queue of `smurfs eval --queue`'s judge decisions (one pass label or win round each); the same workers take them. */
export const JUDGE_QUEUE = "smurfs-eval-judgements"

/** `redis://[user:password@]host[:port][/db]` (or rediss:// for TLS) to connection options for BullMQ's ioredis. */
export const connectionOf = (url: string): ConnectionOptions => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new QueueUrlError({ url, problem: "not a URL" })
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:")
    throw new QueueUrlError({ url, problem: `the scheme must be redis: or rediss:, not ${parsed.protocol}` })
  const db = parsed.pathname.replace(/^\//, "")
  if (db !== "" && !/^\d+$/.test(db)) throw new QueueUrlError({ url, problem: `the database "${db}" is not a number` })
  return {
    host: parsed.hostname || "127.0.0.1",
    port: parsed.port === "" ? 6379 : Number(parsed.port),
    db: db === "" ? 0 : Number(db),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === "rediss:" ? { tls: {} } : {}),
    // BullMQ's workers block on Redis; ioredis must not give up on a blocked command
    maxRetriesPerRequest: null
  }
}

/** The URL with any password replaced, for messages and run.json. */
export const displayQueueUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = "***"
    return parsed.toString()
  } catch {
    return url
  }
}

/**
 * Check that Redis answers, with one connection that never retries: BullMQ's own connections
 * reconnect forever, so an unreachable Redis would otherwise hang a command instead of failing it.
 */
export const probeRedis = async (url: string, timeoutMs: number): Promise<void> => {
  const { Redis } = await import("ioredis")
  const client = new Redis({
    ...(connectionOf(url) as RedisOptions),
    lazyConnect: true,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0
  })
  // the socket's own error (ECONNREFUSED, ENOTFOUND, NOAUTH) says more than "Connection is closed"
  let cause: Error | undefined
  client.on("error", (e: Error) => void (cause ??= e))
  try {
    await client.connect()
    await client.ping()
  } catch (e) {
    throw cause ?? e
  } finally {
    client.disconnect()
  }
}
