// A Finish call's arguments read as StableToolBench's rapidapi.py reads them (the reference profile).
import { describe, expect, it } from "vitest"
import { readFinishArguments } from "./finish.ts"

describe("Finish arguments as StableToolBench reads them", () => {
  it("json.loads with strict=False: a raw line break inside the answer is read", () => {
    expect(readFinishArguments('{"return_type": "give_answer", "final_answer": "a\nb"}')).toEqual({
      return_type: "give_answer",
      final_answer: "a\nb"
    })
  })

  it("else their substring fallback: the answer runs to the end of the text, a return type is read between its quote and the first '\",'", () => {
    expect(readFinishArguments('{"return_type": "give_answer", "final_answer": "say "hi""}')).toEqual({
      return_type: "give_answer",
      final_answer: 'say "hi""}'
    })
    expect(readFinishArguments('{"return_type": "give_up_and_restart" oops')).toEqual({
      return_type: "give_up_and_restart"
    })
    // neither known type: the text from the type's quote to the first '",' (before it: an empty slice)
    expect(readFinishArguments('{"return_type": "other", "final_answer": "x" oops')).toEqual({
      return_type: "other",
      final_answer: 'x" oops'
    })
    expect(readFinishArguments('{"a": "b", "return_type": "zz oops')).toEqual({ return_type: "" })
    // no '",' at all: Python's s[start:-1] drops the last character
    expect(readFinishArguments('{"return_type": "maybe}')).toEqual({ return_type: "maybe" })
    expect(readFinishArguments("not json")).toEqual({})
    // valid JSON that is no object has no return type
    expect(readFinishArguments('["give_answer"]')).toEqual({})
  })
})
