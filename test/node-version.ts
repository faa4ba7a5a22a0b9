// The Node the tests need, said before anything runs (vitest.config.ts): on an older Node the suite would fail in
// many places and vitest's reporter itself crashes (Map.groupBy), naming no version. The CLI says the same (bin/smurfs.js).

/** The oldest Node the package and its tests run on (package.json's engines). */
export const NEEDED_NODE = "22.18"

/** Why the tests cannot run on Node `version`, with what to do; undefined when it is new enough. */
export const nodeVersionProblem = (version: string): string | undefined => {
  const [major = 0, minor = 0] = version.split(".").map(Number)
  const [needMajor = 0, needMinor = 0] = NEEDED_NODE.split(".").map(Number)
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined
  return (
    `smurfs needs Node.js ${NEEDED_NODE} or newer to run its tests (found ${version}). ` +
    "Install a current Node (https://nodejs.org, or `nvm install 22`) and run the tests again."
  )
}
