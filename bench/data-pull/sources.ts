// Where each piece of benchmark data comes from: files of a pinned commit on GitHub (size and git blob SHA-1 known), archives of Hugging Face datasets (size and SHA-256 from its API).

/** GitHub's raw file host: `$SMURFS_GITHUB_RAW` (a mirror, or a loopback server in tests), else raw.githubusercontent.com. */
export const githubRaw = (env: NodeJS.ProcessEnv = process.env): string =>
  (env["SMURFS_GITHUB_RAW"] || "https://raw.githubusercontent.com").replace(/\/+$/, "")

/** A file of a repository at a pinned commit, checked by its git blob id (and size where the snapshot gave it). */
export interface GithubFile {
  readonly path: string
  readonly size?: number | undefined
  readonly gitBlobSha1: string
}

export interface GithubFiles {
  readonly kind: "github"
  readonly owner: string
  readonly repo: string
  readonly commit: string
  readonly files: ReadonlyArray<GithubFile>
  /** Where the files go under the destination: `at(path)`; their own path by default. */
  readonly at?: ((path: string) => string) | undefined
}

/** An archive in a Hugging Face dataset, unpacked; `place` says which folder of it goes where. */
export interface HfArchive {
  readonly kind: "hf-archive"
  readonly repo: string
  readonly file: string
  readonly revision: string
  /** Folders of the unpacked archive and where they go under the destination (a folder found by name at any depth, or "." for the whole archive). */
  readonly place: ReadonlyArray<{ readonly folder: string; readonly to: string; readonly optional?: boolean }>
}

/** One piece of a dataset: what it is, its licence, and its files. */
export interface DataPiece {
  readonly name: string
  readonly what: string
  readonly licence: string
  readonly source: GithubFiles | HfArchive
}

export const githubUrl = (g: GithubFiles, path: string, env?: NodeJS.ProcessEnv): string =>
  `${githubRaw(env)}/${g.owner}/${g.repo}/${g.commit}/${path.split("/").map(encodeURIComponent).join("/")}`

export const STABLETOOLBENCH_COMMIT = "aa4ed9f4737ad98bd706663f01d63623c3427812"
const stb = (files: ReadonlyArray<GithubFile>): GithubFiles => ({
  kind: "github",
  owner: "THUNLP-MT",
  repo: "StableToolBench",
  commit: STABLETOOLBENCH_COMMIT,
  files
})

/** StableToolBench's test queries and ids (`solvable_queries`) and its licence, at the commit ../shared holds. */
const STB_QUERIES: DataPiece = {
  name: "queries",
  what: "StableToolBench's 765 solvable test queries and their ids (solvable_queries/)",
  licence: "Apache-2.0",
  source: stb([
    { path: "LICENSE", size: 11357, gitBlobSha1: "261eeb9e9f8b2b4b0d119366dda99c6fd7d35c64" },
    {
      path: "solvable_queries/test_instruction/G1_category.json",
      size: 779243,
      gitBlobSha1: "56364621f110b7180422c9c5113cdf6ef8e9af85"
    },
    {
      path: "solvable_queries/test_instruction/G1_instruction.json",
      size: 1199749,
      gitBlobSha1: "2e1f7656ec9426f357ef18fb6c8030753f1492bc"
    },
    {
      path: "solvable_queries/test_instruction/G1_tool.json",
      size: 1266963,
      gitBlobSha1: "9e096070290a7ecc640f11d3fc4c8c23e1feaa1c"
    },
    {
      path: "solvable_queries/test_instruction/G2_category.json",
      size: 865527,
      gitBlobSha1: "89e25fc033ea506d4151f30068d30e4586218f54"
    },
    {
      path: "solvable_queries/test_instruction/G2_instruction.json",
      size: 903088,
      gitBlobSha1: "aa5f3b519994471a0cf8b49e91f71de1761bd2b1"
    },
    {
      path: "solvable_queries/test_instruction/G3_instruction.json",
      size: 858650,
      gitBlobSha1: "04a104a23485bb2ed77c726f58c276a3526bba7b"
    },
    {
      path: "solvable_queries/test_query_ids/G1_category.json",
      size: 2421,
      gitBlobSha1: "dbfc74077f77bfe1d831df37d6087e5f44bea2e1"
    },
    {
      path: "solvable_queries/test_query_ids/G1_instruction.json",
      size: 2580,
      gitBlobSha1: "42542b4b04f82177fbe64de207df16b363c6f039"
    },
    {
      path: "solvable_queries/test_query_ids/G1_tool.json",
      size: 2505,
      gitBlobSha1: "17a25683f772667f79c0fae757744a43496d51c6"
    },
    {
      path: "solvable_queries/test_query_ids/G2_category.json",
      size: 1951,
      gitBlobSha1: "2396b81208a00a4b3d23116b50ec81b9d6ef6bf7"
    },
    {
      path: "solvable_queries/test_query_ids/G2_instruction.json",
      size: 1691,
      gitBlobSha1: "3cafc57f1a4c5c58206a8c395b10e368a1191f77"
    },
    {
      path: "solvable_queries/test_query_ids/G3_instruction.json",
      size: 948,
      gitBlobSha1: "af095447b74f2762e9063c51ea31573652fee16c"
    }
  ])
}

/** The prompt, judge and tool-server texts `--stb` reads, at their own paths (so `--stb <dir>` works on the pull). */
const STB_TEXTS: DataPiece = {
  name: "texts",
  what: "StableToolBench's prompt, ToolEval judge and tool-server files that --stb reads",
  licence: "Apache-2.0",
  source: stb([
    { path: "server/main.py", size: 17163, gitBlobSha1: "7e825a27da2c61c604fa01babe11183f074e2ac1" },
    { path: "server/config.yml", size: 213, gitBlobSha1: "008a64cf0c729334ea514e20b4ab024ca23fc2f9" },
    { path: "server/config_mirrorapi.yml", size: 184, gitBlobSha1: "41f32c9a3078f0fdf6710c43441ffd32e1ef4423" },
    { path: "server/config_mirrorapi_cache.yml", size: 190, gitBlobSha1: "a83d5c2ec5cd32efbfbd06a693266eedf1b77f8a" },
    { path: "server/main_mirrorapi.py", size: 10742, gitBlobSha1: "be0831fa1f0485daa3a5486d0966b864b84e0917" },
    { path: "server/main_mirrorapi_cache.py", size: 10855, gitBlobSha1: "8fcf591e4dc8e6ba4c4b7f81f62f9e4969865dd9" },
    { path: "server/system_prompts.py", size: 5880, gitBlobSha1: "d8d3116c0dac89874af65cc467a63b18cc70f4a2" },
    {
      path: "toolbench/inference/Downstream_tasks/rapidapi.py",
      size: 26984,
      gitBlobSha1: "8c76373abad5175f3d52fbf7af54e20736b2c0cf"
    },
    {
      path: "toolbench/inference/Prompts/ReAct_prompts.py",
      size: 1858,
      gitBlobSha1: "6cb806ed56f76288f5b5f36564bf36071182e0a0"
    },
    {
      path: "toolbench/inference/Prompts/Tree_search_prompts.py",
      size: 528,
      gitBlobSha1: "3f6ae446cd8e5ef4b96e5671c43b7e545f610b54"
    },
    { path: "toolbench/tooleval/fac_eval.py", size: 9601, gitBlobSha1: "cf0e13017b8c9a1e643b8f2d3f1fdbf07ab3f409" },
    {
      path: "toolbench/tooleval/evaluators/registered_cls/base.py",
      size: 4534,
      gitBlobSha1: "0bf9826dde28f2d6efa07ab3431ded6d886ed13a"
    },
    {
      path: "toolbench/tooleval/evaluators/registered_cls/rtl.py",
      size: 9338,
      gitBlobSha1: "b8b5e0d2f1531ced22049eaeec58b6e9cee69576"
    },
    {
      path: "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/config.yaml",
      size: 1795,
      gitBlobSha1: "1b1032d40f3007183ee37d83c13f42425cd40294"
    },
    {
      path: "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/template.txt",
      size: 3466,
      gitBlobSha1: "f6b68da027b5219981b890807ebe3e166aa79002"
    },
    {
      path: "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_normalized/config.yaml",
      size: 1722,
      gitBlobSha1: "590782a5e0fded0663bc1cad708bffc4d6ae1a8b"
    },
    {
      path: "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_normalized/template.txt",
      size: 874,
      gitBlobSha1: "5c629d01b2a75039e1d27ec7f2fda546d50419de"
    }
  ])
}

/** The tool-response cache StableToolBench's README links (Hugging Face dataset stabletoolbench/Cache, 236 MB zip). */
const STB_CACHE: DataPiece = {
  name: "cache",
  what: "StableToolBench's published tool-response cache (server/tool_response_cache/)",
  licence: "Apache-2.0 (StableToolBench's; the dataset card names no licence of its own)",
  source: {
    kind: "hf-archive",
    repo: "stabletoolbench/Cache",
    file: "server_cache.zip",
    revision: "main",
    place: [
      { folder: "tool_response_cache", to: "server/tool_response_cache" },
      { folder: "tools", to: "server/tools", optional: true }
    ]
  }
}

/** The baselines' published runs (Hugging Face dataset stabletoolbench/baselines, 37.9 MB zip), for `smurfs compare`. */
const STB_BASELINES: DataPiece = {
  name: "baselines",
  what: "StableToolBench's published baseline runs (inference results of Feb 2024), for compare",
  licence: "Apache-2.0",
  source: {
    kind: "hf-archive",
    repo: "stabletoolbench/baselines",
    file: "data_baselines.zip",
    revision: "main",
    place: [{ folder: ".", to: "baselines" }]
  }
}

/** The tools StableToolBench's README points to (Hugging Face dataset stabletoolbench/ToolEnv2404, 11.7 MB tar.gz). */
const STB_TOOLS: DataPiece = {
  name: "tools",
  what: "StableToolBench's tool folder (ToolEnv2404: each tool's own description and APIs), into server/tools/",
  licence: "Apache-2.0 (StableToolBench's)",
  source: {
    kind: "hf-archive",
    repo: "stabletoolbench/ToolEnv2404",
    file: "toolenv2404_filtered.tar.gz",
    revision: "main",
    place: [{ folder: ".", to: "server/tools" }]
  }
}

export const TAU2_COMMIT = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"
const TAU2_DOMAINS: Readonly<Record<string, ReadonlyArray<GithubFile>>> = {
  retail: [
    {
      path: "data/tau2/domains/retail/db.json",
      size: 2811616,
      gitBlobSha1: "4d67b03b2d39ade5a7ab6facb2edd7ab3e013d48"
    },
    { path: "data/tau2/domains/retail/policy.md", size: 6699, gitBlobSha1: "d127e6b074654926f337d0d98b0e669ebe90d19e" },
    {
      path: "data/tau2/domains/retail/split_tasks.json",
      size: 3263,
      gitBlobSha1: "8b20704a17aa1940b1e58668f89dcef2ddaeeea3"
    },
    {
      path: "data/tau2/domains/retail/tasks.json",
      size: 345982,
      gitBlobSha1: "e95a9f898b2d1f6568ea8faec78edc3767ce747d"
    }
  ],
  airline: [
    // its db.json is over the snapshot's size limit here: its size is checked by its git blob id alone
    { path: "data/tau2/domains/airline/db.json", gitBlobSha1: "c6a1e817aa9102c5822e83affb3595acbc312701" },
    {
      path: "data/tau2/domains/airline/policy.md",
      size: 7676,
      gitBlobSha1: "8098be7db3f47de943fad39d1e057ede6cc6cd04"
    },
    {
      path: "data/tau2/domains/airline/split_tasks.json",
      size: 1443,
      gitBlobSha1: "c83cce155671e66a6bf07450fd2845fe0eb1f229"
    },
    {
      path: "data/tau2/domains/airline/tasks.json",
      size: 155528,
      gitBlobSha1: "ea4ff5e3f5e3d97ca391846a6e8dd9eb3437dc80"
    }
  ]
}

/** The τ²-bench domains `smurfs data pull tau2` knows. */
export const TAU2_DOMAIN_NAMES = Object.keys(TAU2_DOMAINS)

const tau2 = (files: ReadonlyArray<GithubFile>): GithubFiles => ({
  kind: "github",
  owner: "sierra-research",
  repo: "tau2-bench",
  commit: TAU2_COMMIT,
  files
})

/** The pieces of StableToolBench a pull fetches: the queries and texts always, the rest when asked. */
export const stableToolBenchPieces = (wanted: {
  cache?: boolean
  baselines?: boolean
  tools?: boolean
}): Array<DataPiece> => [
  STB_QUERIES,
  STB_TEXTS,
  ...(wanted.cache ? [STB_CACHE] : []),
  ...(wanted.baselines ? [STB_BASELINES] : []),
  ...(wanted.tools ? [STB_TOOLS] : [])
]

/** The pieces of τ²-bench for the given domains: each domain's database, policy and tasks, the user simulator's guidelines, the licence. */
export const tau2Pieces = (domains: ReadonlyArray<string>): Array<DataPiece> => [
  {
    name: "common",
    what: "τ²-bench's licence and user-simulator guidelines",
    licence: "MIT",
    source: tau2([
      { path: "LICENSE", size: 1072, gitBlobSha1: "f0323a32227c1327820da33d2fb9d3338a27ac84" },
      {
        path: "data/tau2/user_simulator/simulation_guidelines.md",
        size: 1449,
        gitBlobSha1: "b55a28a1d5eaf81e72bdc263307d9f512fe49a99"
      },
      {
        path: "data/tau2/user_simulator/simulation_guidelines_tools.md",
        size: 2747,
        gitBlobSha1: "a7235b1ddf8d0d1e2edc9b1708916f37b0aac045"
      }
    ])
  },
  ...domains.map((d) => ({
    name: d,
    what: `τ²-bench's ${d} domain: database, policy, tasks and their split`,
    licence: "MIT",
    source: tau2(TAU2_DOMAINS[d] ?? [])
  }))
]
