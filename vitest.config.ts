import { defineConfig } from "vitest/config"
import { nodeVersionProblem } from "./test/node-version.ts"

// An older Node fails here with the version it needs, as the CLI does (bin/smurfs.js), not in the middle of the run.
const tooOld = nodeVersionProblem(process.versions.node)
if (tooOld !== undefined) {
  console.error(tooOld)
  process.exit(78)
}

/**
 * Tests that start other programs: the CLI as a child process, redis-server, tmux, g++, `npm pack`, Chromium, MCP
 * servers, and the long fault suites built on them. `npm run test:integration` runs them (CI does, after `npm test`).
 * A new such test is listed here or named `*.integration.test.ts`.
 */
const INTEGRATION = [
  "**/*.integration.test.ts",
  "instruments/grammar/converter.test.ts",
  "instruments/mcp/session.test.ts",
  "bench/queue/**/*.test.ts",
  "src/tools/sources/mcp.test.ts",
  "test/cli/*.test.ts",
  "test/eval-queue.test.ts",
  "test/examples.test.ts",
  "test/faults/bad-input.test.ts",
  "test/faults/chat-save.test.ts",
  "test/faults/disk-full.test.ts",
  "test/faults/hostile-run-dirs.test.ts",
  "test/faults/mcp-credentials.test.ts",
  "test/faults/mcp-hostile.test.ts",
  "test/faults/child-processes.test.ts",
  "test/faults/terminal-escapes.test.ts",
  "test/faults/redis-restart.test.ts",
  "test/faults/redirect-loop.test.ts",
  "test/faults/kill-resume.test.ts",
  "test/faults/secrets.test.ts",
  "test/faults/server-faults-pipeline.test.ts",
  "test/faults/size-caps.test.ts",
  "test/faults/tool-containment.test.ts",
  "test/package.test.ts",
  "test/pipeline-mcp.test.ts",
  "test/queue-retrieve.test.ts",
  "test/queue.test.ts",
  "test/read-only-fs.test.ts",
  "test/server-failures.test.ts"
]

const ALL = ["src/**/*.test.ts", "bench/**/*.test.ts", "instruments/**/*.test.ts", "test/**/*.test.ts"]

export default defineConfig({
  test: {
    pool: "forks",
    // one temporary folder per run (TMPDIR), removed at its end: a run leaves nothing in /tmp
    globalSetup: ["./test/global-setup.ts"],
    projects: [
      {
        extends: true,
        // `npm test`: in-process tests with scripted models and loopback servers. Test files share their workers'
        // module cache (isolate: false): importing effect, zod and the sources again for each of some 80 files was three
        // quarters of the run (218 s against 45 s on two loaded cores), so a test file restores what it changes (env,
        // spies, globals). Timeouts catch hangs, not a busy machine.
        test: {
          name: "unit",
          include: ALL,
          exclude: INTEGRATION,
          isolate: false,
          testTimeout: 120_000,
          hookTimeout: 120_000
        }
      },
      {
        extends: true,
        // `npm run test:integration`: spawned processes, each of which may wait long for a loaded machine. One file at
        // a time (vitest's default on two cores): the suite is mostly the CPU of the CLIs it starts, and two files at a
        // time (maxWorkers: 2, with a sequence.groupOrder of its own) gave no shorter run on a shared machine.
        test: { name: "integration", include: INTEGRATION, testTimeout: 300_000, hookTimeout: 600_000 }
      }
    ]
  }
})
