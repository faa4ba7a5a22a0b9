// `smurfs completion bash|zsh|fish`: the script, made from the commands' options, completes in a real bash.
import { spawnSync } from "node:child_process"
import { describe, expect, it } from "vitest"
import { commandNames } from "../../src/cli/main.ts"
import { smurfs } from "./spawn.ts"

/** What bash completes for the words typed so far, with the script sourced. */
const complete = (script: string, words: ReadonlyArray<string>): Array<string> => {
  const line = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _smurfs; printf '%s\\n' "\${COMPREPLY[@]}"`
  const result = spawnSync("bash", ["-c", line], { encoding: "utf8" })
  expect(result.status, result.stderr).toBe(0)
  return result.stdout.split("\n").filter(Boolean)
}

describe("smurfs completion", () => {
  it("bash: the commands, each command's options (short ones too), tools search's own, the shells", async () => {
    const { code, stdout } = await smurfs(["completion", "bash"])
    expect(code).toBe(0)
    expect(complete(stdout, ["smurfs", ""])).toEqual(expect.arrayContaining(commandNames()))
    expect(complete(stdout, ["smurfs", "be"])).toEqual(["bench"])
    expect(complete(stdout, ["smurfs", "bench", "--sim"])).toEqual(["--simulator", "--simulator-style"])
    expect(complete(stdout, ["smurfs", "bench", "-"])).toContain("-m")
    expect(complete(stdout, ["smurfs", "tools", ""])).toContain("search")
    expect(complete(stdout, ["smurfs", "tools", "search", "--to"])).toEqual(["--tools", "--top"])
    expect(complete(stdout, ["smurfs", "completion", ""])).toEqual(["bash", "zsh", "fish"])
  })

  it("zsh and fish scripts; an unknown shell is bad usage", async () => {
    const [zsh, fish, bad] = await Promise.all([
      smurfs(["completion", "zsh"]),
      smurfs(["completion", "fish"]),
      smurfs(["completion", "tcsh"])
    ])
    expect(zsh.stdout).toContain("bashcompinit")
    expect(zsh.stdout).toContain("complete -o default -F _smurfs smurfs")
    expect(fish.stdout).toContain("complete -c smurfs -n '__fish_seen_subcommand_from bench' -l model -s m -r -F")
    expect(fish.stdout).toContain("complete -c smurfs -n __fish_use_subcommand -a bench")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("smurfs completion bash|zsh|fish")
  })
})
