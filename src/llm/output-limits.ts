// The longest reply each agent role may write: every request carries an output limit (OpenAI-compatible max_tokens,
// Ollama num_predict), so a model that rambles (a random one always does, a small one in a repetition loop
// sometimes does) stops there instead of holding the request until its timeout.

/**
 * Output limits in tokens by role prefix, longest prefix first wins. A role's reply is short by design (a JSON
 * object of a few fields); each limit leaves several times the room a good reply takes. One list, read by
 * `outputLimitOf`; a request that sets its own `maxTokens` keeps it (the tool simulator, FAC, the reference
 * Smurfs agents, the judge with ToolEval's config).
 */
export const OUTPUT_LIMITS: ReadonlyArray<readonly [role: string, tokens: number]> = [
  // a list of subtasks (with dependencies in a graph plan)
  ["planner", 1024],
  // one or two sentences of reasoning
  ["executor.thought", 512],
  // a tool's name
  ["executor.choose", 256],
  // a tool's arguments: text to translate or search for may be long
  ["executor.args", 1024],
  // thought, choice and arguments in one reply
  ["executor.fused", 1536],
  ["executor", 1024],
  // a step's or the task's answer
  ["answerer", 1024],
  // a verdict and a hint
  ["verifier", 512],
  // StableToolBench's ReAct and DFSDT send max_tokens 1024 (toolbench/inference/LLM/chatgpt_function_model.py)
  ["react", 1024],
  ["dfsdt", 1024],
  // ToolEval's evaluator config (tooleval_gpt-3.5-turbo_default/config.yaml): max_tokens 1000
  ["judge", 1000],
  // StableToolBench's tool server: max_tokens 1024 (server/main.py)
  ["tool.simulate", 1024],
  ["retrieval", 1024],
  ["chat", 1024],
  ["doctor", 256]
]

/** The limit of a role nobody listed: no request goes without one. */
export const DEFAULT_OUTPUT_LIMIT = 1024

/** The output limit of a role: its longest listed prefix (`executor.args` before `executor`), else the default. */
export const outputLimitOf = (role: string): number => {
  let best: readonly [string, number] | undefined
  for (const entry of OUTPUT_LIMITS)
    if (
      (role === entry[0] || role.startsWith(`${entry[0]}.`)) &&
      (best === undefined || entry[0].length > best[0].length)
    )
      best = entry
  return best?.[1] ?? DEFAULT_OUTPUT_LIMIT
}
