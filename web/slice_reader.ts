/**
 * Reading a File on a thread of its own. In the core's worker, `File.stream()` delivers the file's bytes as tasks of
 * that worker's own event loop, so while the core decodes a window (the thread busy in WebAssembly) the browser
 * stops feeding it: reading and decoding alternate instead of overlapping (measured in Chromium 156 on a 1.05 GiB
 * dump: 146–217 MB/s through `File.stream()` in a worker, 387–392 MB/s through slices read by a nested worker whose
 * thread does nothing else; bench/web_load.ts, docs/performance.md "The file on a reader thread").
 *
 * A nested worker (web/reader_worker.ts) runs {@link serveSlices}: it reads the file with `Blob.slice().arrayBuffer()`,
 * a few slices in flight, and transfers each slice's ArrayBuffer to the core's worker, where {@link sliceStream}
 * turns them into a ReadableStream. A source that keeps the file for later passes copies them into blocks of its own
 * (web/file_source.ts): in Chromium a buffer transferred in from another thread is not freed by `transfer(0)`.
 *
 * Flow control: the reader sends at most `window` slices the receiver has not taken yet (unbounded when the whole
 * file is kept anyway), so an export does not buffer the file ahead of a slow sink.
 */

/** Bytes per slice (each one ArrayBuffer). */
export const SLICE_BYTES = 16 << 20;
/** Slice reads the reader keeps in flight (4: measured fastest, 8 no better). */
const IN_FLIGHT = 4;

/** The part of a MessagePort (or a Worker, or a worker's global scope) the protocol uses. */
export interface PortLike {
  postMessage(msg: unknown, transfer?: Transferable[]): void;
  onmessage: ((e: MessageEvent) => void) | null;
}

/** Receiver → reader: start reading `file` (one per port), grant more slices, or stop. */
type ToReader =
  | { start: Blob; slice: number; window: number }
  | { take: number }
  | { stop: true };
/** Reader → receiver: a slice (its bytes transferred), the end, or why reading failed. */
type FromReader = { buf: ArrayBuffer } | { end: true } | { error: string };

/**
 * The reader's side: answers one `start` on `port` by reading the file slice by slice until the end, a `stop`, or
 * an error (sent as its message). Runs in web/reader_worker.ts; tests drive it over a MessageChannel.
 */
export function serveSlices(port: PortLike): void {
  let stopped = false;
  let credit = 0;
  let wake: (() => void) | null = null;
  port.onmessage = (e: MessageEvent) => {
    const m = e.data as ToReader;
    if ("start" in m) {
      credit = m.window;
      void run(m.start, m.slice);
    } else if ("take" in m) credit += m.take;
    else stopped = true;
    wake?.();
    wake = null;
  };
  async function run(file: Blob, slice: number): Promise<void> {
    let off = 0;
    const queue: Promise<ArrayBuffer>[] = [];
    const next = () => {
      while (queue.length < IN_FLIGHT && off < file.size) {
        const p = file.slice(off, Math.min(off + slice, file.size)).arrayBuffer();
        p.catch(() => undefined); // awaited below; a failure is reported from there
        queue.push(p);
        off += slice;
      }
    };
    try {
      next();
      while (queue.length && !stopped) {
        while (credit <= 0 && !stopped) await new Promise<void>((ok) => (wake = ok));
        if (stopped) break;
        const buf = await queue.shift()!;
        next();
        credit--;
        port.postMessage({ buf } satisfies FromReader, [buf]);
      }
      if (!stopped) port.postMessage({ end: true } satisfies FromReader);
    } catch (err) {
      port.postMessage({ error: err instanceof Error ? err.message : String(err) } satisfies FromReader);
    }
  }
}

/** Options of {@link sliceStream}. */
export interface SliceStreamOptions {
  /** Bytes per slice (default {@link SLICE_BYTES}). */
  slice?: number;
  /** Slices the reader may send ahead of what the stream's consumer took (default 4; Infinity: read to the end). */
  window?: number;
  /** Called once the stream ended, failed or was cancelled (e.g. to end the reader's worker). */
  done?: () => void;
}

/**
 * The receiver's side: a stream of `file`'s bytes in slices from the reader behind `port` (each chunk a whole,
 * transferred ArrayBuffer). `name` labels errors.
 */
export function sliceStream(port: PortLike, file: Blob, name: string, opts: SliceStreamOptions = {}): ReadableStream<Uint8Array> {
  const window = opts.window ?? 4;
  const queue: Uint8Array[] = [];
  let ended = false;
  let failed: Error | null = null;
  let wake: (() => void) | null = null;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    opts.done?.();
  };
  port.onmessage = (e: MessageEvent) => {
    const m = e.data as FromReader;
    if ("buf" in m) queue.push(new Uint8Array(m.buf));
    else if ("end" in m) ended = true;
    else failed = new Error(`${name}: reading the file failed: ${m.error}`);
    wake?.();
    wake = null;
  };
  port.postMessage({ start: file, slice: opts.slice ?? SLICE_BYTES, window } satisfies ToReader);
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      while (!queue.length && !ended && !failed) await new Promise<void>((ok) => (wake = ok));
      if (queue.length) {
        const c = queue.shift()!;
        if (Number.isFinite(window)) port.postMessage({ take: 1 } satisfies ToReader);
        ctl.enqueue(c);
        return;
      }
      finish();
      if (failed) throw failed;
      ctl.close();
    },
    cancel() {
      port.postMessage({ stop: true } satisfies ToReader);
      queue.length = 0;
      finish();
    },
  }, { highWaterMark: 0 });
}

/**
 * A stream of `file` read by a nested worker of its own (web/reader_worker.ts, next to the calling worker's
 * script), ended with the stream; `null` where workers cannot start workers (the caller then reads `File.stream()`).
 */
export function readerThreadStream(file: Blob, name: string, opts: Omit<SliceStreamOptions, "done"> = {}): ReadableStream<Uint8Array> | null {
  if (typeof Worker === "undefined") return null;
  let w: Worker;
  try {
    w = new Worker(new URL("./reader.js", import.meta.url), { type: "module", name: "rawtrace-reader" });
  } catch {
    return null;
  }
  // A reader that cannot start (its script missing, a crash) fails the stream instead of leaving it waiting.
  w.addEventListener("error", (e) => {
    e.preventDefault();
    w.onmessage?.(new MessageEvent("message", { data: { error: e.message || "the reader thread failed" } }));
  });
  return sliceStream(w as unknown as PortLike, file, name, { ...opts, done: () => w.terminate() });
}
