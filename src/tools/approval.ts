// Approval of side-effecting tool calls (`--approve all|none|ask|<tool globs>`), as Inspect AI's approval policies: a refused call is a failed result the model sees.
import * as Effect from "effect/Effect"
import type { Tool, ToolResult } from "./tool.ts"

/**
 * Which calls of tools that may change things are made:
 * - `all`: every call (no question asked);
 * - `none`: none (read-only tools still run);
 * - `ask`: the user is asked before each call (refused when nobody can be asked);
 * - `globs`: calls of tools whose name matches one of the globs (`*`, `?`) are made, the others refused.
 */
export type ApprovalPolicy =
  | { readonly kind: "all" }
  | { readonly kind: "none" }
  | { readonly kind: "ask" }
  | { readonly kind: "globs"; readonly globs: ReadonlyArray<string> }

/** An `--approve` value that names no policy. */
export class ApprovalSyntaxError extends Error {
  override readonly name = "ApprovalSyntaxError"
}

/** Read an `--approve` value: all, none, ask, or a comma list of tool-name globs (`write_*,edit_file`). */
export const parseApproval = (text: string): ApprovalPolicy => {
  const value = text.trim()
  if (value === "all" || value === "none" || value === "ask") return { kind: value }
  const globs = value
    .split(",")
    .map((g) => g.trim())
    .filter((g) => g.length > 0)
  if (globs.length === 0)
    throw new ApprovalSyntaxError(
      "--approve takes all, none, ask or tool-name globs (e.g. --approve 'read_*,list_directory')"
    )
  const bad = globs.find((g) => !/^[A-Za-z0-9_.*?-]+$/.test(g))
  if (bad !== undefined)
    throw new ApprovalSyntaxError(
      `--approve: "${bad}" is not a tool-name glob (letters, digits, _ - . and the wildcards * and ?)`
    )
  return { kind: "globs", globs }
}

/** The policy as the user would write it, for messages. */
export const approvalText = (policy: ApprovalPolicy): string =>
  policy.kind === "globs" ? policy.globs.join(",") : policy.kind

/** Key of `Tool.meta` holding an MCP tool's annotations (`readOnlyHint`, `destructiveHint`, ...), as its server sent them. */
export const MCP_ANNOTATIONS = "mcpAnnotations"

interface Hints {
  readonly readOnlyHint?: unknown
  readonly destructiveHint?: unknown
}

/**
 * Why a call of this tool needs approval, or undefined when it does not: an MCP tool that its server does
 * not mark read-only (by the MCP spec, an unmarked tool may change things), or marks destructive.
 * Tools of modules and api_list files are the user's own code or recorded responses: never asked about.
 */
export const approvalReason = (tool: Tool): string | undefined => {
  if (tool.meta?.["mcpTool"] === undefined) return undefined
  const hints = (tool.meta?.[MCP_ANNOTATIONS] ?? {}) as Hints
  if (hints.destructiveHint === true) return "its server marks it destructive"
  if (hints.readOnlyHint !== true) return "its server does not mark it read-only"
  return undefined
}

const globRegExp = (glob: string) =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\-]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")}$`
  )

/** Whether a glob policy approves this tool; by its model-safe name or its server's own name for it. */
const matches = (globs: ReadonlyArray<string>, tool: Tool) => {
  const names = [tool.name, String(tool.meta?.["mcpTool"] ?? tool.name)]
  return globs.some((g) => names.some((n) => globRegExp(g).test(n)))
}

/** One call awaiting approval, as the asker shows it. */
export interface ApprovalRequest {
  readonly tool: string
  readonly args: Readonly<Record<string, unknown>>
  /** Why it needs approval ("its server marks it destructive"). */
  readonly reason: string
}

/** Ask the user about one call: true to make it. A rejection counts as a refusal (nobody to ask). */
export type AskApproval = (request: ApprovalRequest) => Promise<boolean>

export interface Approval {
  readonly policy: ApprovalPolicy
  /** Who is asked under `ask`; without it every call that needs approval is refused. */
  readonly ask?: AskApproval | undefined
}

const refused = (tool: Tool, reason: string, why: string): ToolResult => ({
  ok: false,
  content: "",
  error: `the call of tool "${tool.name}" was not approved (${why}; ${reason}). It was not made: do without this tool, or tell the user what you would have done.`
})

/** A tool whose calls go through the approval policy first; a tool that needs no approval is returned as it is. */
export const withApproval = (tool: Tool, approval: Approval): Tool => {
  const reason = approvalReason(tool)
  const { policy, ask } = approval
  if (reason === undefined || policy.kind === "all") return tool
  if (policy.kind === "globs" && matches(policy.globs, tool)) return tool
  const call = (args: Record<string, unknown>): Effect.Effect<ToolResult> => {
    if (policy.kind === "none") return Effect.succeed(refused(tool, reason, "--approve none"))
    if (policy.kind === "globs")
      return Effect.succeed(refused(tool, reason, `--approve ${approvalText(policy)} does not name it`))
    if (ask === undefined) return Effect.succeed(refused(tool, reason, "--approve ask, and nobody to ask"))
    return Effect.promise(() =>
      ask({ tool: tool.name, args, reason }).then(
        (yes) => (yes ? "yes" : "no"),
        (e: unknown) => (e instanceof Error ? e.message : String(e))
      )
    ).pipe(
      Effect.flatMap((answer) =>
        answer === "yes"
          ? tool.call(args)
          : Effect.succeed(refused(tool, reason, answer === "no" ? "the user said no" : `nobody to ask: ${answer}`))
      )
    )
  }
  return { ...tool, call }
}
