// The help text and options table of `smurfs data`, light enough to answer --help before the command loads.
import type { ParseArgsOptionsConfig } from "node:util"
import { STABLETOOLBENCH_COMMIT, TAU2_COMMIT, TAU2_DOMAIN_NAMES } from "../../../bench/data-pull/sources.ts"

const HELP = `usage: smurfs data pull stabletoolbench [--cache] [--baselines] [--tools] [--out <dir>] [--offline] [--json]
       smurfs data pull tau2 [--domain retail,airline] [--out <dir>] [--offline] [--json]

Fetch a benchmark's published data into a folder, in the layout smurfs reads: progress bars, an interrupted
download resumed, each file checked (size, git blob id or SHA-256) before it is kept, archives unpacked.
A piece already there is not fetched again (a second pull makes no request).

stabletoolbench (github.com/THUNLP-MT/StableToolBench at ${STABLETOOLBENCH_COMMIT.slice(0, 8)}, Apache-2.0):
  always        solvable_queries/ (the 765 test queries and their ids), LICENSE, and the prompt, judge and
                tool-server files --stb reads (toolbench/, server/*.py)
  --cache       their tool-response cache (huggingface.co/datasets/stabletoolbench/Cache, 236 MB zip)
                into server/tool_response_cache/, which bench's replay finds
  --baselines   their published baseline runs (datasets/stabletoolbench/baselines, 38 MB zip) into baselines/
  --tools       their tools folder (datasets/stabletoolbench/ToolEnv2404, 12 MB tar.gz) into server/tools/,
                where bench reads each tool's own description (--stb-tools)
  then: smurfs bench --data <dir> --stb <dir> ...

tau2 (github.com/sierra-research/tau2-bench at ${TAU2_COMMIT.slice(0, 8)}, MIT):
  each domain's db.json, policy.md, tasks.json and split_tasks.json under data/tau2/domains/<domain>/, the
  user simulator's guidelines, LICENSE
  --domain <d[,d]>  ${TAU2_DOMAIN_NAMES.join(", ")} (default: all)

options:
      --out <dir>   where the data goes (default: data/stabletoolbench or data/tau2 in the current directory)
      --offline     make no request: succeed only if everything is there (also SMURFS_OFFLINE=1); otherwise
                    the error lists each URL to fetch by hand
      --json        print { dataset, dir, pieces: [{ name, what, licence, status }] } as JSON
  -h, --help        show this help

environment: SMURFS_GITHUB_RAW (GitHub's raw file host, default https://raw.githubusercontent.com),
HF_ENDPOINT (Hugging Face, default https://huggingface.co), HF_TOKEN, SMURFS_OFFLINE or HF_HUB_OFFLINE

exit codes: 0 the data is there, 2 bad usage, 3 bad input, 4 unavailable (offline without the data, a host
unreachable, a corrupt download), 130 interrupted`

const OPTIONS = {
  out: { type: "string" },
  cache: { type: "boolean" },
  baselines: { type: "boolean" },
  tools: { type: "boolean" },
  domain: { type: "string", multiple: true },
  offline: { type: "boolean" },
  json: { type: "boolean" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "data", help: HELP, options: OPTIONS, positionals: true } as const
