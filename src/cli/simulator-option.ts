// The --simulator option of bench, run and worker: the model that answers tool calls nothing recorded, as StableToolBench's server does.
import "./model-option.ts"

export { standaloneModel as simulatorModel } from "../llm/spec.ts"

/** The environment variable that names the simulator when --simulator is not given. */
export const SIMULATOR_ENV = "SMURFS_SIMULATOR"

/** The simulator's spec: the flag, else SMURFS_SIMULATOR, else none (calls nothing recorded fail, counted as misses). */
export const simulatorSpecOf = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const spec = (flag ?? env[SIMULATOR_ENV])?.trim()
  return spec === undefined || spec === "" ? undefined : spec
}
