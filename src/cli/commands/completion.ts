// `smurfs completion bash|zsh|fish`: a shell completion script, made from every command's options table.
import type { ParseArgsOptionsConfig } from "node:util"
import { type CommandSpecEntry, commandSpecs } from "../command-specs.ts"
import { ExitCode } from "../exit-codes.ts"
import { runCommand, UsageError } from "../options.ts"

const SHELLS = ["bash", "zsh", "fish"] as const
type Shell = (typeof SHELLS)[number]

const HELP = `usage: smurfs completion bash|zsh|fish

Print a completion script for the shell: the commands, and each command's options. Made from the
commands' own option tables, so it always matches this version of smurfs.

  bash   echo 'source <(smurfs completion bash)' >> ~/.bashrc
  zsh    echo 'source <(smurfs completion zsh)' >> ~/.zshrc
  fish   smurfs completion fish > ~/.config/fish/completions/smurfs.fish

exit codes: 0 printed, 2 bad usage (no shell, or one it does not know)`

export const COMMAND = { name: "completion", help: HELP, options: {}, positionals: true } as const

/** An option's words as typed: `--model` and `-m`. */
const flagsOf = (options: ParseArgsOptionsConfig): Array<string> =>
  Object.entries(options).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])])

/** The bash function (zsh runs it through bashcompinit): commands first, then the command's options; files otherwise. */
const bashScript = (specs: ReadonlyArray<CommandSpecEntry>): string => {
  const top = specs.filter((s) => !s.name.includes(" "))
  const cases = specs.map((s) => {
    const words = [...flagsOf(s.options), "--help"].join(" ")
    return s.name === "tools"
      ? `    tools) if [ "\${COMP_WORDS[2]}" = search ]; then opts="${flagsOf(specs.find((x) => x.name === "tools search")!.options).join(" ")} --help"; else opts="search ${words}"; fi ;;`
      : `    ${s.name.replace(" ", "-")}) opts="${words}" ;;`
  })
  return `# smurfs completion for bash (smurfs completion bash)
_smurfs() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" opts words=
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${top.map((s) => s.name).join(" ")} completion help --help --version" -- "$cur") )
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases.filter((c) => !c.includes("tools-search)")).join("\n")}
    help) opts="${top.map((s) => s.name).join(" ")} completion"; words=1 ;;
    completion) opts="${SHELLS.join(" ")}"; words=1 ;;
    *) opts="" ;;
  esac
  if [[ "$cur" == -* || -n "$words" || "$opts" == search* && "$COMP_CWORD" -eq 2 ]]; then
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  fi
}
complete -o default -F _smurfs smurfs
`
}

const quote = (text: string) => `'${text.replace(/'/g, "\\'")}'`

const fishScript = (specs: ReadonlyArray<CommandSpecEntry>): string => {
  const top = specs.filter((s) => !s.name.includes(" "))
  const lines = [
    "# smurfs completion for fish (smurfs completion fish)",
    "complete -c smurfs -f",
    ...top.map((s) => `complete -c smurfs -n __fish_use_subcommand -a ${s.name} -d ${quote(s.summary.slice(0, 80))}`),
    "complete -c smurfs -n __fish_use_subcommand -a completion -d 'print a shell completion script'",
    "complete -c smurfs -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'",
    "complete -c smurfs -n '__fish_seen_subcommand_from tools' -a search -d 'rank the tools for a query'"
  ]
  for (const spec of specs) {
    const condition =
      spec.name === "tools search"
        ? "'__fish_seen_subcommand_from tools; and __fish_seen_subcommand_from search'"
        : `'__fish_seen_subcommand_from ${spec.name}'`
    for (const [name, o] of Object.entries(spec.options))
      lines.push(
        `complete -c smurfs -n ${condition} -l ${name}${o.short ? ` -s ${o.short}` : ""}${o.type === "string" ? " -r -F" : ""}`
      )
  }
  return `${lines.join("\n")}\n`
}

/** The script for a shell. */
export const completionScript = async (shell: Shell): Promise<string> => {
  const specs = (await commandSpecs()).filter((s) => s.name !== "completion")
  const bash = bashScript(specs)
  if (shell === "bash") return bash
  if (shell === "zsh")
    return `# smurfs completion for zsh (smurfs completion zsh): the bash completion, through zsh's bashcompinit
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bash}`
  return fishScript(specs)
}

export const run = (argv: ReadonlyArray<string>): Promise<number> =>
  runCommand(COMMAND, argv, async ({ positionals }) => {
    const shell = positionals[0]
    if (positionals.length !== 1 || !(SHELLS as ReadonlyArray<string>).includes(shell!))
      throw new UsageError(`give the shell: smurfs completion ${SHELLS.join("|")}`)
    process.stdout.write(await completionScript(shell as Shell))
    return ExitCode.Ok
  })
