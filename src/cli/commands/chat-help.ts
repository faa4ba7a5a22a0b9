// The help text and options table of `smurfs chat`, light enough to answer --help before the command loads.
import type { ParseArgsOptionsConfig } from "node:util"
import { DEFAULT_MODEL_SPEC, MODEL_DEFAULTS, THINK_HELP } from "../../llm/spec.ts"
import { MCP_OPTIONS_HELP } from "./run-help.ts"

const HELP = `usage: smurfs chat [options]

A conversation with the Smurfs agents: small talk and "what can you do?" get a direct reply, requests
the tools cannot serve are refused with a reason, tasks run through the pipeline (each step shown as
in smurfs run). Earlier turns are remembered. The agents may ask you for a missing value.
Type /exit (or press Ctrl-D or Ctrl-C) to end; Ctrl-C while the agents ask you a question cancels
that question only.

options:
  -m, --model <spec>    ollama:<model>, openai:<model>, llama:<file.gguf>, scripted:<file.json> or sim (default SMURFS_MODEL, else ${DEFAULT_MODEL_SPEC})
  -t, --tools <source>  demo, a JS/TS module exporting tools, a StableToolBench api_list JSON,
                        "mcp:<command and args>" or mcp+http(s)://<url>; repeat to combine sources (default demo)
${MCP_OPTIONS_HELP}
      --save <file>     keep the transcript (every turn with its trajectory) as JSON in <file>, rewritten after each turn
      --smurfs-max-steps <n>
                        accepted steps on a subtask's path before it is answered from memory (default 3)
      --timeout <ms>    per-request model timeout (default ${MODEL_DEFAULTS.timeoutMs})
      --num-ctx <n>     context window in tokens (Ollama num_ctx, also the prompt budget)
      --think <on|off|low|medium|high>
                        ${THINK_HELP}
  -h, --help            show this help

exit codes: 0 ended with /exit or Ctrl-D, 2 bad usage, 3 bad input (model spec, tools), 130 ended with Ctrl-C`

/** The options of `smurfs chat`, in node:util parseArgs' shape. */
const OPTIONS = {
  model: { type: "string", short: "m" },
  tools: { type: "string", short: "t", multiple: true, default: ["demo"] },
  save: { type: "string" },
  "mcp-env": { type: "string", multiple: true },
  approve: { type: "string" },
  "smurfs-max-steps": { type: "string" },
  timeout: { type: "string" },
  "num-ctx": { type: "string" },
  think: { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "chat", help: HELP, options: OPTIONS } as const
