// Test helper: a valid reply for each agent of the Smurfs pipeline (and the chat's intent step), by the JSON Schema
// the agent asked for; every message goes to the pipeline, which computes 6 * 7 with the demo calculator.

export const answerFor = (schema: any): Record<string, unknown> => {
  const keys = Object.keys(schema?.properties ?? {})
  if (keys.includes("intent")) return { intent: "task", task: "What is 6 times 7?" }
  if (keys.includes("subtasks")) return { subtasks: ["Compute 6 * 7 with the calculator"] }
  // the fused executor's one object (the default loop), before the three-call executor's requests
  if (keys.includes("arguments"))
    return { thought: "The calculator can multiply.", tool: "calculator", arguments: { expression: "6 * 7" } }
  if (keys.includes("thought")) return { thought: "The calculator can multiply." }
  if (keys.includes("tool")) return { tool: "calculator" }
  if (keys.includes("expression")) return { expression: "6 * 7" }
  // the verifier's verdict, or the fused step's answer with its verdict
  if (keys.includes("status"))
    return {
      ...(keys.includes("answer") ? { answer: "6 * 7 = 42" } : {}),
      status: "solved",
      reason: "the product was computed"
    }
  return { answer: "6 * 7 = 42" }
}
