// StableToolBench behind the Benchmark interface: a thin adapter over the bench's own code (datasets, app, runner),
// which still holds its tool environments, retrieval and converters where they were.
import { METHOD_NAMES } from "../../../src/agents/methods.ts"
import { checkBenchSettings, runBenchSettings } from "../../app.ts"
import { loadQueries } from "../../datasets.ts"
import type { Benchmark } from "../benchmark.ts"

export const stableToolBench: Benchmark = {
  name: "stabletoolbench",
  label: "StableToolBench",
  selects: (settings) => settings.tau2 === undefined,
  methods: METHOD_NAMES,
  scoredBy: "judge",
  converted: true,
  check: checkBenchSettings,
  tasks: (settings) =>
    loadQueries({ dir: settings.data, groups: settings.groups, ids: settings.ids, limit: settings.limit }),
  run: runBenchSettings
}
