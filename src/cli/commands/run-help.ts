// The help text and options table of `smurfs run` (every flag, its default): answers --help before run.ts loads.
import type { ParseArgsOptionsConfig } from "node:util"
import { smurfsDefaults } from "../../agents/smurfs-options.ts"
import { DEFAULT_MODEL_SPEC, MODEL_DEFAULTS, THINK_HELP } from "../../llm/spec.ts"

/** The MCP options' lines of `run`'s and `chat`'s help (both load tools the same way). */
export const MCP_OPTIONS_HELP = `      --mcp-env <NAME[=value]>
                        a variable stdio MCP servers get beside the SDK's safe set (PATH, HOME, ...):
                        NAME passes yours (NODE_EXTRA_CA_CERTS, HTTPS_PROXY, a token), NAME=value sets
                        one; repeat for more (or "mcp-env": [...] in smurfs.config.json)
      --approve <all|none|ask|globs>
                        calls of MCP tools their server does not mark read-only (or marks destructive):
                        all made, none made, ask before each, or only tools matching the globs
                        (write_*,edit_file); a refused call is a failed result the model sees
                        (default ask on a terminal, else all)`

export const RUN_HELP = `usage: smurfs run "<query>" [options]

Solve one query with the Smurfs agents (planner, executor, answerer, verifier) and print each step.

options:
  -m, --model <spec>    ollama:<model>, openai:<model>, llama:<file.gguf>, scripted:<file.json> or sim (default SMURFS_MODEL, else ${DEFAULT_MODEL_SPEC})
  -t, --tools <source>  demo, a JS/TS module exporting tools, a StableToolBench api_list JSON,
                        "mcp:<command and args>" (an MCP server over stdio) or mcp+http(s)://<url>
                        (Streamable HTTP; Authorization header from $SMURFS_MCP_AUTHORIZATION);
                        repeat to combine sources (default demo)
${MCP_OPTIONS_HELP}
      --json            print only the trajectory as JSON
      --smurfs-max-steps <n>
                        accepted steps on a subtask's path before it is answered from memory; a failed
                        call costs none, a backtrack gives one back (default ${smurfsDefaults.maxSteps};
                        --max-steps is its deprecated alias)
      --no-planner      ablation: the query is the only subtask
      --no-answerer     ablation: no per-step summaries (a step's answer is the raw tool response;
                        the final answer is still written)
      --no-verifier     ablation: a plain depth-first search that calls tools until the step limit
      --timeout <ms>    per-request model timeout (default ${MODEL_DEFAULTS.timeoutMs}); a timed-out call is sent once more, then the run gives up
      --num-ctx <n>     context window in tokens (Ollama num_ctx, also the prompt budget)
      --profile <improved|reference>
                        improved (default): our Smurfs; reference: the authors' agents, prompts read from
                        --smurfs-src <dir> (a checkout of their code; default $SMURFS_SRC)
      --executor <three-call|fused>
                        improved: fused (default: one request per step for thought, tool and arguments, one
                        for answer and verdict) or three-call (the paper's: thought, tool, arguments, answer,
                        verdict); reference always runs the authors' three
      --temperature <t> sampling temperature (default ${MODEL_DEFAULTS.temperature}; reference: 0.95)
      --seed <n>        sampling seed (default ${MODEL_DEFAULTS.seed})
      --think <on|off|low|medium|high>
                        ${THINK_HELP}
      --strict          exit with 1 when the task gives up
      --query-id <id>   run this ToolBench task: its query (unless one is given) and its api_list as tools
      --data <dir>      where --query-id's task is (either layout, or \`sample\`, as for bench; default
                        $SMURFS_DATA, else ../shared/toolbench)
      --env <e[,e]>     how the task's tools answer, tried in order: replay, simulated, offline
                        (default replay,offline)
      --store-dir <dir> where simulated responses are stored for the next run to replay
                        (default .smurfs-cache/simulated)
      --simulator <spec>
                        a model (not --model) that answers calls nothing recorded, as StableToolBench's
                        server does; the default --env becomes replay,simulated (default $SMURFS_SIMULATOR);
                        with $SMURFS_STB its prompt is StableToolBench's server/main.py's
      --toolset <t>     the tools the agents see: all (the whole library, default), relevant (with
                        --query-id: the task's relevant APIs) or retrieve[:k] (the top k, default 5,
                        retrieved for the query from the --tools library, or with --query-id from every
                        API of every query file under --data; the executor retrieves again per subtask)
      --embed <spec>    with retrieve: hybrid retrieval with this embedding model (ollama:<model>, openai:<model>)
      --embed-cache <dir>
                        where document embeddings are cached (default ~/.cache/smurfs/embeddings)
      --rerank          with retrieve: the model re-ranks the top 20 candidates
  -h, --help            show this help

exit codes: 0 answered (or gave up without --strict), 1 gave up with --strict, 2 bad usage,
3 bad input (model spec, tools), 4 model unavailable (unreachable, 404, 429/503 after retries,
timed out twice: the run stops at the server's first failure), 130 interrupted`

/** The options of `smurfs run`, in node:util parseArgs' shape. */
const OPTIONS = {
  model: { type: "string", short: "m" },
  tools: { type: "string", short: "t", multiple: true, default: ["demo"] },
  "mcp-env": { type: "string", multiple: true },
  approve: { type: "string" },
  json: { type: "boolean", default: false },
  "smurfs-max-steps": { type: "string" },
  // deprecated alias of --smurfs-max-steps (before the baselines got their own limit)
  "max-steps": { type: "string" },
  "no-planner": { type: "boolean", default: false },
  "no-answerer": { type: "boolean", default: false },
  "no-verifier": { type: "boolean", default: false },
  timeout: { type: "string" },
  "num-ctx": { type: "string" },
  profile: { type: "string" },
  executor: { type: "string" },
  "smurfs-src": { type: "string" },
  temperature: { type: "string" },
  seed: { type: "string" },
  think: { type: "string" },
  strict: { type: "boolean", default: false },
  data: { type: "string" },
  "query-id": { type: "string" },
  env: { type: "string", multiple: true },
  "store-dir": { type: "string" },
  simulator: { type: "string" },
  toolset: { type: "string" },
  embed: { type: "string" },
  "embed-cache": { type: "string" },
  rerank: { type: "boolean", default: false }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "run", help: RUN_HELP, options: OPTIONS, positionals: true } as const
