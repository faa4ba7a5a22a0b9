import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { passLabelsPath, slug, winVerdictsPath } from "../../../bench/eval/labels.ts"
import { evalSettings, prepareEval } from "../../../bench/eval/run-eval.ts"
import { writeFakeRun } from "../../../bench/eval/test-fixtures.ts"
import { captureConsole } from "../../../test/capture-console.ts"
import { DATA_EXAMPLE, lacks, STB_CHECKOUT, skipNote } from "../../../test/data.ts"
import { LanguageModel } from "../../llm/language-model.ts"
import { makeScriptedModel } from "../../llm/scripted.ts"
import { ExitCode } from "../exit-codes.ts"
import { runProgram } from "../run-program.ts"
import { run as compare } from "./compare.ts"
import { EVAL_EDGE, evalProgram, run } from "./eval.ts"

const scriptFile = (script: object) => {
  const file = join(mkdtempSync(join(tmpdir(), "smurfs-judge-")), "judge.json")
  writeFileSync(file, JSON.stringify(script))
  return file
}

let out: Array<string>, err: Array<string>
beforeEach(() => void ({ out, err } = captureConsole()))
afterEach(() => vi.restoreAllMocks())

describe("smurfs eval", () => {
  it("judges a run, prints the table, and resumes without judging again", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }, { taskId: "2", finishType: "give_up", finalAnswer: "" }])
    const file = scriptFile({
      "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }],
      $cycle: true
    })
    const judge = `scripted:${file}`
    expect(await run(["--run", dir, "--judge", judge, "--k", "2"])).toBe(ExitCode.Ok)
    expect(existsSync(passLabelsPath(dir, judge, "smurfs", "G1_instruction", "1"))).toBe(true)
    // (1 + 0) / 2 in both runs -> 50.0 ± 0.0
    expect(out.join("\n")).toMatch(/50\.0 ± 0\.0/)
    expect(err.join("\n")).toMatch(/pass: 4 decisions made, 0 kept/)
    // the same judge, now with no replies, would fail on any call: the resume must not call it
    writeFileSync(file, JSON.stringify({ "judge.check_answer_status": [] }))
    err.length = 0
    expect(await run(["--run", dir, "--judge", judge, "--k", "2"])).toBe(ExitCode.Ok)
    expect(err.join("\n")).toMatch(/pass: 0 decisions made, 4 kept/)
  })

  it("computes win rounds against a reference run", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }])
    const ref = await writeFakeRun([{ taskId: "1", method: "react", finishType: "give_up", finalAnswer: "" }])
    const judge = `scripted:${scriptFile({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }], $cycle: true })}`
    expect(await run(["--run", dir, "--judge", judge, "--k", "1", "--reference", ref])).toBe(ExitCode.Ok)
    const name = `${ref.split("/").pop()}-react`
    expect(existsSync(winVerdictsPath(dir, judge, name, "smurfs", "G1_instruction", "1"))).toBe(true)
    expect(out.join("\n")).toMatch(/100\.0 vs /)
  })

  it.skipIf(lacks(STB_CHECKOUT))(
    `with --fac and --stb, judges FAC beside SoPR and shows it in the table; --fac without --stb is refused${skipNote(STB_CHECKOUT)}`,
    async () => {
      const dir = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }])
      const stb = STB_CHECKOUT.path
      const judge = `scripted:${scriptFile({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }], "judge.fac": ["Answer Status\nSolved", "Answer Status\nUnsolved"], $cycle: true })}`
      expect(await run(["--run", dir, "--judge", judge, "--k", "1", "--fac", "--stb", stb])).toBe(ExitCode.Ok)
      expect(err.join("\n")).toMatch(/fac: 2 decisions made/)
      expect(out.join("\n")).toMatch(/100\.0 ± 0\.0 · FAC 50\.0 \(N=2\)/)
      expect(await run(["--run", dir, "--judge", judge, "--fac"])).toBe(ExitCode.Usage)
      expect(err.join("\n")).toMatch(/--fac sends the prompt of StableToolBench's toolbench\/tooleval\/fac_eval\.py/)
    }
  )

  it.skipIf(lacks(DATA_EXAMPLE))(
    `scores StableToolBench converted predictions, writing labels to --out${skipNote(DATA_EXAMPLE)}`,
    async () => {
      const example = DATA_EXAMPLE.path
      const store = mkdtempSync(join(tmpdir(), "smurfs-eval-out-"))
      const judge = `scripted:${scriptFile({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }], $cycle: true })}`
      expect(
        await run(["--run", example, "--judge", judge, "--k", "3", "--out", store, "--method", "virtual_chatgpt_cot"])
      ).toBe(ExitCode.Ok)
      // 588 never reached Finish: Unsolved by rule, as in ToolEval's published labels; 608 and 1073 go to the judge
      const labels = JSON.parse(
        readFileSync(passLabelsPath(store, judge, "virtual_chatgpt_cot", "G1_instruction", "588"), "utf8")
      )
      expect(Object.values(labels.runs).map((r) => (r as { stage: string }).stage)).toEqual(["rule", "rule", "rule"])
      expect(err.join("\n")).toMatch(/pass: 9 decisions made/)
      // the label folder points back at the predictions; the judge says Solved to 608 and 1073: (0 + 1 + 1) / 3 -> 66.7
      expect(out.join("\n")).toMatch(
        /virtual_chatgpt_cot\s+CoT@1\s+G1_instruction\s+scripted-\S+ \(our texts\)\s+3\/3\s+66\.7 ± 0\.0/
      )
    }
  )

  it.skipIf(lacks(DATA_EXAMPLE, STB_CHECKOUT))(
    `with --stb judges with ToolEval's own template, records it with the labels and says so in the table${skipNote(DATA_EXAMPLE, STB_CHECKOUT)}`,
    async () => {
      const example = DATA_EXAMPLE.path
      const stb = STB_CHECKOUT.path
      const store = mkdtempSync(join(tmpdir(), "smurfs-eval-stb-"))
      const judge = `scripted:${scriptFile({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }], $cycle: true })}`
      expect(
        await run([
          "--run",
          example,
          "--judge",
          judge,
          "--k",
          "1",
          "--out",
          store,
          "--method",
          "virtual_chatgpt_cot",
          "--stb",
          stb
        ])
      ).toBe(ExitCode.Ok)
      const labels = JSON.parse(
        readFileSync(passLabelsPath(store, judge, "virtual_chatgpt_cot", "G1_instruction", "608"), "utf8")
      )
      expect(labels.prompts).toBe(`stabletoolbench:${stb.replace(/\/$/, "")}`)
      expect(err.join("\n")).toMatch(/judge texts: ToolEval's template from /)
      expect(out.join("\n")).toMatch(/\(ToolEval texts\)\s+3\/3\s+66\.7/)
      expect(await run(["--run", example, "--judge", judge, "--out", store, "--stb", "/nonexistent/stb"])).toBe(
        ExitCode.BadInput
      )
      expect(err.join("\n")).toMatch(/template\.txt: not found\. Pass --stb/)
    }
  )

  it("a reference with several methods and none named is bad usage, asking for --reference-method", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }])
    const ref = await writeFakeRun([
      { taskId: "1", method: "react" },
      { taskId: "1", method: "dfsdt" }
    ])
    expect(await run(["--run", dir, "--judge", "scripted:x.json", "--reference", ref])).toBe(ExitCode.Usage)
    expect(err.join("\n")).toMatch(
      /the reference has several methods \(dfsdt, react\); choose one with --reference-method\nhint: `smurfs help eval`/
    )
  })

  it("reports a missing run directory as bad input", async () => {
    expect(await run(["--run", "/nonexistent/run", "--judge", "scripted:x.json"])).toBe(ExitCode.BadInput)
    expect(err.join("\n")).toMatch(/does not exist/)
  })

  it("reports missing flags and bad numbers as usage errors", async () => {
    expect(await run(["--run", "/tmp"])).toBe(ExitCode.Usage)
    expect(err.join("\n")).toMatch(/--judge <model spec> is required/)
    expect(await run(["--run", "/tmp", "--judge", "x", "--k", "0"])).toBe(ExitCode.Usage)
    expect(await run(["--bogus"])).toBe(ExitCode.Usage)
  })

  it("reports an unreadable judge script as bad input", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }])
    expect(await run(["--run", dir, "--judge", "scripted:/nonexistent/judge.json"])).toBe(ExitCode.BadInput)
  })

  it("prints its help", async () => {
    expect(await run(["--help"])).toBe(ExitCode.Ok)
    expect(out.join("\n")).toMatch(/usage: smurfs eval/)
  })

  it('a bug in the judge\'s call (a defect) is exit 1 with a bug report, never 4 "model unavailable"', async () => {
    const dir = await writeFakeRun([{ taskId: "1" }])
    const dying = Layer.succeed(
      LanguageModel,
      LanguageModel.of({
        info: { spec: "test:dying", provider: "scripted", model: "dying", contextTokens: 8192, supportsTools: false },
        generate: () => Effect.die(new TypeError("Cannot read properties of undefined (reading 'choices')"))
      })
    )
    const input = prepareEval(evalSettings({ run: dir, judge: "test:dying", k: 1, concurrency: 1, seed: 0 }))
    expect(await runProgram(evalProgram(input, { json: false, judgeLayer: dying }), EVAL_EDGE)).toBe(ExitCode.Failure)
    const said = err.join("\n")
    expect(said).toMatch(/smurfs eval: unexpected error: TypeError: Cannot read properties of undefined/)
    expect(said).toMatch(/This is a bug in smurfs/)
    expect(said).toMatch(/SMURFS_DEBUG=1/)
    expect(said).not.toMatch(/unavailable|Cannot reach|ollama serve/)
  })

  it("every judge decision failed (unreadable replies): exit 1 naming what failed, no empty table", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }])
    const judge = `scripted:${scriptFile({ "judge.check_answer_status": ["not a verdict"], $cycle: true })}`
    expect(await run(["--run", dir, "--judge", judge, "--k", "2", "--json"])).toBe(ExitCode.Failure)
    expect(err.join("\n")).toMatch(
      /no pass judge decision could be made: all 4 failed \(the first, smurfs\/G1_instruction\/\d: /
    )
    expect(err.join("\n")).toMatch(/smurfs doctor --model scripted:/)
    expect(out.join("\n")).not.toMatch(/"rows": \[\]/)
  })

  it("two evals with the same judge at once: one judges, the other is refused naming it (one writer per label folder)", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }])
    let calls = 0
    const scripted = makeScriptedModel({
      "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }],
      $cycle: true
    })
    const slow = Layer.succeed(
      LanguageModel,
      LanguageModel.of({
        info: scripted.info,
        generate: (r) =>
          Effect.delay(
            Effect.suspend(() => (calls++, scripted.generate(r))),
            "200 millis"
          )
      })
    )
    const input = prepareEval(evalSettings({ run: dir, judge: "test:slow", k: 1, concurrency: 1, seed: 0 }))
    const first = runProgram(evalProgram(input, { json: true, judgeLayer: slow }), EVAL_EDGE)
    await new Promise((r) => setTimeout(r, 100))
    const second = await runProgram(evalProgram(input, { json: true, judgeLayer: slow }), EVAL_EDGE)
    expect(second).toBe(ExitCode.BadInput)
    expect(err.join("\n")).toMatch(/another smurfs eval with this judge is writing to this label folder \(pid \d+/)
    expect(await first).toBe(ExitCode.Ok)
    expect(calls).toBe(2)
  })

  it("removes the temp files an eval killed mid-write left in its label folder", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }])
    const judge = `scripted:${scriptFile({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }], $cycle: true })}`
    const stray = join(dir, "eval", slug(judge), "pass", "smurfs", "G1_instruction", "1.json.tmp-4242-abcdefgh")
    mkdirSync(join(stray, ".."), { recursive: true })
    writeFileSync(stray, '{"cut')
    expect(await run(["--run", dir, "--judge", judge, "--k", "1"])).toBe(ExitCode.Ok)
    expect(existsSync(stray)).toBe(false)
  })

  describe("labels that match the settings that made them", () => {
    const setUp = async () => {
      const dir = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }])
      // the reference gave up on both: each round is decided by the statuses, never by select_better_answer
      const ref = await writeFakeRun([
        { taskId: "1", method: "react", finishType: "give_up", finalAnswer: "" },
        { taskId: "2", method: "react", finishType: "give_up", finalAnswer: "" }
      ])
      const judge = `scripted:${scriptFile({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }], $cycle: true })}`
      return { dir, ref, judge }
    }
    const asides = (dir: string, judge: string) =>
      readdirSync(join(dir, "eval", slug(judge), "pass", "smurfs", "G1_instruction")).filter((f) =>
        f.includes(".json.before-")
      ).length

    it("another --seed makes new labels and rounds, the old ones set aside; the table shows one complete row", async () => {
      const { dir, ref, judge } = await setUp()
      expect(await run(["--run", dir, "--judge", judge, "--k", "2", "--reference", ref])).toBe(ExitCode.Ok)
      err.length = 0
      expect(await run(["--run", dir, "--judge", judge, "--k", "2", "--reference", ref, "--seed", "7"])).toBe(
        ExitCode.Ok
      )
      expect(err.join("\n")).toMatch(/pass: 4 decisions made, 0 kept/)
      expect(asides(dir, judge)).toBe(2)
      expect(
        JSON.parse(readFileSync(passLabelsPath(dir, judge, "smurfs", "G1_instruction", "1"), "utf8")).runs["0"].seed
      ).not.toBe(
        JSON.parse(
          readFileSync(
            join(
              dir,
              "eval",
              slug(judge),
              "pass",
              "smurfs",
              "G1_instruction",
              readdirSync(join(dir, "eval", slug(judge), "pass", "smurfs", "G1_instruction")).find((f) =>
                f.startsWith("1.json.before-")
              )!
            ),
            "utf8"
          )
        ).runs["0"].seed
      )
      out.length = 0
      expect(await compare([dir])).toBe(ExitCode.Ok)
      const table = out.join("\n")
      expect(table).toMatch(/\(our texts\)\s+2\/2\s+100\.0 ± 0\.0 \[100\.0, 100\.0\]\s+100\.0 vs \S+ \(N=2\)\s/)
      expect(table).not.toMatch(/incomplete|Missing work/)
    })

    it("records the run's profile with its labels, and the table names it", async () => {
      const { dir, judge } = await setUp()
      const config = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"))
      writeFileSync(
        join(dir, "run.json"),
        JSON.stringify({ ...config, options: { ...config.options, profile: { name: "reference" } } })
      )
      expect(await run(["--run", dir, "--judge", judge, "--k", "1"])).toBe(ExitCode.Ok)
      expect(
        JSON.parse(readFileSync(passLabelsPath(dir, judge, "smurfs", "G1_instruction", "1"), "utf8")).profile
      ).toBe("reference")
      out.length = 0
      expect(await compare([dir])).toBe(ExitCode.Ok)
      expect(out.join("\n")).toMatch(
        /smurfs \(reference\)\s+scripted:test\s+G1_instruction\s+\S+ \(our texts\)\s+2\/2\s+100\.0/
      )
    })

    it.skipIf(lacks(STB_CHECKOUT))(
      "after --stb changes, new pass labels are made and never share a row with ToolEval's win rounds" +
        skipNote(STB_CHECKOUT),
      async () => {
        const { dir, ref, judge } = await setUp()
        expect(
          await run(["--run", dir, "--judge", judge, "--k", "1", "--reference", ref, "--stb", STB_CHECKOUT.path])
        ).toBe(ExitCode.Ok)
        err.length = 0
        // our texts now, no reference: the pass labels are made again (the issue saw "0 decisions made, 2 kept")
        expect(await run(["--run", dir, "--judge", judge, "--k", "1"])).toBe(ExitCode.Ok)
        expect(err.join("\n")).toMatch(/pass: 2 decisions made, 0 kept/)
        expect(asides(dir, judge)).toBe(2)
        out.length = 0
        expect(await compare([dir])).toBe(ExitCode.Ok)
        const table = out.join("\n")
        const rows = table.split("\n").filter((l) => /^smurfs-run-\S+\s+smurfs\s/.test(l))
        // our texts' pass labels in one row, ToolEval's win rounds in another, which says its pass labels are missing
        expect(table).toMatch(/\(our texts\)\s+2\/2\s+100\.0 ± 0\.0 \[100\.0, 100\.0\]\s+-/)
        expect(table).toMatch(/\(ToolEval texts\)\s+0\/2\s+-\s+100\.0 vs \S+ \(N=2\)/)
        expect(table).not.toMatch(/\(our texts\)[^\n]*vs /)
        expect(table).toMatch(
          /Missing work:\n[^\n]*\(judge [^,]+, ToolEval texts\): 2 of 2 answered tasks not judged yet \(1, 2\)/
        )
        expect(rows).toHaveLength(2)
      }
    )
  })
})
