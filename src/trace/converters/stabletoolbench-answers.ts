// StableToolBench's raw answers (`answer/<method>/<group>/<qid>_<method>.json`) to their converted
// format, following convert_to_answer_format.py, so that their runs reach our judges as ToolEval's do.
import { z } from "zod"
import type { AnswerNode, ConvertedAnswer } from "./stabletoolbench.ts"

const FINISH = "Finish"

type Flat = Omit<AnswerNode, "next">

const Message = z.looseObject({
  role: z.string(),
  content: z.unknown().optional(),
  function_call: z.looseObject({ name: z.string(), arguments: z.unknown() }).optional(),
  tool_calls: z
    .array(
      z.looseObject({
        id: z.string().optional(),
        function: z.looseObject({ name: z.string(), arguments: z.unknown() })
      })
    )
    .nullable()
    .optional(),
  tool_call_id: z.string().optional()
})
type Message = z.infer<typeof Message>

interface TreeNode {
  readonly node_type: string
  readonly description?: unknown
  readonly observation?: unknown
  readonly children?: ReadonlyArray<TreeNode> | null
}
const TreeNodeSchema: z.ZodType<TreeNode> = z.lazy(() =>
  z.looseObject({
    node_type: z.string(),
    description: z.unknown().optional(),
    observation: z.unknown().optional(),
    children: z.array(TreeNodeSchema).nullable().optional()
  })
)

export const AnswerFile = z.looseObject({
  answer_generation: z.looseObject({
    valid_data: z.boolean(),
    final_answer: z.string(),
    function: z.array(z.unknown()),
    query: z.string(),
    train_messages: z.array(z.array(Message)).optional()
  }),
  trys: z.array(z.looseObject({ chain: z.array(TreeNodeSchema) })).optional(),
  tree: z.looseObject({ tree: TreeNodeSchema }).optional()
})
export type AnswerFile = z.infer<typeof AnswerFile>

const text = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value ?? ""))
const tool = (name: string, args: unknown, response: unknown): Flat => ({
  role: "tool",
  message: { name, arguments: text(args), response: text(response) }
})

/** process_valid_data: the chosen path's messages; a reply that called a function becomes its tool node(s) only. */
const fromMessages = (conversation: ReadonlyArray<Message>): Array<Flat> => {
  const nodes: Array<Flat> = []
  for (let i = 2; i < conversation.length; i++) {
    const message = conversation[i]!
    if (message.role !== "assistant") continue
    if (message.function_call) {
      const { name, arguments: args } = message.function_call
      nodes.push(tool(name, args, name === FINISH ? "" : conversation[i + 1]?.content))
      i++
    } else if (message.tool_calls) {
      for (const call of message.tool_calls) {
        if (call.function.name === FINISH) {
          nodes.push(tool(FINISH, call.function.arguments, ""))
          break
        }
        const answer = conversation.slice(i + 1).find((m) => m.role === "tool" && m.tool_call_id === call.id)
        if (answer) nodes.push(tool(call.function.name, call.function.arguments, answer.content))
      }
    } else nodes.push({ role: "assistant", message: text(message.content) })
  }
  return nodes
}

/** A try's chain (CoT) or a path down the tree (DFS): thoughts, and each action with its input's observation. */
const fromChain = (chain: ReadonlyArray<TreeNode>): Array<Flat> => {
  const nodes: Array<Flat> = []
  for (let i = 0; i < chain.length; i++) {
    const node = chain[i]!
    if (node.node_type === "Thought") nodes.push({ role: "assistant", message: text(node.description) })
    else if (node.node_type === "Action") {
      const input = chain[i + 1]
      nodes.push(tool(text(node.description), input?.description, input?.observation))
      i++
    }
  }
  return nodes
}

/** The first-child path below the tree's root. */
const firstPath = (root: TreeNode): Array<TreeNode> => {
  const path: Array<TreeNode> = []
  for (let node = root.children?.[0]; node; node = node.children?.[0]) path.push(node)
  return path
}

/**
 * One raw answer as its converted prediction. Where their converter picks at random (one try of
 * several, one branch of a tree without an answer), the first is taken.
 */
export const convertAnswerFile = (method: string, raw: unknown): ConvertedAnswer => {
  const data = AnswerFile.parse(raw)
  const generation = data.answer_generation
  let steps: Array<Flat>
  if (generation.valid_data) steps = fromMessages(generation.train_messages?.at(-1) ?? [])
  else if (/cot/i.test(method)) steps = fromChain(data.trys?.[0]?.chain ?? [])
  else if (/dfs/i.test(method)) steps = fromChain(data.tree ? firstPath(data.tree.tree) : [])
  else throw new Error(`unknown method ${method}: StableToolBench's converter knows CoT and DFS answers`)
  const flat: Array<Flat> = [{ role: "system", message: "" }, { role: "user", message: "" }, ...steps]
  let details: Array<AnswerNode> = []
  for (const node of [...flat].reverse()) details = [{ ...node, next: details }]
  return {
    query: generation.query,
    available_tools: generation.function as ConvertedAnswer["available_tools"],
    answer: { method, total_steps: flat.length, final_answer: generation.final_answer, answer_details: details }
  }
}
