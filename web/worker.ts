/**
 * The viewer's Web Worker: runs the WebAssembly core on files the page hands over (File objects: nothing is read
 * on the page's thread) and answers through comlink. Each job gets a fresh core instance, and the page replaces
 * the whole worker when no job runs (web/main.ts recycleWorker), so the memory a big file needed goes back at once.
 *
 *  - load: timeline tables (assembly/emit/timeline.ts): the records leave the core while the pass runs and wait
 *    here; at the end the core says where each goes, the parser moves them into timeline order and the parts are
 *    *transferred* to the page (src/core/timeline.ts);
 *    the summary (`rawtrace stats`, src/core/stats.ts) comes from the same pass of the same core code. The file
 *    is read once, on a reader thread of its own (web/slice_reader.ts): the later passes replay the bytes that
 *    thread kept, packed, while the index pass read them (web/file_source.ts `keep`, `keeper`).
 *  - exportFile: Chrome JSON gzipped with CompressionStream, or XSpace, returned as a Blob for a download.
 *  - details: the Chrome JSON of one selected event, read from the file again (src/core/details.ts).
 */
import * as Comlink from "comlink";
import wasmUrl from "../build/rawtrace.wasm";
import inflateUrl from "../build/inflate.wasm";
import { Engine, type FileInfo } from "../src/core/engine.js";
import { TimelineParser, type TimelineMeta } from "../src/core/timeline.js";
import { decodeStats, type TraceStats } from "../src/core/stats.js";
import { eventDetails, type DetailsTarget, type EventJson } from "../src/core/details.js";
import { dumpFileName } from "../src/core/dump_name.js";
import { fileByteSource, addSourceWarnings, gzipOptions, type FileByteSource, type FileSourceOptions } from "./file_source.js";
import { keepingReaderThread, readerThreadStream } from "./slice_reader.js";

/** Callbacks the page passes (as a comlink proxy) to follow a job. */
export interface JobCallbacks {
  /**
   * Bytes of the file read by pass `pass` (1 index, 3 NVTX projection, 2 emit) out of `total`; pass 4 (load
   * only, total 0): the file is in, the core orders and lays out the timeline and sends it.
   */
  progress(done: number, total: number, pass: number): void;
  /** A part of the timeline's events (src/core/timeline.ts Part; ownership transferred); `first`: its first item. */
  chunk?(chunk: ArrayBuffer, first: number): void;
}

/** What a load returns besides the chunks. */
export interface LoadResult {
  meta: TimelineMeta;
  info: FileInfo;
  /** GPU busy %, kernels by time, memcpy totals: `rawtrace stats` of the same events (null if absent). */
  stats: TraceStats | null;
  events: number;
  /** Peak size of the core's linear memory during the job (bytes). */
  coreBytes: number;
  ms: number;
  /**
   * Wall time per pass (ms): 1 index, 3 NVTX projection, 2 timeline (the core's end-of-pass work included); 0 that
   * end-of-pass work alone (ordering, lanes, writing the tables, the partners and the order); 5 moving the records
   * into timeline order here (src/core/timeline.ts TimelineParser.finish).
   */
  passMs: Record<number, number>;
  /** How many times the file was read from its start (1: the later passes replayed the bytes kept in memory). */
  fileReads: number;
  /** Most bytes kept for the later passes at a pass's start (packed by the reader thread: about a third of the file). */
  keptBytes: number;
}

let compiled: Promise<WebAssembly.Module> | null = null;
function core(): Promise<WebAssembly.Module> {
  // The .wasm is emitted next to this script by esbuild's file loader; compiled while it streams in.
  compiled ??= WebAssembly.compileStreaming(fetch(new URL(wasmUrl, import.meta.url)));
  return compiled;
}

let inflateCompiled: Promise<WebAssembly.Module> | null = null;
/** The gzip reader (build/inflate.wasm, 5 KB), fetched the first time a .gz file is read. */
function inflateModule(): Promise<WebAssembly.Module> {
  inflateCompiled ??= WebAssembly.compileStreaming(fetch(new URL(inflateUrl, import.meta.url)));
  return inflateCompiled;
}

const running = new Set<FileByteSource>();
let tail: Promise<unknown> = Promise.resolve();
let generation = 0;

/** Runs jobs one after another (the page may queue several files). */
function serial<T>(job: (gen: number) => Promise<T>): Promise<T> {
  const gen = generation;
  const p = tail.then(() => job(gen));
  tail = p.catch(() => undefined);
  return p;
}

function cancelledError(): Error {
  const e = new Error("cancelled");
  e.name = "CANCELLED";
  return e;
}

/**
 * How a load keeps the file for its later passes: `packed` by the reader thread (3× smaller; the packing, ≈ 2.8 s
 * of CPU per GiB, runs on that thread while the index pass runs), `raw` in this worker (no packing), `mixed` by
 * the reader thread, the first {@link RAW_KEEP_BYTES} as read and the rest packed (a file up to that size costs no
 * packing; a larger one is held to about RAW_KEEP_BYTES + a third of the rest, for a third of the file's packing
 * time at 1 GiB), or `auto`: packed where the machine has at least {@link PACK_CORES} cores, so that the packing
 * has a core of its own, else mixed (on two cores packing competes with the index pass and the browser's file
 * reading: docs/performance/viewer.md, "The kept file, packed").
 */
export type KeepMode = "packed" | "raw" | "mixed" | "auto";
/** Cores `auto` needs to pack everything. */
export const PACK_CORES = 4;
/** Bytes `mixed` keeps as read before it packs. */
export const RAW_KEEP_BYTES = 512 << 20;

/** The bytes the reader thread keeps as read before it packs, or null: this worker keeps the file, raw. */
function rawBudget(mode: KeepMode): number | null {
  if (mode === "auto") mode = (typeof navigator !== "undefined" ? navigator.hardwareConcurrency ?? 1 : 1) >= PACK_CORES ? "packed" : "mixed";
  return mode === "packed" ? 0 : mode === "mixed" ? RAW_KEEP_BYTES : null;
}

async function withSource<T>(
  file: File, gen: number, run: (src: FileByteSource) => Promise<T>, opts: FileSourceOptions = {}, mode: KeepMode = "auto",
): Promise<T> {
  if (gen !== generation) throw cancelledError();
  // The file is read on a thread of its own (web/slice_reader.ts): reading overlaps with the core's work.
  const read = (f: Blob, keep: boolean) => readerThreadStream(f, file.name, { window: keep ? Infinity : 4 });
  // Packed or mixed: the reader thread keeps the file and replays it for the later passes (unpacking on its own
  // thread). A .gz file is kept as read here: its bytes are compressed already (packing them would cost the time
  // and save nothing).
  const budget = rawBudget(mode);
  // Compressed or not by its bytes, as the CLI decides: a gzipped dump named .rawtrace, a plain one named .gz.
  const gz = await gzipOptions(file);
  if (gen !== generation) throw cancelledError();
  const keeper = opts.keep && budget !== null && !gz.gzip ? keepingReaderThread(file, file.name, budget) : null;
  const src = fileByteSource(file, file.name, { read, keeper, ...gz, inflate: inflateModule, ...opts });
  running.add(src);
  try {
    return await run(src);
  } finally {
    running.delete(src);
    src.dispose();
  }
}

const api = {
  /**
   * Converts `file` to timeline tables; the event chunks go to `cb.chunk`, the rest is returned. `steps`: the
   * regular expression over NVTX range names that marks training steps (default: PyTorch's `ProfilerStep#N`);
   * `keep`: how the file is kept for the later passes ({@link KeepMode}).
   */
  load(_id: number, file: File, cb: JobCallbacks, steps?: string, keep: KeepMode = "auto"): Promise<LoadResult> {
    return serial((gen) =>
      withSource(file, gen, async (src) => {
        const t0 = performance.now();
        let engine: Engine | null = await Engine.create(await core());
        const sent: Promise<void>[] = [];
        const parser = new TimelineParser((chunk, first) => {
          sent.push(Promise.resolve(cb.chunk?.(Comlink.transfer(chunk, [chunk]), first)));
        });
        const passMs: Record<number, number> = {};
        let pass = 0;
        let mark = performance.now();
        let lastWindow = mark;
        let keptBytes = 0;
        const result = await engine.convert(src, parser.sink, {
          format: "timeline",
          traceName: dumpFileName(file.name),
          steps,
          onProgress: (_d, _t, p) => {
            if (p !== pass) {
              keptBytes = Math.max(keptBytes, src.keptBytes);
              const now = performance.now();
              if (pass) passMs[pass] = now - mark;
              pass = p;
              mark = now;
            }
            lastWindow = performance.now();
            cb.progress(src.fileBytesRead, file.size, p);
            // The whole file is in: what follows is the core's end of the pass (order, lanes, tables to the page).
            if (p === 2 && src.fileBytesRead >= file.size) cb.progress(0, 0, 4);
          },
        });
        // A Cancel while the core laid the timeline out (after the last read, which a cancel would have stopped):
        // nothing is kept.
        if (gen !== generation) throw cancelledError();
        const ended = performance.now();
        passMs[pass] = ended - mark;
        // A .gz file damaged after its start, or cut where the dump cannot show it (a trailer): what it gave was
        // converted; say where, as the CLI does (and a damaged gzip magic, read repaired).
        addSourceWarnings(result.info.warnings, src);
        // The core's linear memory (half a gigabyte of sort keys and tables for a 1 GB dump) is garbage from here:
        // unreachable before the records are moved, so the collector may take it while the move allocates.
        const coreBytes = engine.memoryBytes;
        engine = null;
        // 0: the part of the last pass after its last input window (the core orders the events and writes the
        // fix-up and the tables).
        passMs[0] = ended - lastWindow;
        // The records came in while the pass ran; finish moves them into timeline order (freeing the arrival parts
        // as it goes) and hands their parts over.
        const meta = parser.finish();
        if (gen !== generation) throw cancelledError();
        passMs[5] = performance.now() - ended;
        await Promise.all(sent);
        const stats = meta.trailer.length ? decodeStats(meta.trailer) : null;
        return {
          meta, info: result.info, stats, events: result.events, coreBytes, ms: performance.now() - t0, passMs,
          fileReads: src.fileReads, keptBytes,
        };
      }, { keep: true }, keep),
    );
  },

  /**
   * Writes `file` as gzipped Chrome JSON (`chrome`) or XSpace (`xspace`) and returns it as a Blob: the bytes of
   * `rawtrace convert`, with `--steps steps` when the page has a step pattern (`#steps=` in its address).
   */
  exportFile(file: File, format: "chrome" | "xspace", cb: JobCallbacks, steps?: string): Promise<Blob> {
    return serial((gen) =>
      withSource(file, gen, async (src) => {
        const engine = await Engine.create(await core());
        const onProgress = (_d: number, _t: number | undefined, pass: number) => cb.progress(src.fileBytesRead, file.size, pass);
        if (format === "xspace") {
          const parts: Uint8Array[] = [];
          await engine.convert(src, (b) => parts.push(b.slice()), { format: "xspace", steps, onProgress });
          return new Blob(parts as BlobPart[], { type: "application/octet-stream" });
        }
        // Gzip while converting; Blob parts are merged every 64 MiB so the browser may keep them out of the heap.
        const gz = new CompressionStream("gzip");
        const writer = gz.writable.getWriter();
        let failed: unknown = null;
        const collected = (async () => {
          const blobs: Blob[] = [];
          let parts: Uint8Array[] = [];
          let size = 0;
          const reader = gz.readable.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            parts.push(value);
            size += value.byteLength;
            if (size >= 64 << 20) {
              blobs.push(new Blob(parts as BlobPart[]));
              parts = [];
              size = 0;
            }
          }
          blobs.push(new Blob(parts as BlobPart[]));
          return new Blob(blobs, { type: "application/gzip" });
        })();
        await engine.convert(
          src,
          (b) => {
            writer.write(b.slice()).catch((e) => (failed ??= e));
          },
          { format: "chrome", traceName: dumpFileName(file.name), steps, onProgress, afterWindow: () => writer.ready },
        );
        await writer.close();
        if (failed) throw failed;
        return await collected;
      }),
    );
  },

  /**
   * The Chrome JSON of the events `targets` names (src/core/details.ts: the file read again, the events' text as
   * `rawtrace convert` writes it), by timeline index; `steps` and `keep` as the load had them. The page runs it in a
   * worker of its own (web/main.ts), ended by the next selection.
   */
  details(file: File, targets: Array<DetailsTarget & { index: number }>, steps?: string, keep: KeepMode = "auto"): Promise<Map<number, EventJson>> {
    return serial((gen) =>
      withSource(file, gen, async (src) => {
        const engine = await Engine.create(await core());
        return eventDetails(engine, src, targets, { traceName: dumpFileName(file.name), steps });
      }, { keep: true }, keep),
    );
  },

  /** Cancels the running job and every queued one. */
  cancel(): void {
    generation++;
    for (const s of running) s.cancel();
  },
};

export type WorkerApi = typeof api;

Comlink.expose(api);
