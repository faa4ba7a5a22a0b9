// Profiles: `improved` (ours) and `reference` (the Smurfs authors' code and StableToolBench's baselines
// as they ran). A profile is data the methods read (docs/fidelity.md lists every difference and why).
import * as Data from "effect/Data"
import { STB_ENV } from "../text/stabletoolbench-files.ts"
import type { ChainOptions } from "./chain.ts"
import { type LoopRules, ourLoopRules, referenceLoopRules, type SmurfsOptions } from "./smurfs-options.ts"
import { readSmurfsSource, SMURFS_REPO, SMURFS_SRC_ENV } from "./smurfs-source.ts"

export const PROFILES = ["improved", "reference"] as const
export type ProfileName = (typeof PROFILES)[number]
export const DEFAULT_PROFILE: ProfileName = "improved"

/** Where StableToolBench's code lives, for the messages that ask for a checkout. */
export const STB_REPO = "https://github.com/THUNLP-MT/StableToolBench"

export interface Profile {
  readonly name: ProfileName
  /** Smurfs: the authors' agents from `--smurfs-src` (reference) or ours; the sampling temperature of its requests; its loop rules. */
  readonly smurfs: { readonly authors: boolean; readonly temperature: number | undefined; readonly rules: LoopRules }
  /** ReAct/DFSDT chain settings. */
  readonly chain: Required<Pick<ChainOptions, "nudge" | "validateArgs" | "parallelCalls" | "asStableToolBench">> & {
    readonly temperature: number | undefined
  }
  /**
   * Tool responses reach the methods whole: the ToolBench adapter does not cut them, each method cuts
   * its own (ReAct/DFSDT the `{"error", "response"}` JSON to 1,024 characters as StableToolBench, Smurfs not at all).
   */
  readonly wholeToolResponses: boolean
  /**
   * A method's tools when the run asks for the whole `api_list` (the default): the Smurfs authors'
   * `inference.py` gives Smurfs the task's relevant APIs, StableToolBench gives its baselines the `api_list`.
   */
  readonly toolsets: Readonly<Record<string, "all" | "relevant">>
}

export const PROFILE_SETTINGS: Readonly<Record<ProfileName, Profile>> = {
  improved: {
    name: "improved",
    // undefined: the model's own temperature (0, or --temperature)
    smurfs: { authors: false, temperature: undefined, rules: ourLoopRules },
    chain: { temperature: undefined, nudge: true, validateArgs: true, parallelCalls: false, asStableToolBench: false },
    wholeToolResponses: false,
    toolsets: {}
  },
  reference: {
    name: "reference",
    // the authors' vLLM client samples at 0.95; StableToolBench's OpenAI client at its default 1.0
    smurfs: { authors: true, temperature: 0.95, rules: referenceLoopRules },
    chain: { temperature: 1, nudge: false, validateArgs: false, parallelCalls: true, asStableToolBench: true },
    wholeToolResponses: true,
    toolsets: { smurfs: "relevant", react: "all", dfsdt: "all" }
  }
}

/** A profile cannot run: a checkout it reads is missing. */
export class ProfileCheckoutMissing extends Data.TaggedError("ProfileCheckoutMissing")<{
  readonly missing: ReadonlyArray<string>
}> {
  override get message() {
    return `--profile reference runs the references' own texts, read from your checkouts, and ${this.missing.join("; and ")}. Or run --profile improved (our own wording, no checkout needed).`
  }
}

/**
 * Refuse a reference run whose methods need a checkout that was not given: Smurfs reads the authors'
 * code (`--smurfs-src`), ReAct/DFSDT read StableToolBench's (`--stb`).
 */
export const checkProfile = (
  profile: ProfileName,
  methods: ReadonlyArray<string>,
  checkouts: { readonly stb: string | undefined; readonly smurfsSrc: string | undefined }
): void => {
  if (profile !== "reference") return
  const missing: Array<string> = []
  if (methods.includes("smurfs") && checkouts.smurfsSrc === undefined)
    missing.push(
      `smurfs needs the Smurfs authors' code: git clone ${SMURFS_REPO} and pass its folder with --smurfs-src <dir> (or ${SMURFS_SRC_ENV})`
    )
  if ((methods.includes("react") || methods.includes("dfsdt")) && checkouts.stb === undefined)
    missing.push(
      `react/dfsdt need StableToolBench's code: git clone ${STB_REPO} and pass its folder with --stb <dir> (or ${STB_ENV})`
    )
  if (missing.length > 0) throw new ProfileCheckoutMissing({ missing })
}

/** The Smurfs options a profile sets; `temperature` (--temperature) overrides the profile's. Reads the checkout (throws SmurfsSourceError). */
export const smurfsProfileOptions = (
  profile: ProfileName,
  smurfsSrc: string | undefined,
  temperature?: number
): Pick<SmurfsOptions, "reference" | "rules"> => {
  const p = PROFILE_SETTINGS[profile].smurfs
  if (!p.authors || smurfsSrc === undefined) return { rules: p.rules }
  return {
    reference: { source: readSmurfsSource(smurfsSrc), sampling: { temperature: temperature ?? p.temperature } },
    rules: p.rules
  }
}

/** Chain settings given by their own flags (--nudge, --validate-args, --parallel-calls), over the profile's. */
export type ChainOverrides = Partial<Pick<ChainOptions, "nudge" | "validateArgs" | "parallelCalls">>

/** The chain options a profile sets; `temperature` (--temperature) and `overrides` replace the profile's. */
export const chainProfileOptions = (
  profile: ProfileName,
  temperature?: number,
  overrides: ChainOverrides = {}
): Pick<ChainOptions, "temperature" | "nudge" | "validateArgs" | "parallelCalls" | "asStableToolBench"> => {
  const { temperature: own, ...rest } = PROFILE_SETTINGS[profile].chain
  const t = temperature ?? own
  const given = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined))
  return { ...rest, ...given, ...(t !== undefined ? { temperature: t } : {}) }
}

const withoutFalse = <A extends object, K extends keyof A>(value: A, key: K) => {
  if (value[key] !== false) return value
  const { [key]: _, ...rest } = value
  return rest
}

/** What a profile set, for run.json: every setting it changes, with the overrides applied. */
export const profileRecord = (
  profile: ProfileName,
  temperature: number | undefined,
  sources: { readonly smurfs?: string | undefined; readonly stb?: string | undefined },
  overrides: ChainOverrides = {}
) => {
  const p = PROFILE_SETTINGS[profile]
  return {
    name: profile,
    smurfs: {
      prompts: p.smurfs.authors ? (sources.smurfs ?? null) : "smurfs",
      temperature: temperature ?? p.smurfs.temperature ?? null,
      rules: p.smurfs.rules
    },
    chain: {
      // recorded when on, so that a run recorded before it resumes as it was
      ...withoutFalse(chainProfileOptions(profile, temperature, overrides), "asStableToolBench"),
      temperature: temperature ?? p.chain.temperature ?? null
    },
    wholeToolResponses: p.wholeToolResponses
  }
}
