// Keeps the command reference (docs/cli.md) equal to `smurfs <command> --help`: `node scripts/readme-help.ts` rewrites it, `--check` only compares.
import { execFile } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { commandNames } from "../src/cli/main.ts"

/** The page that holds the command reference (the README links to it). */
export const CLI_DOC = fileURLToPath(new URL("../docs/cli.md", import.meta.url))
const bin = fileURLToPath(new URL("../bin/smurfs.js", import.meta.url))

/** The commands whose help the reference repeats: every command of the CLI. */
export const COMMANDS = commandNames()

/** The help a user sees, from a child process with no settings of the user's own. */
export const helpOf = async (command: string): Promise<string> => {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" }
  for (const key of Object.keys(env)) if (key.startsWith("SMURFS_")) delete env[key]
  const { stdout } = await promisify(execFile)(process.execPath, [bin, command, "--help"], {
    encoding: "utf8",
    env,
    cwd: fileURLToPath(new URL("..", import.meta.url))
  })
  return stdout.trimEnd()
}

const open = (command: string) => `<!-- help:${command} -->`
const close = (command: string) => `<!-- /help:${command} -->`

/** The block the reference holds for a command: its help in a text fence between the markers. */
export const block = (command: string, help: string): string =>
  `${open(command)}\n\`\`\`text\n${help}\n\`\`\`\n${close(command)}`

/** Where a command's block sits: the line numbers (1-based) of its markers, or undefined. */
export const locate = (readme: string, command: string): { start: number; end: number } | undefined => {
  const lines = readme.split("\n")
  const start = lines.indexOf(open(command))
  const end = lines.indexOf(close(command))
  return start < 0 || end < start ? undefined : { start: start + 1, end: end + 1 }
}

/** The page with each command's block replaced by its current help. */
export const rewrite = (page: string, helps: Readonly<Record<string, string>>): string => {
  let text = page
  for (const [command, help] of Object.entries(helps)) {
    const at = locate(text, command)
    if (at === undefined) {
      // a new command: its block goes at the end of the reference, the page's last section
      text = `${text.trimEnd()}\n\n${block(command, help)}\n`
      continue
    }
    const lines = text.split("\n")
    lines.splice(at.start - 1, at.end - at.start + 1, block(command, help))
    text = lines.join("\n")
  }
  return text
}

if (import.meta.main) {
  const helps = Object.fromEntries(await Promise.all(COMMANDS.map(async (c) => [c, await helpOf(c)] as const)))
  const before = readFileSync(CLI_DOC, "utf8")
  const after = rewrite(before, helps)
  if (process.argv.includes("--check")) {
    if (before !== after) {
      console.error("docs/cli.md's command reference differs from --help; run `node scripts/readme-help.ts`")
      process.exitCode = 1
    }
  } else if (before !== after) {
    writeFileSync(CLI_DOC, after)
    console.log("docs/cli.md: command reference updated")
  }
}
