// Test helper: run the `smurfs` CLI as a user does, a child process of bin/smurfs.js, and collect its output and exit code.
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"

export const repo = fileURLToPath(new URL("../..", import.meta.url))
export const bin = fileURLToPath(new URL("../../bin/smurfs.js", import.meta.url))
export const demoScript = fileURLToPath(new URL("../../examples/demo-script.json", import.meta.url))
export const demoQuery = "What is 12% of the height of Mount Everest in feet?"

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export interface CliOptions {
  readonly cwd?: string | undefined
  readonly env?: Record<string, string | undefined> | undefined
}

/** Run `smurfs <args>`; the environment is the test's, without SMURFS_* settings and colors, plus `env`. */
export const smurfs = (args: ReadonlyArray<string>, options: CliOptions = {}): Promise<CliResult> => {
  const env: Record<string, string | undefined> = {
    ...process.env,
    NO_COLOR: "1",
    SMURFS_MODEL: undefined,
    SMURFS_DATA: undefined,
    OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
    ...options.env
  }
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: options.cwd ?? repo, env, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr })
    )
  })
}
