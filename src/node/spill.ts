/**
 * XSpace spill storage on disk (src/core/engine.ts SpillStore): a temporary file in the system's temporary folder
 * (`TMPDIR`), created on the first spilled run and unlinked at once (only its descriptor holds it, so nothing is
 * left behind whatever ends the process), written and read synchronously (the core waits for each call).
 */
import { closeSync, readSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SpillStore } from "../core/engine.js";
import { createTemp, removeOwned } from "./output.js";

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
