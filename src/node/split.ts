/**
 * One Chrome JSON input converted with several threads (`rawtrace convert --jobs N`, N ≥ 2): N − 1 workers convert,
 * this thread writes, and the output is byte-identical to one worker's (assembly/split.ts).
 *
 * Writing a large JSON file is about as much work for the kernel as converting it is for the core (1.1 GB into the
 * page cache: 0.4–0.7 s of system time here, against 0.8 s of conversion), and in one thread the two add up. So the
 * workers hand their output over in pieces (src/node/split_protocol.ts: 4 MiB buffers, transferred and given back,
 * at most 64 MiB per worker in flight) and this thread writes it — through one sink, block gzip included — while
 * they go on converting. With one converting worker (`--jobs 2`) that is all there is to it.
 *
 * With several, each worker indexes the whole file (pass 1 and the NVTX projection); pass 2 cuts the ACTIVITY
 * chunks into segments of about {@link SEGMENT_BYTES} of input, dealt round-robin: worker w emits segments w,
 * w + n, … and decodes the others before its last one without writing them, so that every decoder carries the
 * state one conversion would. Segments are written in order as they complete. Worker 0 writes the header; worker
 * n − 1 writes the end (decoder finish events, row metadata, the `rawtrace` object with the warnings), for which it
 * takes the other workers' rows, last event end and counts when they are done. The one comma the first non-empty
 * segment after an eventless start begins with is dropped.
 *
 * XSpace output is not split (its planes are written from all events at the end): one worker converts it.
 */
import { MessageChannel } from "node:worker_threads";
import { statSync } from "node:fs";
import { basename } from "node:path";
import { RawtraceError } from "../core/codes.js";
import type { SplitState } from "../core/engine.js";
import type { WorkerPool } from "./pool.js";
import type { ConvertJob, ConvertSummary, PartSummary } from "./worker_api.js";
import { SplitCell, splitCellsBytes, returnedCell, type SegmentMessage, type FreeMessage } from "./split_protocol.js";
import { FdSink } from "./output.js";

/**
 * Input bytes per segment when several workers convert (about 3.5× as many JSON bytes out): long enough that a
 * segment's hand-over is noise, short enough that a worker waiting for the segment before its own waits little.
 */
export const SEGMENT_BYTES = 4 << 20;

/**
 * Segments for a file of `bytes` on `n` converting workers: 1 for one worker; else a multiple of `n`, about
 * `segmentBytes` of input each, at least one per worker, at most 65,536.
 */
export function splitSegments(bytes: number, n: number, segmentBytes = SEGMENT_BYTES): number {
  if (n === 1) return 1;
  const rounds = Math.max(1, Math.min(Math.floor(65536 / n), Math.round(bytes / (n * segmentBytes))));
  return n * rounds;
}

/** Input bytes below which one more converting worker costs more to start than it saves. */
export const MIN_WORKER_BYTES = 256 << 10;

/**
 * Converting workers for one Chrome JSON input of `bytes` given `jobs` threads: one fewer (this thread writes), at
 * least one, and one per {@link MIN_WORKER_BYTES} of input at most (`--jobs 1000` on a 10 KB file started 999
 * workers for nothing: 98 s).
 */
export function convertingWorkers(jobs: number, bytes = Infinity): number {
  return Math.max(1, Math.min(jobs - 1, Math.ceil(bytes / MIN_WORKER_BYTES)));
}

/** The other workers' state, joined in segment order for the end writer. */
function joinStates(parts: SplitState[]): SplitState {
  const entries: { seg: number; at: Uint8Array }[] = [];
  for (const p of parts) {
    const dv = new DataView(p.rows.buffer, p.rows.byteOffset, p.rows.byteLength);
    for (let i = 0; i < p.rows.length; i += 24) entries.push({ seg: dv.getUint32(i + 4, true), at: p.rows.subarray(i, i + 24) });
  }
  // Stable: a worker's rows of one segment keep their order.
  entries.sort((a, b) => a.seg - b.seg);
  const rows = new Uint8Array(entries.length * 24);
  entries.forEach((e, i) => rows.set(e.at, i * 24));
  return {
    rows, lastEndNs: parts.reduce((m, p) => (p.lastEndNs > m ? p.lastEndNs : m), 0n), overhead: parts.some((p) => p.overhead),
    events: parts.reduce((n, p) => n + p.events, 0n),
  };
}

/** What {@link convertSplit} returns: the end writer's summary (whole-file counts and warnings), with the workers' counts. */
export type SplitSummary = ConvertSummary & { workers: number; parts: number[]; segments: number };

/**
 * Converts `job.input` to Chrome JSON on `n` ≥ 1 workers of `pool` (which must have `n` free) while this thread
 * writes the output to the open descriptor `fd` (`job.output` names it in messages), gzipped when `job.gzip`.
 * `segmentBytes` (tests) sets the input bytes per segment; `pieceBytes` and `piecesInFlight` (tests) the size and
 * number of the buffers a worker hands over (src/node/split_protocol.ts).
 */
export async function convertSplit(
  pool: WorkerPool, job: ConvertJob, fd: number, n: number,
  opts: { segmentBytes?: number; pieceBytes?: number; piecesInFlight?: number } = {},
): Promise<SplitSummary> {
  const t0 = performance.now();
  let size: number;
  try {
    size = statSync(job.input).size;
  } catch (e) {
    throw new RawtraceError("IO", `${job.input}: cannot open: ${(e as Error).message}`, job.input);
  }
  const segments = splitSegments(size, n, opts.segmentBytes);
  const shared = new SharedArrayBuffer(splitCellsBytes(n));
  const cells = new Int32Array(shared);
  const channels = Array.from({ length: n }, () => new MessageChannel());
  const sink = new FdSink(fd, job.output, !!job.gzip, job.gzipLevel);
  /** Pieces of segments after the one being written, and who posted them, in arrival order per segment. */
  const pending = new Map<number, { m: SegmentMessage; from: number }[]>();
  let next = 0;
  let wroteEvent = false;
  let bytesOut = 0;
  let failure: unknown = null;
  let allWritten!: () => void;
  let writeFailed!: (e: unknown) => void;
  const written = new Promise<void>((resolve, reject) => {
    allWritten = resolve;
    writeFailed = reject;
  });
  written.catch(() => {});
  const endWriter = channels[n - 1].port1;
  const announce = (msg: unknown) => {
    if (Atomics.load(cells, SplitCell.STATE) !== 0) return;
    endWriter.postMessage(msg);
    Atomics.store(cells, SplitCell.STATE, 1);
    Atomics.notify(cells, SplitCell.STATE);
  };
  const abort = (e: unknown) => {
    failure ??= e;
    Atomics.store(cells, SplitCell.ABORT, 1);
    for (let k = 0; k < n; k++) Atomics.notify(cells, returnedCell(k));
    announce({ abort: true });
    writeFailed(e);
  };
  /** Writes one piece of segment `next` and gives its buffer back to worker `from`. */
  const writePiece = async (m: SegmentMessage, from: number) => {
    let c = new Uint8Array(m.buf, 0, m.len);
    if (c.length !== 0) {
      if (next > 0 && !wroteEvent) {
        // Nothing before this segment wrote an event: its leading comma goes.
        if (c[0] !== 44) throw new RawtraceError("INTERNAL", `${job.output}: segment ${next} of the split conversion does not start with a comma`);
        c = c.subarray(1);
      }
      if (next > 0) wroteEvent = true;
      bytesOut += c.length;
      sink.write(c);
      await sink.drain();
    }
    if (m.buf.byteLength !== 0) {
      const f: FreeMessage = { free: m.buf };
      channels[from].port1.postMessage(f, [m.buf]);
      Atomics.add(cells, returnedCell(from), 1);
      Atomics.notify(cells, returnedCell(from));
    }
    if (m.last) {
      if (next === 0) wroteEvent = m.wrote;
      next++;
      if (next === segments) allWritten();
    }
  };
  // Pieces are written in segment order as they come; one write loop at a time.
  let writing = Promise.resolve();
  const writeReady = async (m: SegmentMessage, from: number) => {
    if (failure !== null) return;
    if (m.segment < next) {
      throw new RawtraceError("INTERNAL", `${job.input}: a piece of segment ${m.segment} of the split conversion came after the segment was written`, job.input);
    }
    if (m.segment !== next) {
      const list = pending.get(m.segment);
      if (list) list.push({ m, from });
      else pending.set(m.segment, [{ m, from }]);
      return;
    }
    await writePiece(m, from);
    // Segments that were waiting for this one, as far as they are complete or current.
    while (failure === null && m.last && pending.has(next)) {
      const list = pending.get(next)!;
      pending.delete(next);
      for (const p of list) {
        await writePiece(p.m, p.from);
        m = p.m;
      }
      if (!m.last) break;
    }
  };
  channels.forEach(({ port1 }, k) => {
    port1.on("message", (m: SegmentMessage) => {
      if (typeof m.segment !== "number") return;
      writing = writing.then(() => writeReady(m, k)).catch(abort);
    });
  });
  try {
    const runs: Promise<PartSummary>[] = [];
    for (let k = 0; k < n; k++) {
      const r = pool.convertPart(job, {
        worker: k, workers: n, segments, port: channels[k].port2, cells: shared, pieceBytes: opts.pieceBytes, piecesInFlight: opts.piecesInFlight,
      });
      r.catch(abort);
      runs.push(r);
    }
    const others = Promise.all(runs.slice(0, n - 1));
    // The end writer of several workers takes the others' rows once they are done (one worker needs nothing).
    if (n > 1) others.then((rs) => announce(joinStates(rs.map((r) => r.split!))), () => {});
    const [first, end] = await Promise.all([others, runs[n - 1]]);
    // The last pieces may still be on their way (they travel on other ports than the workers' answers).
    await written;
    await sink.finish();
    const parts = first.map((r) => r.events);
    parts.push(end.events - parts.reduce((a, b) => a + b, 0));
    return { ...end, output: job.output, bytesOut, seconds: (performance.now() - t0) / 1000, workers: n, parts, segments };
  } catch (e) {
    abort(e);
    sink.destroy();
    // The writer's own errors (this thread) name the output only: say which input was being converted, as the
    // pool does for a worker's.
    const f = failure;
    if (f instanceof RawtraceError && !f.message.includes(basename(job.input))) {
      throw new RawtraceError(f.code, `${job.input}: ${f.message}`, job.input, f.offset);
    }
    throw f;
  } finally {
    for (const { port1 } of channels) port1.close();
  }
}

/**
 * What the CLI's line for a converted file adds about threads: ", N workers and a writer" (or ", a worker and a
 * writer") when the file was converted that way, a note when `asked` ≥ 2 workers were given one XSpace input (one
 * writes it), else nothing.
 */
export function splitNote(workers: number | undefined, format: "chrome" | "xspace", asked: number, writer = false): string {
  if (writer) return (workers ?? 1) > 1 ? `, ${workers} workers and a writer` : ", a worker and a writer";
  if ((workers ?? 1) > 1) return `, ${workers} workers`;
  return format === "xspace" && asked > 1 && workers === 1 ? ", one worker (XSpace is not split)" : "";
}
