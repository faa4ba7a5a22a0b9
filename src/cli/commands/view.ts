// `smurfs view <dir>...`: the comparison report of runs served on 127.0.0.1 (the page `compare --html` writes, and each task's own page), until Ctrl-C.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { slug } from "../../../bench/eval/labels.ts"
import { collectRows } from "../../../bench/report/collect.ts"
import { renderHtml } from "../../../bench/report/html.ts"
import type { FailureKind } from "../../failure.ts"
import { ExitCode } from "../exit-codes.ts"
import { intOption, type ParsedCommand, runCommand, UsageError } from "../options.ts"
import { runProgram } from "../run-program.ts"
import { buildTaskPages, pagesFolder } from "../task-pages.ts"
import { COMMAND } from "./view-help.ts"

export { COMMAND }

export const DEFAULT_VIEW_PORT = 8765

/** The server could not listen (a port in use); the message says what to do. */
export class ViewServerError extends Data.TaggedError("ViewServerError")<{ readonly message: string }> {
  get kind(): FailureKind {
    return "bad-input"
  }
}

/** The directories' report and task pages, by URL path. */
export const viewPages = (inputs: ReadonlyArray<string>, judge: string | undefined): Map<string, string> | string => {
  let rows = collectRows(inputs)
  if (judge !== undefined) {
    const wanted = slug(judge)
    rows = rows.filter((r) => r.judge === wanted || r.judge === judge || r.judge === "")
  }
  if (rows.length === 0) return "no tasks found in the given directories"
  const { tasks, pages, transcripts } = buildTaskPages("index.html", inputs, judge)
  const served = new Map<string, string>()
  const report = renderHtml(rows, {
    title: `smurfs view: ${inputs.join(", ")}`,
    generatedAt: new Date().toISOString(),
    tasks,
    transcripts
  })
  served.set("/", report)
  served.set("/index.html", report)
  const folder = pagesFolder("index.html").replace(/^\.\//, "")
  for (const page of pages) served.set(`/${[folder, ...page.path].map(encodeURIComponent).join("/")}`, page.html)
  return served
}

/** Listen on 127.0.0.1; the server is closed when the scope ends (Ctrl-C). */
const serve = (pages: ReadonlyMap<string, string>, port: number) =>
  Effect.acquireRelease(
    Effect.callback<Server, ViewServerError>((resume) => {
      const server = createServer((request, response) => {
        const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname
        // a browser asks for an icon; there is none, and that is not an error
        if (path === "/favicon.ico") return void response.writeHead(204).end()
        const page = request.method === "GET" || request.method === "HEAD" ? pages.get(path) : undefined
        if (page === undefined) {
          response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n")
          return
        }
        response
          .writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
          .end(request.method === "HEAD" ? undefined : page)
      })
      server.once("error", (e: NodeJS.ErrnoException) =>
        resume(
          Effect.fail(
            new ViewServerError({
              message:
                e.code === "EADDRINUSE"
                  ? `port ${port} on 127.0.0.1 is in use (another smurfs view?): choose another with --port <n>, or --port 0 for any free one`
                  : `cannot listen on 127.0.0.1:${port}: ${e.message}`
            })
          )
        )
      )
      server.listen(port, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

export const run = (argv: Array<string>): Promise<number> => runCommand(COMMAND, argv, (parsed) => view(parsed))

const view = (parsed: ParsedCommand<typeof COMMAND.options>): Promise<number> => {
  if (parsed.positionals.length === 0)
    throw new UsageError("give at least one run directory (or ToolEval results folder) to view")
  const port = intOption("port", parsed.values.port, 0) ?? DEFAULT_VIEW_PORT
  if (port > 65535) throw new UsageError(`--port ${port}: a port is at most 65535`)
  const program = Effect.gen(function* () {
    const pages = yield* Effect.try({
      try: () => viewPages(parsed.positionals, parsed.values.judge),
      catch: (e) => e as ViewServerError
    })
    if (typeof pages === "string") {
      console.error(`smurfs view: ${pages}`)
      return ExitCode.BadInput
    }
    const server = yield* serve(pages, port)
    const { port: bound } = server.address() as AddressInfo
    console.error(`smurfs view: the report of ${parsed.positionals.join(", ")} (${pages.size - 2} task pages)`)
    // the address on stdout, alone on its line, for a script to read
    console.log(`http://127.0.0.1:${bound}/`)
    console.error("Open it in a browser; Ctrl-C stops the server.")
    return yield* Effect.never
  }).pipe(Effect.scoped)
  return runProgram(program, {
    command: "view",
    interrupted: () => console.error("smurfs view: stopped"),
    interruptedCode: ExitCode.Ok
  })
}
