// The help text and options table of `smurfs eval` (every flag, its default): answers --help before eval.ts loads.
import type { ParseArgsOptionsConfig } from "node:util"
import { EVAL_DEFAULTS } from "../../../bench/eval/evaluate.ts"
import { QUEUE_CONCURRENCY } from "../../../bench/eval/run-eval.ts"
import { MODEL_DEFAULTS, THINK_HELP } from "../../llm/spec.ts"
import { STB_ENV } from "../../text/stabletoolbench-files.ts"

export const EVAL_HELP = `usage: smurfs eval --run <dir> --judge <model spec> [options]

Judge every task of a run: K pass labels per task (ToolEval's SoPR) and, with --reference, K win
rounds per task against another run (SoWR). Labels are stored per task under <run>/eval/<judge>/,
so an interrupted eval resumes where it stopped and nothing is judged twice.

options:
  --run <dir>               a run directory from \`smurfs bench\`, or a StableToolBench folder with
                            model_predictions_converted/<method>/<group>.json, or with raw answers
                            answer/<model>/<group>/<qid>_<method>.json (converted as ToolEval does)
  --judge <spec>            the judge model: ollama:<model>, openai:<model>, scripted:<file.json>, ...
  --k <n>                   judge runs (pass) and rounds (win) per task (default ${EVAL_DEFAULTS.k})
  --reference <dir>         a reference run (or StableToolBench folder) to compute the win rate against
  --reference-method <m>    the reference's method when it has several (default: its only method,
                            else the method of the same name)
  --method <m>              judge only this method (repeatable)
  --group <g>               judge only this group (repeatable)
  --concurrency <n>         tasks judged at the same time (default ${EVAL_DEFAULTS.concurrency}; with --queue ${QUEUE_CONCURRENCY})
  --seed <n>                base seed: judge run r samples with its own seed, and win rounds shuffle
                            the answer order with it (default ${EVAL_DEFAULTS.seed})
  --temperature <t>         the judge model's sampling temperature where a judge prompt sets none (default ${MODEL_DEFAULTS.temperature})
  --num-ctx <n>             the judge model's context window in tokens (default ${MODEL_DEFAULTS.numCtx})
  --think <on|off|low|medium|high>
                            the judge model's ${THINK_HELP}
  --timeout <ms>            per-request judge model timeout (default ${MODEL_DEFAULTS.timeoutMs})
  --stb <dir>               judge with ToolEval's own template and function schemas, read from this
                            StableToolBench checkout (the folder holding toolbench/; default ${STB_ENV});
                            without it, our own wording of the same rules
  --fac                     also judge FAC (StableToolBench-MirrorAPI's final-answer correctness): the prompt of
                            toolbench/tooleval/fac_eval.py from --stb on the query and the final answer only,
                            one Solved/Unsolved label per task, shown beside the pass rate (needs --stb)
  --win-statuses <s>        how a win round gets the answers' statuses: rejudge (check_is_solved on both
                            answers in every round; default), pass-labels (ToolBench's eval_preference.py:
                            the per-task pass labels, majority of the K runs with coin tosses, decide first,
                            then the stored statuses) or stabletoolbench (theirs with its pass-rate CSVs found:
                            the same pass-label step, then a re-judge)
  --force                   judge again even where labels of the same settings are stored (labels of other
                            settings, texts, --seed, --k or the run's --profile, are always made anew; the old
                            ones are set aside beside them as <task>.json.before-<time>)
  --out <dir>               write eval/ here instead of into the run directory (for read-only folders);
                            \`smurfs compare <dir>\` then shows these labels
  --queue <redis://...>     hand each judge decision to \`smurfs worker\` processes through a BullMQ queue
                            on Redis (each judges with its own server of the judge model, or its --model);
                            the decisions come back through the queue and are stored here as without it
  --json                    print the result rows as JSON instead of the table
  -h, --help                show this help

exit codes: 0 judged, 1 every judge decision failed (unreadable replies), 2 bad usage, 3 bad input
(run directory, judge spec, --out, --stb), 4 the judge's model server (or the queue) unavailable,
130 interrupted (the labels judged so far are kept)`

/** The options of `smurfs eval`, in node:util parseArgs' shape. */
const OPTIONS = {
  run: { type: "string" },
  judge: { type: "string" },
  k: { type: "string" },
  reference: { type: "string" },
  "reference-method": { type: "string" },
  method: { type: "string", multiple: true },
  group: { type: "string", multiple: true },
  concurrency: { type: "string" },
  seed: { type: "string" },
  temperature: { type: "string" },
  "num-ctx": { type: "string" },
  think: { type: "string" },
  timeout: { type: "string" },
  out: { type: "string" },
  stb: { type: "string" },
  json: { type: "boolean" },
  queue: { type: "string" },
  fac: { type: "boolean" },
  force: { type: "boolean" },
  "win-statuses": { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "eval", help: EVAL_HELP, options: OPTIONS } as const
