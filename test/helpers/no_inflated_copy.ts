/**
 * Runs a conversion the way the CLI's gzip source runs it when it cannot keep the index pass's bytes
 * (src/node/inflated_copy.ts gives up without a temporary folder): every pass then reads and inflates the .gz itself.
 */
import { join } from "node:path";
import { tmpdir } from "node:os";

/** Runs `fn` with the system's temporary folder (TMPDIR, which os.tmpdir() reads on each call) set to a missing one. */
export async function withoutInflatedCopy<T>(fn: () => Promise<T>): Promise<T> {
  const was = process.env.TMPDIR;
  process.env.TMPDIR = join(tmpdir(), `rawtrace-no-such-folder-${process.pid}`, "x");
  try {
    return await fn();
  } finally {
    if (was === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = was;
  }
}
