/**
 * XSpace spill storage for Node (src/core/engine.ts SpillStore). {@link tieredSpill}, what the Node engine uses:
 * the first {@link SPILL_MEMORY_BYTES} in JavaScript memory, the rest in a temporary file made only when they are
 * exceeded. {@link fileSpill}: the temporary file alone, in the system's temporary folder (`TMPDIR`), unlinked at
 * once (only its descriptor holds it, so nothing is left behind whatever ends the process), written and read
 * synchronously (the core waits for each call).
 */
import { closeSync, readSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memorySpill, type SpillStore } from "../core/engine.js";
import { createTemp } from "./output.js";
import { removeOwned } from "./owned.js";

/**
 * Bytes of a conversion's spill kept in memory before a temporary file is made (16 MiB): a real dump's lines out
 * of start order (NVTX ranges holding many others, device streams whose records come in blocks out of order) spill
 * about 32 B per event, so a dump of up to about half a million such events touches no disk, and memory stays
 * bounded by this much more per conversion (per worker thread with --jobs N) whatever the input.
 */
export const SPILL_MEMORY_BYTES = 16 << 20;

/** A new spill file; throws a clear error naming the folder when it cannot be created. */
export function fileSpill(dir = tmpdir()): SpillStore {
  let t: { path: string; fd: number };
  try {
    t = createTemp(join(dir, "rawtrace-spill"), "spill", true);
  } catch (e) {
    throw new Error(`cannot create the XSpace spill file in ${dir} (set TMPDIR to a writable folder): ${(e as Error).message}`);
  }
  // Unlinked at once (the descriptor keeps the file), as the input spool is: nothing is left behind whatever ends
  // the process, a signal or a terminated worker included.
  removeOwned(t.path);
  const { path, fd } = t;
  let size = 0;
  return {
    write(bytes) {
      let done = 0;
      while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, size + done);
      size += bytes.length;
    },
    read(offset, dst) {
      let done = 0;
      while (done < dst.length) {
        const n = readSync(fd, dst, done, dst.length - done, offset + done);
        if (n === 0) throw new Error(`XSpace spill file ${path} ended at ${offset + done} of ${size} bytes`);
        done += n;
      }
    },
    close() {
      closeSync(fd);
    },
  };
}

/**
 * A spill store whose first `memoryBytes` stay in memory ({@link memorySpill}); the first write that would go past
 * them, and every write after it, goes to a {@link fileSpill} in `dir` (default: `TMPDIR` when the file is made).
 * So the file's offset 0 is the store's offset `boundary` (the memory part's size when the file was made).
 */
export function tieredSpill(dir?: string, memoryBytes = SPILL_MEMORY_BYTES): SpillStore {
  const head = memorySpill();
  let boundary = 0;
  let file: SpillStore | null = null;
  return {
    write(bytes) {
      if (!file && boundary + bytes.length <= memoryBytes) {
        head.write(bytes);
        boundary += bytes.length;
        return;
      }
      file ??= fileSpill(dir);
      file.write(bytes);
    },
    read(offset, dst) {
      // Runs are written and read whole or in pieces of one run, so a read stays on one side; split in case not.
      const inHead = Math.max(0, Math.min(dst.length, boundary - offset));
      if (inHead > 0) head.read(offset, dst.subarray(0, inHead));
      if (inHead < dst.length) file!.read(offset + inHead - boundary, dst.subarray(inHead));
    },
    close() {
      head.close();
      file?.close();
    },
  };
}
