// Test helper: what the approval tests run: a folder with a note, and a scripted model whose agents first write a copy
// of it (server-filesystem's write_file, which its server marks destructive), then read the note and answer.
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
