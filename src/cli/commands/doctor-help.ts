// The help text and options table of `smurfs doctor`, light enough to answer --help before the command loads.
import type { ParseArgsOptionsConfig } from "node:util"

const HELP = `usage: smurfs doctor [--model <spec>] [--tools <source>]... [--timeout <ms>] [--json]

Checks the model setup: the server answers, it has the model, the model supports tool calling,
and it can reply with structured JSON. With --tools, checks each tool source: it loads, lists its
tools and (an MCP server) answers a ping; the model is then checked only when --model is given.
Prints what to do about anything that fails.

options:
  -m, --model <spec>   ollama:<model>, openai:<model>, llama:<file.gguf>, scripted:<file.json> or sim[:options]
                       (default: $SMURFS_MODEL, else ollama:qwen2.5:7b)
  -t, --tools <source> a tool source to check (demo, a module, an api_list .json, "mcp:<command>",
                       mcp+http(s)://<url>); repeat for several
      --mcp-env <NAME[=value]>
                       a variable stdio MCP servers get beside the SDK's safe set (NODE_EXTRA_CA_CERTS,
                       HTTPS_PROXY, a token: NAME passes yours, NAME=value sets one); repeat for more
      --json           print the checks as JSON: { model: { spec, checks, problem? }, tools? }
      --timeout <ms>   how long the test reply may take (default 120000; a cold model loads slowly)
  -h, --help           show this help

environment: OLLAMA_HOST (Ollama's address), OPENAI_BASE_URL and OPENAI_API_KEY (OpenAI-compatible servers),
SMURFS_LLAMA_THREADS and SMURFS_LLAMA_GPU (the embedded llama: engine)

exit codes: 0 all good, 1 the test reply failed, 2 bad usage, 3 invalid model spec or a tool source failed,
4 server unreachable or model missing`

/** The options of `smurfs doctor`, in node:util parseArgs' shape. */
const OPTIONS = {
  model: { type: "string", short: "m" },
  tools: { type: "string", short: "t", multiple: true },
  "mcp-env": { type: "string", multiple: true },
  timeout: { type: "string" },
  json: { type: "boolean" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "doctor", help: HELP, options: OPTIONS } as const
