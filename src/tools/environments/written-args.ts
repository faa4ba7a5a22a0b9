// Arguments as the model wrote them: StableToolBench's server keys its cache by `str(json.loads(arguments))`, whose
// key order and number texts (`10.0`, `5` against `"5"`) the decoded object a tool is called with cannot keep.
import { pythonRepr } from "./python-repr.ts"

/** The decoded arguments (numbers as `PythonNumber`s, keys in the order written) of an arguments object, by identity. */
const written = new WeakMap<object, unknown>()

/** Remember what `args` (the object a tool is called with) was decoded from (`pythonJsonLoads` of the model's text). */
export const rememberWritten = <A extends object>(args: A, decoded: unknown): A => {
  written.set(args, decoded)
  return args
}

/** `str(tool_input)` of a call as StableToolBench's server computes it, when its arguments were written so; else undefined. */
export const writtenKey = (args: object): string | undefined =>
  written.has(args) ? pythonRepr(written.get(args)) : undefined
