/**
 * `rawtrace convert --jobs N` on one file: the Chrome JSON written by N workers at once, byte-identical to one
 * worker's (assembly/split.ts). Each worker indexes the whole file (pass 1 and the NVTX projection), then emits its
 * share of the ACTIVITY chunks — a contiguous range, in file order — into a part file of its own, decoding the
 * chunks before its range without writing them so that every decoder carries the state one conversion would. The
 * first part holds the header, the last the end (decoder finish events, row metadata, the `rawtrace` object with
 * the warnings), for which it takes the earlier parts' rows, last event end and counts when they are done. A plain
 * output gets the first part straight from its worker and the other parts appended after it; a `.json.gz` gets
 * every part through one sink (so it is the same block gzip as one worker's). The one comma a later part starts
 * with is dropped when the first part wrote no event.
 *
 * XSpace output is not split (its planes are written from all events at the end): one worker converts it.
 */
import { MessageChannel } from "node:worker_threads";
import { mkdtempSync, openSync, readSync, closeSync, rmSync } from "node:fs";
import { join, dirname, basename } from "node:path";
import { tmpdir } from "node:os";
import { RawtraceError } from "../core/codes.js";
import type { SplitState } from "../core/engine.js";
import type { WorkerPool } from "./pool.js";
import type { ConvertJob, ConvertSummary, PartSummary } from "./worker.js";
import { FdSink } from "./output.js";

/**
 * Cost of decoding a chunk without writing it, as a fraction of decoding and writing it (measured on the bench
 * dump: docs/performance.md, "One file on several cores"). The shares are sized so that every worker has the same
 * work: a later worker decodes all chunks before its range, so its range is shorter.
 */
export const DECODE_SHARE = 0.5;

/**
 * Boundaries of `n` shares of the ACTIVITY chunks in 1/65536 (n + 1 values, 0 … 65536): worker k emits [b_k,
 * b_k+1) after decoding [0, b_k), costing `d`·b_k + (b_k+1 − b_k), equal for every worker.
 */
export function splitBounds(n: number, d = DECODE_SHARE): number[] {
  const ends = (t: number) => {
    const b = [0];
    for (let k = 0; k < n; k++) b.push(b[k] * (1 - d) + t);
    return b;
  };
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const t = (lo + hi) / 2;
    if (ends(t)[n] < 1) lo = t;
    else hi = t;
  }
  const b = ends(hi).map((x) => Math.min(65536, Math.round(x * 65536)));
  b[n] = 65536;
  return b;
}

/** The earlier parts' state, joined in file order for the last part. */
function joinStates(parts: SplitState[]): SplitState {
  const rows = new Uint8Array(parts.reduce((n, p) => n + p.rows.length, 0));
  let at = 0;
  for (const p of parts) {
    rows.set(p.rows, at);
    at += p.rows.length;
  }
  return {
    rows, lastEndNs: parts.reduce((m, p) => (p.lastEndNs > m ? p.lastEndNs : m), 0n), overhead: parts.some((p) => p.overhead),
    events: parts.reduce((n, p) => n + p.events, 0n),
  };
}

/** What {@link convertSplit} returns: the last part's summary (whole-file counts and warnings), with the worker count. */
export type SplitSummary = ConvertSummary & { workers: number; parts: number[] };

/**
 * Converts `job.input` to Chrome JSON on `n` ≥ 2 workers of `pool` (which must have `n` free), writing to the open
 * descriptor `fd` (`job.output` names it in messages), gzipped when `gzip`.
 */
export async function convertSplit(pool: WorkerPool, job: ConvertJob, fd: number, n: number): Promise<SplitSummary> {
  const t0 = performance.now();
  const out = job.output === "-" ? tmpdir() : dirname(job.output);
  let dir: string;
  try {
    dir = mkdtempSync(join(out, `.${basename(job.output)}.parts-`));
  } catch {
    dir = mkdtempSync(join(tmpdir(), "rawtrace-parts-"));
  }
  const bounds = splitBounds(n);
  const files = Array.from({ length: n }, (_, k) => join(dir, `part${k}.json`));
  const { port1, port2 } = new MessageChannel();
  const ready = new SharedArrayBuffer(4);
  const announce = (msg: unknown) => {
    port1.postMessage(msg);
    Atomics.store(new Int32Array(ready), 0, 1);
    Atomics.notify(new Int32Array(ready), 0);
  };
  try {
    const runs: Promise<PartSummary>[] = [];
    for (let k = 0; k < n; k++) {
      const last = k === n - 1;
      runs.push(pool.convertPart(job, {
        // A plain output: the first part writes straight into it (the others follow it there); gzip compresses the
        // joined stream, so every part goes to a part file first.
        part: files[k], ...(k === 0 && !job.gzip ? { fd } : {}), from16: bounds[k], to16: bounds[k + 1],
        mode: k === 0 ? 1 : last ? 3 : 2,
        ...(last ? { port: port2, ready } : {}),
      }));
    }
    const earlier = Promise.all(runs.slice(0, n - 1));
    earlier.then((rs) => announce(joinStates(rs.map((r) => r.split!))), () => announce({ abort: true }));
    const [first, end] = await Promise.all([earlier, runs[n - 1]]);
    const parts = first.map((r) => r.events);
    parts.push(end.events - parts.reduce((a, b) => a + b, 0));
    const direct = !job.gzip;
    // When the first part wrote no event after its header, the first byte a later part wrote is a comma one
    // conversion would not have written.
    const strip = !first[0].split!.wrote;
    const bytesOut = (direct ? first[0].bytesOut : 0) +
      await concatenate(direct ? files.slice(1) : files, fd, job.output, !!job.gzip, job.gzipLevel, strip, direct ? 0 : 1);
    return { ...end, output: job.output, bytesOut, seconds: (performance.now() - t0) / 1000, workers: n, parts };
  } finally {
    port1.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Writes the part files in order to `fd` (after what is there); returns the bytes written (before gzip: the JSON's
 * size). With `strip`, the first byte of the first non-empty file from index `stripFrom` on (a comma) is dropped.
 */
async function concatenate(
  files: string[], fd: number, output: string, gzip: boolean, level: number | undefined, strip: boolean, stripFrom: number,
): Promise<number> {
  const sink = new FdSink(fd, output, gzip, level);
  const buf = Buffer.allocUnsafe(4 << 20);
  let total = 0;
  try {
    for (let k = 0; k < files.length; k++) {
      const pfd = openSync(files[k], "r");
      try {
        for (;;) {
          const got = readSync(pfd, buf, 0, buf.length, null);
          if (got === 0) break;
          let from = 0;
          if (strip && k >= stripFrom) {
            if (buf[0] !== 44) throw new RawtraceError("INTERNAL", `${output}: part ${k} of the split conversion does not start with a comma`);
            from = 1;
            strip = false;
          }
          total += got - from;
          sink.write(buf.subarray(from, got));
          await sink.drain();
        }
      } finally {
        closeSync(pfd);
      }
    }
    await sink.finish();
  } catch (e) {
    sink.destroy();
    throw e;
  }
  return total;
}

/**
 * What the CLI's line for a converted file adds about workers: ", N workers" when N wrote one file, a note when
 * `asked` ≥ 2 workers were given one XSpace input (one writes it), else nothing.
 */
export function splitNote(workers: number | undefined, format: "chrome" | "xspace", asked: number): string {
  if ((workers ?? 1) > 1) return `, ${workers} workers`;
  return format === "xspace" && asked > 1 && workers === 1 ? ", one worker (XSpace is not split)" : "";
}
