// The look of a task's transcripts, one column per method: the trajectory pages and the report's task view.

/** The look of the methods' columns, also used where the report shows a task's transcripts. */
export const TRAJECTORY_STYLE = `
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 440px), 1fr)); gap: 16px; align-items: start; }
section.method { background: #fff; border: 1px solid #e3e6eb; border-top: 4px solid var(--method); border-radius: 8px; padding: 12px 14px; min-width: 0; }
section.method h2 { font-size: 16px; margin: 0 0 6px; overflow-wrap: anywhere; }
.query, .answer { margin: 6px 0; overflow-wrap: anywhere; white-space: pre-wrap; }
.totals { color: #5b6270; font-size: 13px; }
table.labels { border-collapse: collapse; width: 100%; font-size: 13px; margin: 8px 0; table-layout: fixed; }
table.labels th, table.labels td { text-align: left; padding: 4px 6px; border-bottom: 1px solid #eceef2; vertical-align: top; overflow-wrap: anywhere; }
table.labels col.narrow { width: 6.5em; }
.Solved { color: #1f7a1f; font-weight: 600; }
.Unsolved { color: #b00020; font-weight: 600; }
.Unsure { color: #8a6d00; font-weight: 600; }
.won { color: #1f7a1f; font-weight: 600; } .lost { color: #b00020; font-weight: 600; }
section.method h3 { font-size: 13px; margin: 10px 0 2px; color: #39404d; }
details.step { border-left: 3px solid #e3e6eb; margin: 3px 0; padding: 1px 0 1px 8px; }
details.step > summary { cursor: pointer; white-space: pre-wrap; overflow-wrap: anywhere; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
details.step.call { border-left-color: #d8b84a; } details.step.fail { border-left-color: #d0485c; }
details.step.verdict { border-left-color: #4f86c6; } details.step.back { border-left-color: #a35fc0; } details.step.head > summary { font-weight: 600; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f4f6f8; border-radius: 4px; padding: 6px 8px; margin: 4px 0; font-size: 12px; max-height: 40em; overflow-y: auto; }
details.prompt { margin: 4px 0; } details.prompt > summary { cursor: pointer; color: #2f5fa5; font-size: 12.5px; }
.role { font-size: 11px; color: #6b7280; text-transform: uppercase; letter-spacing: .04em; }
.muted { color: #6b7280; }
table.labels col.tiny { width: 3.2em; } table.labels col.short { width: 4.6em; }
`
