// Test helper: what the approval tests run: a folder with a note, and a scripted model whose agents first write a copy
// of it (server-filesystem's write_file, which its server marks destructive), then read the note and answer. The script
// answers the default loop (`executor.fused`: one reply per step; after a refused write, the retry's reply names the
// next tool without a thought; both tools' responses are short, so they are the steps' answers, no `answerer.step`)
// and the paper's three requests per step (`--executor three-call`).
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const NOTE = "The meeting moved to Thursday."

/** A new temporary folder (`prefix` names it; the caller removes it) with note.txt and the model's script.json. */
export const noteCopyFolder = (prefix: string): { readonly dir: string; readonly model: string } => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  writeFileSync(join(dir, "note.txt"), `${NOTE}\n`)
  const model = join(dir, "script.json")
  writeFileSync(
    model,
    JSON.stringify({
      planner: [{ subtasks: ["Save and read the note"] }],
      "executor.fused": [
        {
          thought: "Write the copy first.",
          tool: "write_file",
          arguments: { path: join(dir, "copy.txt"), content: "copied" }
        },
        { tool: "read_text_file", arguments: { path: join(dir, "note.txt") } }
      ],
      "executor.thought": [{ thought: "Write the copy first." }, { thought: "Read the note." }],
      "executor.choose": [{ tool: "write_file" }, { tool: "read_text_file" }],
      "executor.args": [{ path: join(dir, "copy.txt"), content: "copied" }, { path: join(dir, "note.txt") }],
      "answerer.step": [{ answer: "Done." }, { answer: NOTE }],
      verifier: [{ status: "solved", reason: "ok" }],
      "answerer.final": [{ answer: NOTE }],
      "chat.intent": [{ intent: "task", task: "Copy the note" }]
    })
  )
  return { dir, model }
}
