// `smurfs tools`: list the tools of a library with their parameters.

import type { ParseArgsOptionsConfig } from "node:util"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { DEFAULT_DATA_DIR } from "../../../bench/datasets.ts"
import { toolbenchTask } from "../../../bench/toolbench-task.ts"
import type { Failure } from "../../failure.ts"
import { scriptedLayer } from "../../llm/scripted.ts"
import { plural } from "../../plural.ts"
import { watchToolChildren } from "../../tools/child-guard.ts"
import { parametersJsonSchema } from "../../tools/library.ts"
import { loadTools } from "../../tools/load.ts"
import type { Tool, ToolLibrary } from "../../tools/tool.ts"
import { redactText, redactValue } from "../../trace/redact.ts"
import { visibleText } from "../../trace/visible-text.ts"
import { ExitCode } from "../exit-codes.ts"
import { type ParsedCommand, runCommand, UsageError } from "../options.ts"
import { runProgram } from "../run-program.ts"
import { routeStdoutToStderr } from "../stdout-guard.ts"

const HELP = `usage: smurfs tools [--tools <source>]... [--json]
       smurfs tools search "<query>" [--tools <source>... | --data <dir>] [--top K] [--json]

List the tools of a library: name, description (first line) and parameters.
\`smurfs tools search\` ranks them for a query (smurfs tools search --help).

options:
  -t, --tools <source> demo (default), a .ts/.js module exporting tools, a StableToolBench api_list .json,
                       "mcp:<command and args>" (an MCP server over stdio) or mcp+http(s)://<url>
                       (Streamable HTTP; Authorization header from $SMURFS_MCP_AUTHORIZATION);
                       repeat to combine sources
  --mcp-env <NAME[=value]>
                       a variable stdio MCP servers get beside the SDK's safe set (NODE_EXTRA_CA_CERTS,
                       HTTPS_PROXY, a token: NAME passes yours, NAME=value sets one); repeat for more
  --query-id <id>      with an api_list file of several queries: whose APIs to list (default: the first);
                       without --tools: the ToolBench task of --data with this id
  --data <dir>         where --query-id's task is (either layout, or \`sample\`, as for bench; default
                       $SMURFS_DATA, else ../shared/toolbench)
  --env <e[,e]>        how the task's tools would answer: replay, simulated, offline (default replay,offline)
  --json               print the tools as JSON (name, description, JSON Schema of the parameters)
  -h, --help           show this help

exit codes: 0 listed, 2 bad usage, 3 bad input (a tool source that cannot be loaded, a task not found)`

interface ParameterInfo {
  readonly name: string
  readonly type: string
  readonly required: boolean
  readonly description: string
}

/** The parameters of a tool, from its JSON Schema (the same one models see). */
export const parameterInfo = (tool: Tool): ReadonlyArray<ParameterInfo> => {
  const schema = parametersJsonSchema(tool) as {
    properties?: Record<string, { type?: unknown; description?: unknown }>
    required?: string[]
  }
  const required = new Set(schema.required ?? [])
  return Object.entries(schema.properties ?? {}).map(([name, p]) => ({
    name,
    type: Array.isArray(p.type) ? p.type.join("|") : typeof p.type === "string" ? p.type : "any",
    required: required.has(name),
    description: typeof p.description === "string" ? p.description : ""
  }))
}

const firstLine = (text: string) => text.split("\n", 1)[0]!.trim()

const renderText = (libraryName: string, tools: ReadonlyArray<Tool>): string => {
  const lines = [`${libraryName}: ${plural(tools.length, "tool")}`, ""]
  for (const tool of tools) {
    lines.push(tool.name, `  ${firstLine(tool.description)}`)
    const params = parameterInfo(tool)
    if (params.length === 0) lines.push("  (no parameters)")
    for (const p of params)
      lines.push(
        `  - ${p.name}: ${p.type}${p.required ? " (required)" : ""}${p.description ? `  ${firstLine(p.description)}` : ""}`
      )
    lines.push("")
  }
  return lines.join("\n").trimEnd()
}

/** The options of `smurfs tools`, in node:util parseArgs' shape. */
const OPTIONS = {
  tools: { type: "string", short: "t", multiple: true },
  "mcp-env": { type: "string", multiple: true },
  "query-id": { type: "string" },
  data: { type: "string" },
  env: { type: "string", multiple: true },
  json: { type: "boolean" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "tools", help: HELP, options: OPTIONS } as const

export const run = (argv: string[]): Promise<number> =>
  argv[0] === "search"
    ? import("./tools-search.ts").then((m) => m.runSearch(argv.slice(1)))
    : runCommand(COMMAND, argv, ({ values, given }) => list(values, given))

const list = (values: ParsedCommand<typeof OPTIONS>["values"], given: ReadonlySet<string>): Promise<number> => {
  const sources = values.tools ?? ["demo"]
  // without --tools, --query-id names a ToolBench task of --data (as in `smurfs run`)
  const fromData = values.tools === undefined && values["query-id"] !== undefined
  // a --data of SMURFS_DATA or smurfs.config.json is a default for when a task is named, not a mistake
  if (!fromData && (given.has("data") || values.env !== undefined))
    throw new UsageError("--data and --env choose a ToolBench task's tools: add --query-id <id> (and no --tools)")
  const library: Effect.Effect<ToolLibrary, Failure, Scope.Scope> = fromData
    ? toolbenchTask({
        data: values.data ?? DEFAULT_DATA_DIR,
        queryId: values["query-id"]!,
        envs: values.env ?? ["replay", "offline"]
      }).pipe(
        Effect.map(({ task }) => task.tools),
        // listing calls no tool, so a simulated environment never asks this (empty) model
        Effect.provide(scriptedLayer([]))
      )
    : loadTools(sources, { queryId: values["query-id"], mcpEnv: values["mcp-env"] })
  // a tool module that prints while it loads must not mix into the list (or break --json): it goes to stderr
  const restoreStdout = routeStdoutToStderr()
  const print = Effect.map(library, (library) => {
    restoreStdout()
    if (values.json) {
      const tools = library.tools.map((t) => ({
        name: t.name,
        description: t.description,
        parameters: parametersJsonSchema(t)
      }))
      console.log(JSON.stringify(redactValue({ library: library.name, tools }), null, 2))
    } else {
      console.log(visibleText(redactText(renderText(library.name, library.tools))))
    }
  })
  // the scope closes MCP connections (and stops their servers) once the list is printed
  // a module that starts a child process while it loads does not hold the command open after the list
  const children = watchToolChildren()
  return runProgram(
    Effect.scoped(print).pipe(
      Effect.ensuring(Effect.sync(() => (restoreStdout(), children.end((line) => console.error(line))))),
      Effect.as(ExitCode.Ok)
    ),
    { command: "tools" }
  )
}
