// The help text and options table of `smurfs worker`, light enough to answer --help before the command loads.
import type { ParseArgsOptionsConfig } from "node:util"
import { DEFAULT_DATA_DIR } from "../../../bench/datasets.ts"
import { WORKER_DEFAULTS } from "../../../bench/queue/connection.ts"

const HELP = `usage: smurfs worker --queue <redis://host:6379/0> [options]

Take tasks that \`smurfs bench --queue\` put on the queue, run them here, and send each task's record
back through the queue (no shared file system needed); judge decisions that \`smurfs eval --queue\`
put there are made here too, with the eval's judge model (or --model). Run one worker per machine or
model server; stop it with Ctrl-C (running tasks finish first; a second Ctrl-C stops at once and the
queue gives those tasks to another worker).

options:
  --queue <url>             the Redis of the run: redis://[user:password@]host:port[/db] (required)
  --concurrency <n>         tasks run at once (default ${WORKER_DEFAULTS.concurrency}; match the model server's parallelism)
  -m, --model <spec>        the model here, instead of the run's (which a worker takes only when it names no file
                            or folder: ollama:<model>, openai:<model>, sim); for judge decisions, the judge here
  --endpoints <u[,u]>       this machine's servers of the model, each url or url*N
  --model-concurrency <n>   requests in flight per model server
  --lanes <auto|n|off>      model lanes here, instead of the run's: at most n tasks send requests, each keeping its
                            lane (auto: this machine's server's slots when known)
  --timeout <ms>            per-request model timeout
  --data <dir>              this machine's data (recorded responses; with --toolset retrieve, the corpus: the same
                            query files as the coordinator's) (default $SMURFS_DATA, else ${DEFAULT_DATA_DIR})
  --embed-cache <dir>       where this machine caches document embeddings (--toolset retrieve --embed; default
                            ~/.cache/smurfs/embeddings here)
  --responses <file>        recorded responses to replay (default <data>/responses.jsonl when present)
  --cache-dir <dir>         a StableToolBench tool_response_cache folder to replay (default: one found inside or beside --data)
  --stb <dir>               this machine's StableToolBench checkout, for runs and evals that send its prompt texts
  --stb-tools <dir>         this machine's copy of StableToolBench's tools folder, for runs that read one
  --smurfs-src <dir>        this machine's checkout of the Smurfs authors' code, for runs under --profile reference
                            (default $SMURFS_SRC)
  --tau2 <dir>              this machine's τ²-bench checkout, for runs of \`bench --tau2\` (their domain and τ²'s texts
                            are read here)
  --user-model <spec>       the model that plays τ²'s user here, instead of the run's (taken only when it names no
                            file or folder)
  --call-cache <dir>        cache model replies and tool results here
  --store-dir <dir>         where simulated responses are stored here (default a folder under the system's temp dir)
  --lock-ms <ms>            how long a task stays taken without a sign of life; a killed worker's tasks
                            go to another worker after it (default ${WORKER_DEFAULTS.lockMs})
  -h, --help                show this help

A job carries the task and the run's options only: the model server, endpoints, credentials and every
folder come from this worker's own options and environment. With SMURFS_QUEUE_SECRET set (the same on the
coordinator and its workers), jobs and results are signed, and anything unsigned is refused.

exit codes: 0 stopped cleanly, 2 bad usage, 3 bad input (queue URL), 4 queue unavailable, 130 interrupted`

/** The options of `smurfs worker`, in node:util parseArgs' shape. */
const OPTIONS = {
  queue: { type: "string" },
  concurrency: { type: "string" },
  "lock-ms": { type: "string" },
  model: { type: "string", short: "m" },
  endpoints: { type: "string" },
  "model-concurrency": { type: "string" },
  lanes: { type: "string" },
  timeout: { type: "string" },
  data: { type: "string" },
  responses: { type: "string" },
  "cache-dir": { type: "string" },
  stb: { type: "string" },
  "stb-tools": { type: "string" },
  "embed-cache": { type: "string" },
  "call-cache": { type: "string" },
  "store-dir": { type: "string" },
  "smurfs-src": { type: "string" },
  tau2: { type: "string" },
  "user-model": { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "worker", help: HELP, options: OPTIONS } as const
