// Archives as their publishers ship them, unpacked into a folder: zip (yauzl, ZIP64 included) and tar/tar.gz (tar); entries that would land outside it are refused.
import { createWriteStream } from "node:fs"
import { mkdir } from "node:fs/promises"
import { dirname, isAbsolute, join, relative, resolve } from "node:path"
import { pipeline } from "node:stream/promises"
import * as tar from "tar"
import yauzl from "yauzl"

/** What an unpacking did, for the progress line. */
export interface Unpacked {
  readonly files: number
  readonly bytes: number
}

export type ArchiveFormat = "zip" | "tar.gz" | "tar"

/** The archive format of a file name, or undefined for a plain file. */
export const archiveFormat = (name: string): ArchiveFormat | undefined =>
  /\.zip$/i.test(name) ? "zip" : /\.(tar\.gz|tgz)$/i.test(name) ? "tar.gz" : /\.tar$/i.test(name) ? "tar" : undefined

/** Where an entry goes under `dir`, or undefined for a name that would land outside it (absolute, `..`). */
export const entryTarget = (dir: string, name: string): string | undefined => {
  const normalized = name.replace(/\\/g, "/")
  if (normalized.startsWith("/") || /^[A-Za-z]:/.test(normalized)) return undefined
  const target = resolve(dir, normalized)
  const rel = relative(resolve(dir), target)
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? undefined : target
}

const openZip = (path: string) =>
  new Promise<yauzl.ZipFile>((res, rej) =>
    yauzl.open(path, { lazyEntries: true, autoClose: true }, (err, zip) => (err ? rej(err) : res(zip)))
  )

const unzip = async (archive: string, dir: string, onEntry?: (u: Unpacked) => void): Promise<Unpacked> => {
  const zip = await openZip(archive)
  let files = 0
  let bytes = 0
  await new Promise<void>((res, rej) => {
    zip.on("error", rej)
    zip.on("end", () => res())
    zip.on("entry", (entry: yauzl.Entry) => {
      const target = entryTarget(dir, entry.fileName)
      const next = () => zip.readEntry()
      if (target === undefined || entry.fileName.startsWith("__MACOSX/")) return next()
      if (/\/$/.test(entry.fileName)) {
        mkdir(target, { recursive: true }).then(next, rej)
        return
      }
      mkdir(dirname(target), { recursive: true })
        .then(
          () =>
            new Promise<void>((done, fail) =>
              zip.openReadStream(entry, (err, stream) =>
                err ? fail(err) : pipeline(stream, createWriteStream(target)).then(done, fail)
              )
            )
        )
        .then(() => {
          files++
          bytes += entry.uncompressedSize
          onEntry?.({ files, bytes })
          next()
        }, rej)
    })
    zip.readEntry()
  })
  return { files, bytes }
}

/**
 * Unpack `archive` into `dir` (created). tar refuses absolute and `..` entries itself (its `preservePaths` stays
 * off); zip entries are checked by `entryTarget` (and yauzl validates names). `onEntry` is told as files land.
 */
export const unpack = async (
  archive: string,
  dir: string,
  format: ArchiveFormat,
  onEntry?: (u: Unpacked) => void
): Promise<Unpacked> => {
  await mkdir(dir, { recursive: true })
  if (format === "zip") return unzip(archive, dir, onEntry)
  let files = 0
  let bytes = 0
  await tar.x({
    file: archive,
    cwd: dir,
    gzip: format === "tar.gz",
    strict: true,
    onReadEntry: (entry) => {
      if (entry.type === "File") {
        files++
        bytes += entry.size ?? 0
        onEntry?.({ files, bytes })
      }
    }
  })
  return { files, bytes }
}

/** A folder named `name` anywhere under `dir` (the shallowest), for archives whose inner layout varies. */
export const findFolder = async (dir: string, name: string, depth = 4): Promise<string | undefined> => {
  const { readdir } = await import("node:fs/promises")
  let level = [dir]
  for (let d = 0; d <= depth && level.length > 0; d++) {
    const next: Array<string> = []
    for (const folder of level) {
      const entries = await readdir(folder, { withFileTypes: true }).catch(() => [])
      for (const e of entries) {
        if (!e.isDirectory() || e.name === "__MACOSX") continue
        if (e.name === name) return join(folder, e.name)
        next.push(join(folder, e.name))
      }
    }
    level = next
  }
  return undefined
}
