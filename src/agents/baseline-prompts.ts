// The texts the ReAct/DFSDT baselines send: StableToolBench's own (read from a checkout) or ours
// (prompts/*.md), which state the same rules in our words. Either way the shapes are StableToolBench's.

import { loadTemplate, render } from "../text/prompt-template.ts"
import {
  hasStbFile,
  pythonConstant,
  pythonFString,
  pythonStringAfter,
  readStbFile,
  STB_FILES,
  StbFilesError,
  unescapePython
} from "../text/stabletoolbench-files.ts"
import { FINISH } from "./finish.ts"

export interface BaselinePrompts {
  /** Which texts these are, recorded in run.json: "smurfs" or "stabletoolbench:<dir>". */
  readonly source: string
  /** The system message around the task description. */
  readonly system: (taskDescription: string) => string
  /** The first user message around the query. */
  readonly user: (query: string) => string
  /** The task description: its rules, then the numbered tools (`1.<tool>: <description>` lines). */
  readonly taskDescription: (toolLines: string) => string
  /** DFSDT's diversity prompt around the earlier candidates. */
  readonly diversity: (candidates: string) => string
  /** The Finish function's description and its final_answer parameter's description. */
  readonly finishDescription: string
  readonly finishAnswerDescription: string
  /**
   * StableToolBench's own texts of the history, read from its code (`reference` sends them as they are; none in our
   * wording): DFS.py's line that repeats a state's observation below the diversity prompt's candidates (undefined when
   * the checkout has no DFS.py), rapidapi.py's observation for a function name that does not exist, and for Finish's
   * give-up.
   */
  readonly history?:
    | {
        readonly formerObservation: ((observation: string) => string) | undefined
        readonly noSuchFunction: (name: string) => string
        readonly gaveUp: string
      }
    | undefined
}

/** Our own wording, from prompts/*.md (built once: its templates are files of the package). */
export const smurfsBaselinePrompts = (): BaselinePrompts => (ours ??= buildSmurfsBaselinePrompts())
let ours: BaselinePrompts | undefined

const buildSmurfsBaselinePrompts = (): BaselinePrompts => {
  const react = loadTemplate("react")
  return {
    source: "smurfs",
    system: (task_description) => render(react.system, { task_description }),
    user: (query) => render(react.user, { query }),
    taskDescription: (tools) => render(loadTemplate("react-task").user, { tools }),
    diversity: (previous_candidates) => render(loadTemplate("dfsdt-diversity").user, { previous_candidates }),
    finishDescription: loadTemplate("react-finish").user,
    finishAnswerDescription: loadTemplate("react-finish-answer").user
  }
}

const cache = new Map<string, BaselinePrompts>()

/**
 * StableToolBench's texts from a checkout: the ReAct system/user prompts, the diversity prompt, the
 * task description and the Finish function of rapidapi.py. Throws a StbFilesError naming the file
 * that is missing or changed shape.
 */
export const stabletoolbenchBaselinePrompts = (dir: string): BaselinePrompts => {
  const hit = cache.get(dir)
  if (hit) return hit
  const reactPath = `${dir}/${STB_FILES.react}`
  const react = readStbFile(dir, STB_FILES.react)
  const system = pythonConstant(react, "FORMAT_INSTRUCTIONS_SYSTEM_FUNCTION", reactPath)
  const user = pythonConstant(react, "FORMAT_INSTRUCTIONS_USER_FUNCTION", reactPath)
  const diversity = pythonConstant(
    readStbFile(dir, STB_FILES.treeSearch),
    "DIVERSITY_PROMPT",
    `${dir}/${STB_FILES.treeSearch}`
  )
  const rapidPath = `${dir}/${STB_FILES.rapidapi}`
  const rapid = readStbFile(dir, STB_FILES.rapidapi)
  const finishAt = rapid.indexOf(`"name": "${FINISH}"`)
  if (finishAt < 0) throw new StbFilesError({ path: rapidPath, problem: "no Finish function found" })
  const finish = pythonStringAfter(rapid, finishAt, "description", rapidPath)
  const answerAt = rapid.indexOf('"final_answer"', finish.end)
  if (answerAt < 0)
    throw new StbFilesError({ path: rapidPath, problem: "no final_answer parameter found in the Finish function" })
  const answer = pythonStringAfter(rapid, answerAt, "description", rapidPath)
  const dfsPath = `${dir}/${STB_FILES.dfs}`
  const history = {
    formerObservation: hasStbFile(dir, STB_FILES.dfs)
      ? pythonFString(readStbFile(dir, STB_FILES.dfs), "temp_now_node.observation", dfsPath)
      : undefined,
    noSuchFunction: pythonFString(rapid, "action_name", rapidPath, '"error":\\s*'),
    gaveUp: giveUpObservation(rapid, rapidPath)
  }
  const task = /self\.task_description\s*=\s*f?'''([\s\S]*?)'''/.exec(rapid)
  if (!task) throw new StbFilesError({ path: rapidPath, problem: "no task_description found" })
  const taskText = task[1]!.replace(/\\(["'\\n])/g, (_, c: string) => (c === "n" ? "\n" : c))
  const prompts: BaselinePrompts = {
    source: `stabletoolbench:${dir}`,
    // their code fills these with str.replace, not format
    system: (taskDescription) => system.replace("{task_description}", taskDescription),
    user: (query) => user.replace("{input_description}", query),
    taskDescription: (tools) => `${taskText}${tools}`,
    diversity: (candidates) => diversity.replace("{previous_candidate}", candidates),
    finishDescription: finish.value,
    finishAnswerDescription: answer.value,
    history
  }
  cache.set(dir, prompts)
  return prompts
}

/** rapidapi.py's observation for Finish's give_up_and_restart: the string its `_step` returns with status 4. */
const giveUpObservation = (rapid: string, path: string): string => {
  const match = /return\s+"((?:[^"\\\n]|\\.)*)"\s*,\s*4\b/.exec(rapid)
  if (!match)
    throw new StbFilesError({ path, problem: "no give-up observation (a string returned with status 4) found" })
  return unescapePython(match[1]!)
}

/** The prompts for a checkout, or our own wording without one. */
export const baselinePrompts = (stbDir: string | undefined): BaselinePrompts =>
  stbDir === undefined ? smurfsBaselinePrompts() : stabletoolbenchBaselinePrompts(stbDir)
