import { describe, expect, it } from "vitest"
import { compareStatistics } from "./comparison.ts"
import { DEFAULT_GPU_MODEL, gpuSeconds, parseGpuModel } from "./gpu-model.ts"

describe("the modelled server's GPU seconds", () => {
  it("are prompt tokens x prefill + reply tokens x decode", () => {
    // 4000 * 0.25 ms + 200 * 20 ms = 1 s + 4 s
    expect(gpuSeconds(DEFAULT_GPU_MODEL, { promptTokens: 4000, completionTokens: 200, toolCalls: 0 })).toBe(5)
    expect(gpuSeconds(DEFAULT_GPU_MODEL, { toolCalls: 0 })).toBeUndefined()
  })

  it("read prefill and decode times, each optional, and name what is wrong", () => {
    expect(parseGpuModel("default")).toEqual(DEFAULT_GPU_MODEL)
    expect(parseGpuModel("prefill=1ms")).toEqual({ ...DEFAULT_GPU_MODEL, prefillMsPerToken: 1 })
    expect(parseGpuModel("decode=0.01s,prefill=500us")).toEqual({ prefillMsPerToken: 0.5, decodeMsPerToken: 10 })
    expect(parseGpuModel("cache=4")).toMatch(/"cache=4" is not prefill=<duration> or decode=<duration>/)
    expect(parseGpuModel("prefill=fast")).toMatch(/is not prefill/)
  })

  it("are a cost per task and per solved task only when asked for", () => {
    const row = {
      source: "run",
      method: "m",
      model: "x",
      group: "G1_instruction",
      judge: "j",
      n: 2,
      judged: 2,
      total: 2,
      errors: 0,
      samples: {
        k: 1,
        tasks: ["1", "2"].map((taskId, i) => ({
          taskId,
          runs: [
            {
              run: 0,
              labels: [i === 0 ? ("Solved" as const) : ("Unsolved" as const)],
              cost: { promptTokens: 4000, completionTokens: 200, toolCalls: 0 }
            }
          ]
        }))
      }
    }
    expect(compareStatistics([row]).rows[0]!.cost.gpuSeconds).toBeUndefined()
    const gpu = compareStatistics([row], { seed: 1, resamples: 200, gpu: DEFAULT_GPU_MODEL }).rows[0]!.cost.gpuSeconds!
    expect(gpu.perTask.estimate).toBe(5)
    // 10 GPU seconds for 1 solved task
    expect(gpu.perSolved!.estimate).toBe(10)
  })
})
