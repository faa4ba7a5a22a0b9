// The help text and flag table of `smurfs bench` (every flag, its default): answers --help before bench.ts loads.
import type { ParseArgsOptionDescriptor } from "node:util"
import { CONVERSER_NAMES } from "../../../bench/benchmarks/tau2/conversers.ts"
import { GROUPS } from "../../../bench/datasets.ts"
import { RUNNER_DEFAULTS } from "../../../bench/runner.ts"
import { BENCH_DEFAULTS, type BenchSettings } from "../../../bench/settings.ts"
import { DFSDT_DEFAULTS } from "../../agents/dfsdt.ts"
import { METHOD_NAMES } from "../../agents/methods.ts"
import { REACT_DEFAULTS } from "../../agents/react.ts"
import { smurfsDefaults } from "../../agents/smurfs-options.ts"
import { SMURFS_SRC_ENV } from "../../agents/smurfs-source.ts"
import { MODEL_DEFAULTS, THINK_HELP } from "../../llm/spec.ts"
import { STB_ENV } from "../../text/stabletoolbench-files.ts"
import { STB_TOOLS_ENV } from "../../tools/toolbench/tools-folder.ts"
import { SIZE_CAPS } from "../../trace/size-caps.ts"
import { SIMULATOR_ENV } from "../simulator-option.ts"

export const BENCH_HELP = `usage: smurfs bench --out <run dir> [options]

Run methods on StableToolBench queries. Every finished task is written to its own file in the run
directory, so a stopped run (Ctrl-C, a crash, a dead model server) continues with --resume.
At the end, converted/<method>/<group>.json holds StableToolBench's converted predictions.

options:
  --data <dir>              queries/<group>.json and query_ids/<group>.json, or StableToolBench's
                            solvable_queries folder (test_instruction/, test_query_ids/) or the folder
                            holding it, or \`sample\`: the few tasks per group shipped with smurfs
                            (default $SMURFS_DATA, else ${BENCH_DEFAULTS.data})
  --group <G[,G]>           groups to run (default all: ${GROUPS.join(", ")})
  --method <m[,m]>          ${METHOD_NAMES.join(", ")} (default ${BENCH_DEFAULTS.methods.join(",")}); with --tau2
                            ${CONVERSER_NAMES.join(", ")} (default tau2-agent)
  -m, --model <spec>        ollama:<model>, openai:<model>, scripted:<file.json>, sim (default SMURFS_MODEL, else a local Ollama model)
  --env <e[,e]>             tool environments in order: replay, simulated, offline (default ${BENCH_DEFAULTS.envs.join(",")})
  --responses <file>        recorded responses to replay (default <data>/responses.jsonl when present)
  --cache-dir <dir>         a StableToolBench tool_response_cache folder to replay (default: one found
                            inside or beside --data)
  --call-cache <dir>        cache model replies (temperature 0) and tool results here; a repeated run replays them
  --store-dir <dir>         where simulated responses are stored (default <out>/simulated)
  --simulator <spec>        a model (not the one under test) that answers calls nothing recorded, as
                            StableToolBench's tool server does; its responses are added to --cache-dir when
                            given (created when missing), else to <store-dir>/tool_response_cache, in
                            StableToolBench's cache layout; with it the default --env is replay,simulated
                            (default $${SIMULATOR_ENV})
  --simulator-style <s>     with --stb: gpt (server/main.py's prompt) or mirrorapi (server/system_prompts.py
                            and main_mirrorapi_cache.py's prompt) (default gpt); under --profile reference
                            mirrorapi reads and writes no cache, as their MirrorAPI server (default --env simulated)
  --limit <n>               the first n queries of each group
  --ids <a,b>               only these query ids
  --toolset <t>             a task's tools: all (its whole api_list), relevant (only its relevant APIs), or
                            retrieve[:k] (the top k, default 5, retrieved from every API of every query file
                            under --data; the smurfs executor retrieves per subtask) (default all; under
                            --profile reference smurfs gets its relevant APIs, react/dfsdt the api_list)
  --method-toolset <m=t>    one method's own toolset, all or relevant, over --toolset and the profile's
                            (repeatable or comma-separated: smurfs=relevant,react=all)
  --embed <spec>            with retrieve: hybrid retrieval with this embedding model (ollama:<model>, openai:<model>)
  --embed-cache <dir>       where document embeddings are cached (default ~/.cache/smurfs/embeddings)
  --rerank                  with retrieve: the model re-ranks the top 20 candidates
  --concurrency <n>         tasks run at once (default ${BENCH_DEFAULTS.concurrency})
  --model-concurrency <n>   requests in flight per model server (default: --concurrency for openai, 1 for ollama)
  --slot-affinity <auto|n>  llama.cpp's server (openai:): each task's requests on one of its n slots (id_slot,
                            cache_prompt), auto reads them from its /props; see docs/performance.md
  --lanes <auto|n|off>      model lanes: at most n tasks send requests at once, each keeping its lane (and with
                            --slot-affinity lane i's slot) until it ends, so that more tasks than the server has
                            slots do not evict each other's prefixes; auto: the server's slots when known
                            (llama.cpp's /props, llama: sequences, ollama: --model-concurrency or
                            OLLAMA_NUM_PARALLEL), else off (default auto)
  --lane-grace <ms>         a task with no request in flight this long gives its lane to a waiting task and queues
                            again (a slow tool call; default 2000)
  --endpoints <u[,u]>       several servers of the same model, each url or url*N (N: requests it serves at once);
                            requests go to the least-loaded healthy one, a failing one is taken out and probed
  --queue <redis://...>     hand the tasks to \`smurfs worker\` processes through a BullMQ queue on Redis
                            instead of running them here; records still land in --out
  --out <dir>               the run directory (required)
  --resume                  continue the run in --out, skipping finished tasks (and runs); refused when the settings
                            differ (model, data, methods, groups, environments, toolset, limits, method options);
                            a larger --runs adds the missing runs
  --force                   with --resume: continue even when the settings differ (run.json records the difference)
  --tool-calling <m>        auto, native or json: how react/dfsdt act (default auto: native when the model calls
                            tools) and smurfs' fused executor (auto: json, which keeps its requests in one cached
                            prefix; native on request)
  --executor <e>            smurfs (improved): fused (default: one request per step for thought, tool and arguments,
                            one for answer and verdict) or three-call (the paper's: thought, tool, arguments, answer,
                            verdict); reference always runs the authors' three
  --tries <n>               react: chains per task, CoT@n (default ${REACT_DEFAULTS.tries})
  --smurfs-max-steps <n>    smurfs: accepted steps on a subtask's path before it is answered from memory;
                            a failed call costs none, a backtrack gives one back (default ${smurfsDefaults.maxSteps})
  --single-chain-max-step <n>
                            react/dfsdt: tree nodes per chain, StableToolBench's single_chain_max_step
                            (a thought 1, a call 2; default ${REACT_DEFAULTS.singleChainMaxStep}); the old --max-steps is refused
  --budget <n>              dfsdt: model calls per task (default ${DFSDT_DEFAULTS.budget})
  --stb <dir>               react/dfsdt send StableToolBench's own prompt texts, read from this checkout
                            (the folder holding toolbench/; default ${STB_ENV}); without it, our own wording
  --stb-tools <dir>         StableToolBench's tools folder (<Category>/<tool>.json): each tool's line in the task
                            description and the simulator's api_doc carry the tool's own description (default
                            ${STB_TOOLS_ENV}, else --stb's server/tools when \`smurfs data pull stabletoolbench
                            --tools\` put it there); without it, a tool is described by its first API's description
  --profile <improved|reference>
                            improved (default): our methods; reference: the Smurfs authors' agents and
                            StableToolBench's baselines as they ran (needs --smurfs-src and/or --stb)
  --smurfs-src <dir>        a checkout of the Smurfs authors' code (default ${SMURFS_SRC_ENV}), for --profile reference
  --temperature <t>         sampling temperature (default ${MODEL_DEFAULTS.temperature}; reference: 0.95 smurfs, 1.0 react/dfsdt)
  --seed <n>                sampling seed (default ${MODEL_DEFAULTS.seed})
  --runs <n>                solve each task n times per method, run r with seed --seed + r, each its own record
                            (tasks/<method>/<group>/<id>.run<r>.json after run 0); at temperature 0 the runs are
                            identical unless the server samples anyway (default 1)
  --seeds <a,b,...>         the agent runs' seeds, one run each (instead of --runs)
  --replay-from <run>       re-run a finished run into --out with no model at all: each task answered from its
                            recorded model replies, its tools from the run's recorded (and simulated) responses;
                            every trajectory is checked against its record and each task that diverges is named
                            with its first differing event (also in <out>/replay.json); exit 1 when any diverges
  --num-ctx <n>             the model's context window in tokens (default ${MODEL_DEFAULTS.numCtx})
  --nudge <on|off>, --validate-args <on|off>, --parallel-calls <on|off>
                            react/dfsdt, over the profile's: remind after a reply without a call (improved on);
                            validate arguments before a call (improved on); run every call of a reply (reference on)
  --observation-limit <n>   characters of a tool response the model sees (default ${REACT_DEFAULTS.observationLimit})
  --timeout <ms>            per-request model timeout (default ${MODEL_DEFAULTS.timeoutMs})
  --think <on|off|low|medium|high>
                            ${THINK_HELP}
  --stop-after <n>          stop (exit 4) when n tasks in a row fail because of the model server (default ${RUNNER_DEFAULTS.stopAfterUnreachable})
  --full-trace              keep every prompt in the task records (large)
  --max-record-bytes <n>    largest task record file; past it long strings are cut harder (default ${SIZE_CAPS.recordBytes})
  --tau2 <dir>              run τ²-bench instead: conversations of --domain's tasks between a --method agent
                            (${CONVERSER_NAMES.join(", ")}) and a simulated user, read from this τ² checkout (the folder
                            holding data/tau2/); each conversation (task x agent x trial) is one record with every
                            message, tool call and database write, scored as τ² scores it (docs/benchmark.md)
  --domain <name>           with --tau2: the domain (default retail)
  --user-model <spec>       with --tau2: the model that plays the user, prompted with τ²'s own guidelines (any
                            provider; required)
  --judge <spec>            with --tau2: a model that judges the tasks' natural-language assertions as τ²'s
                            NLAssertionsEvaluator does (experimental in τ²; its prompt from the checkout's
                            src/tau2/evaluator when present); without it NL_ASSERTION is reported not evaluated
  --task-split <name>       with --tau2: only the tasks of this split of split_tasks.json (base, train, test;
                            default every task, τ²'s base)
  --trials <k>              with --tau2: conversations per task and agent, each with its seed (= --runs k);
                            compare shows pass^1..pass^k
  --json                    print the summary as JSON on stdout (progress stays on stderr)
  -h, --help                show this help

A task the model server failed (refused connection, 404, 429/503 after retries, a timeout) is
recorded as "error", never as an answer or a give-up; --resume runs it again. A task's first
timed-out call ends it (the server is suspect), so a hung server costs one --timeout per task.

exit codes: 0 every task recorded, 1 some tasks left undone (rerun with --resume), 2 bad usage,
3 bad input (data, run directory, model spec, environments), 4 model unavailable (the server failed
every task run, or --stop-after tasks in a row), 130 interrupted`

/** How bench.ts reads a flag's text into its setting (its READERS, by name: this table stays light for --help). */
export type ReaderName =
  | "path"
  | "list"
  | "methods"
  | "text"
  | "simulatorStyle"
  | "int"
  | "toolset"
  | "methodToolsets"
  | "flag"
  | "slotAffinity"
  | "lanes"
  | "laneGrace"
  | "toolCalling"
  | "executor"
  | "stb"
  | "stbTools"
  | "profile"
  | "smurfsSrc"
  | "temperature"
  | "seed"
  | "seeds"
  | "think"

/** A flag in node:util parseArgs' shape, and the setting it fills and how (parseArgs ignores `setting`). */
export type BenchOption = ParseArgsOptionDescriptor & { readonly setting?: readonly [keyof BenchSettings, ReaderName] }

/**
 * The options of `smurfs bench`: each flag and the setting it fills. Adding a setting is its line in
 * the BenchSettings schema, its line here, its reader in bench.ts and its line in the help.
 */
export const BENCH_OPTIONS = {
  data: { type: "string", setting: ["data", "path"] },
  group: { type: "string", multiple: true, setting: ["groups", "list"] },
  method: { type: "string", multiple: true, setting: ["methods", "methods"] },
  model: { type: "string", short: "m", setting: ["model", "text"] },
  env: { type: "string", multiple: true, setting: ["envs", "list"] },
  responses: { type: "string", setting: ["responses", "text"] },
  "cache-dir": { type: "string", setting: ["cacheDir", "text"] },
  "store-dir": { type: "string", setting: ["storeDir", "text"] },
  // the simulated tool server (issue 25 §1)
  simulator: { type: "string", setting: ["simulator", "text"] },
  "simulator-style": { type: "string", setting: ["simulatorStyle", "simulatorStyle"] },
  "call-cache": { type: "string", setting: ["callCache", "path"] },
  limit: { type: "string", setting: ["limit", "int"] },
  ids: { type: "string", multiple: true, setting: ["ids", "list"] },
  toolset: { type: "string", setting: ["toolset", "toolset"] },
  "method-toolset": { type: "string", multiple: true, setting: ["methodToolsets", "methodToolsets"] },
  embed: { type: "string", setting: ["embed", "text"] },
  "embed-cache": { type: "string", setting: ["embedCache", "path"] },
  rerank: { type: "boolean", setting: ["rerank", "flag"] },
  concurrency: { type: "string", setting: ["concurrency", "int"] },
  "model-concurrency": { type: "string", setting: ["modelConcurrency", "int"] },
  "slot-affinity": { type: "string", setting: ["slotAffinity", "slotAffinity"] },
  lanes: { type: "string", setting: ["lanes", "lanes"] },
  "lane-grace": { type: "string", setting: ["laneGraceMs", "laneGrace"] },
  endpoints: { type: "string", multiple: true, setting: ["endpoints", "list"] },
  queue: { type: "string", setting: ["queue", "text"] },
  out: { type: "string" },
  resume: { type: "boolean", setting: ["resume", "flag"] },
  force: { type: "boolean", setting: ["force", "flag"] },
  "tool-calling": { type: "string", setting: ["toolCalling", "toolCalling"] },
  executor: { type: "string", setting: ["executor", "executor"] },
  tries: { type: "string", setting: ["tries", "int"] },
  "smurfs-max-steps": { type: "string", setting: ["smurfsMaxSteps", "int"] },
  "single-chain-max-step": { type: "string", setting: ["singleChainMaxStep", "int"] },
  // refused with a hint: it set both limits at once, which never meant the same thing
  "max-steps": { type: "string" },
  budget: { type: "string", setting: ["budget", "int"] },
  "observation-limit": { type: "string", setting: ["observationLimit", "int"] },
  stb: { type: "string", setting: ["stb", "stb"] },
  "stb-tools": { type: "string", setting: ["stbTools", "stbTools"] },
  // the profile and the sampling settings (issue 25): each profile setting stays overridable by its own flag
  profile: { type: "string", setting: ["profile", "profile"] },
  "smurfs-src": { type: "string", setting: ["smurfsSrc", "smurfsSrc"] },
  temperature: { type: "string", setting: ["temperature", "temperature"] },
  seed: { type: "string", setting: ["seed", "seed"] },
  // repeated agent runs (issue 31 §1): one record per run, each with its seed
  runs: { type: "string", setting: ["runs", "int"] },
  seeds: { type: "string", multiple: true, setting: ["seeds", "seeds"] },
  // verified replay (issue 31 §6)
  "replay-from": { type: "string", setting: ["replayFrom", "path"] },
  "num-ctx": { type: "string", setting: ["numCtx", "int"] },
  // read together into chainOverrides
  nudge: { type: "string" },
  "validate-args": { type: "string" },
  "parallel-calls": { type: "string" },
  timeout: { type: "string", setting: ["timeoutMs", "int"] },
  think: { type: "string", setting: ["think", "think"] },
  "stop-after": { type: "string", setting: ["stopAfter", "int"] },
  "full-trace": { type: "boolean", setting: ["fullTrace", "flag"] },
  "max-record-bytes": { type: "string", setting: ["maxRecordBytes", "int"] },
  // τ²-bench (issue 34): conversations with a simulated user
  tau2: { type: "string", setting: ["tau2", "path"] },
  domain: { type: "string", setting: ["domain", "text"] },
  "user-model": { type: "string", setting: ["userModel", "text"] },
  judge: { type: "string", setting: ["judge", "text"] },
  "task-split": { type: "string", setting: ["taskSplit", "text"] },
  trials: { type: "string", setting: ["runs", "int"] },
  json: { type: "boolean" }
} as const satisfies Record<string, BenchOption>

export const COMMAND = { name: "bench", help: BENCH_HELP, options: BENCH_OPTIONS } as const
