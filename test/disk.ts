// Test helper: the real file system of the atomic writer, with each file's writes (and close) replaced to play a
// slow, filling or full disk.
import { type AtomicWriteFile, type AtomicWriteFs, nodeAtomicWriteFs } from "../src/trace/atomic-write.ts"

export interface DiskHooks {
  /** Instead of the file's own write; `file` is the real one. */
  readonly write?:
    | ((
        file: AtomicWriteFile,
        buffer: Uint8Array,
        offset: number,
        length: number
      ) => Promise<{ readonly bytesWritten: number }>)
    | undefined
  /** Instead of the file's own close; `flags` is how it was opened ("r" for the directory fsync). */
  readonly close?: ((file: AtomicWriteFile, flags: string | number) => Promise<void>) | undefined
}

export const diskWith = (hooks: DiskHooks, base: AtomicWriteFs = nodeAtomicWriteFs): AtomicWriteFs => ({
  ...base,
  open: async (path, flags) => {
    const file = await base.open(path, flags)
    return {
      sync: () => file.sync(),
      close: () => (hooks.close ? hooks.close(file, flags) : file.close()),
      write: (buffer, offset, length) =>
        hooks.write ? hooks.write(file, buffer, offset, length) : file.write(buffer, offset, length)
    }
  }
})
