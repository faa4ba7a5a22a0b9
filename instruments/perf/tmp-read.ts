import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { readRecord } from "../../bench/run-dir.ts"
import { TaskRecord } from "../../bench/run-format.ts"
import { readFileBounded } from "../../src/trace/guarded-fs.ts"
import { capRecordSize, recordBytes, SIZE_CAPS } from "../../src/trace/size-caps.ts"
import { redactValue } from "../../src/trace/redact.ts"
for (const m of ["react", "smurfs"]) {
  const dir = `/tmp/bcprof/run1/tasks/${m}/G1_instruction`
  const files = readdirSync(dir).map((f) => join(dir, f))
  const texts = files.map((f) => readFileSync(f, "utf8"))
  const parsed = texts.map((t) => JSON.parse(t))
  const time = (name: string, fn: (i: number) => unknown) => {
    for (let i = 0; i < files.length; i++) fn(i)
    const cpu = process.threadCpuUsage()
    for (let r = 0; r < 10; r++) for (let i = 0; i < files.length; i++) fn(i)
    const u = process.threadCpuUsage(cpu)
    console.log(m, name.padEnd(28), ((u.user + u.system) / 1000 / files.length / 10).toFixed(3), "ms/record")
  }
  time("readRecord", (i) => readRecord(files[i]!))
  time("readFileBounded", (i) => readFileBounded(files[i]!))
  time("JSON.parse", (i) => JSON.parse(texts[i]!))
  time("TaskRecord.safeParse", (i) => TaskRecord.safeParse(parsed[i]))
  time("JSON.stringify(,null,2)", (i) => JSON.stringify(parsed[i], null, 2))
  time("redactValue", (i) => redactValue(parsed[i]))
  time("capRecordSize", (i) => capRecordSize(parsed[i], SIZE_CAPS.recordBytes))
  time("recordBytes", (i) => recordBytes(parsed[i]))
}
