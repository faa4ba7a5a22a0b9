// What a `--tools` value names: the demo library, a module, an api_list file, or an MCP server.
import { splitCommandLine } from "./command-line.ts"

/** The environment variable holding the Authorization header of MCP servers over HTTP, unless the URL names another. */
export const DEFAULT_MCP_AUTH_ENV = "SMURFS_MCP_AUTHORIZATION"

export type ToolSourceSpec =
  | { readonly kind: "demo" }
  /** A .ts/.js module or a StableToolBench api_list .json (told apart by extension when loading). */
  | { readonly kind: "file"; readonly path: string }
  | { readonly kind: "mcp-stdio"; readonly command: string; readonly args: ReadonlyArray<string> }
  /** `authEnv` names the environment variable whose value is sent as the Authorization header; the value itself is never stored. */
  | { readonly kind: "mcp-http"; readonly url: string; readonly authEnv: string }

/** A `--tools` value that names no usable source; `reason` says how to write it. */
export class ToolSourceSyntaxError extends Error {}

/**
 * Read a `--tools` value: `demo`; `mcp:<command and args>` (stdio); `mcp+http://...` or `mcp+https://...`
 * (Streamable HTTP; `#auth=VAR` picks the environment variable of the Authorization header, default
 * SMURFS_MCP_AUTHORIZATION); anything else is a path.
 */
export const parseToolSource = (value: string): ToolSourceSpec => {
  const text = value.trim()
  if (text === "demo") return { kind: "demo" }
  if (text.startsWith("mcp:")) {
    let words: Array<string>
    try {
      words = splitCommandLine(text.slice(4))
    } catch (e) {
      throw new ToolSourceSyntaxError(`the MCP command line "${text.slice(4)}" cannot be read: ${(e as Error).message}`)
    }
    const [command, ...args] = words
    if (command === undefined)
      throw new ToolSourceSyntaxError(
        '"mcp:" needs the command that starts the server, e.g. --tools "mcp:npx -y @modelcontextprotocol/server-everything"'
      )
    return { kind: "mcp-stdio", command, args }
  }
  if (/^mcp\+https?:\/\//i.test(text)) {
    let url: URL
    try {
      url = new URL(text.slice(4))
    } catch {
      throw new ToolSourceSyntaxError(
        `"${text}" is not a valid URL; write mcp+http://host:port/path or mcp+https://...`
      )
    }
    if (url.username || url.password)
      throw new ToolSourceSyntaxError(
        `put no credentials in the MCP URL; set the Authorization header in ${DEFAULT_MCP_AUTH_ENV} (or the variable named by #auth=VAR)`
      )
    const auth = /^#auth=([A-Za-z_][A-Za-z0-9_]*)$/.exec(url.hash)
    if (url.hash && !auth)
      throw new ToolSourceSyntaxError(
        `the URL fragment "${url.hash}" is not understood; use #auth=ENV_VAR to name the variable holding the Authorization header`
      )
    url.hash = ""
    return { kind: "mcp-http", url: url.href, authEnv: auth?.[1] ?? DEFAULT_MCP_AUTH_ENV }
  }
  if (text.length === 0)
    throw new ToolSourceSyntaxError(
      '--tools is empty; give demo, a module or api_list path, "mcp:<command>" or mcp+http(s)://...'
    )
  return { kind: "file", path: text }
}

/** A short label of a source for lists and messages (never a secret: HTTP sources show the URL only). */
export const sourceLabel = (spec: ToolSourceSpec): string => {
  switch (spec.kind) {
    case "demo":
      return "demo"
    case "file":
      return spec.path
    case "mcp-stdio":
      return `mcp:${[spec.command, ...spec.args].join(" ")}`
    case "mcp-http":
      return `mcp+${spec.url}`
  }
}
