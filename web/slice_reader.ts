/**
 * Reading a File on a thread of its own. In the core's worker, `File.stream()` delivers the file's bytes as tasks of
 * that worker's own event loop, so while the core decodes a window (the thread busy in WebAssembly) the browser
 * stops feeding it: reading and decoding alternate instead of overlapping (measured in Chromium 156 on a 1.05 GiB
 * dump: 146–217 MB/s through `File.stream()` in a worker, 387–392 MB/s through slices read by a nested worker whose
 * thread does nothing else; bench/web_load.ts, docs/performance/viewer.md "The file on its own thread").
 *
 * A nested worker (web/reader_worker.ts) runs {@link serveSlices}: it reads the file with `Blob.slice().arrayBuffer()`,
 * a few slices in flight, and transfers each slice's ArrayBuffer to the core's worker, where {@link sliceStream}
 * turns them into a ReadableStream. A source that keeps the file for later passes copies them into blocks of its own
 * (web/file_source.ts): in Chromium a buffer transferred in from another thread is not freed by `transfer(0)`.
 *
 * Flow control: the reader sends at most `window` slices the receiver has not taken yet, so neither an export nor a
 * conversion buffers the file ahead of a slow consumer.
 *
 * Keeping ({@link keepingReaderThread}): the reader can also keep what it read, packed (src/core/keep_codec.ts, 3×
 * smaller for a CUPTI dump), and replay it for the later passes, unpacking on its own thread while the core works:
 * the file is read once and the core's thread neither holds the file nor spends time on the codec.
 */
import { KeepCodec } from "../src/core/keep_codec.js";

/** Bytes per slice (each one ArrayBuffer). */
export const SLICE_BYTES = 16 << 20;
/** Slice reads the reader keeps in flight (4: measured fastest, 8 no better). */
const IN_FLIGHT = 4;

/** The part of a MessagePort (or a Worker, or a worker's global scope) the protocol uses. */
export interface PortLike {
  postMessage(msg: unknown, transfer?: Transferable[]): void;
  onmessage: ((e: MessageEvent) => void) | null;
}

/**
 * Receiver → reader: start reading `file` (`keep`: and keep it packed), replay what was kept (`release`: dropping
 * each kept block once sent), grant more slices, or stop. Each start or replay opens stream `id`: a later one
 * ends the one before, and every answer carries the id of the stream it belongs to.
 */
type ToReader =
  | { id: number; start: Blob; slice: number; window: number; keep?: boolean; rawBudget?: number }
  | { id: number; replay: true; window: number; release: boolean }
  | { id: number; take: number }
  | { id: number; stop: true }
  | { back: ArrayBuffer };
/**
 * Reader → receiver: a slice (`len` bytes at the start of `buf`, transferred), the end (`kept`: bytes held, packed
 * or not), or why it failed.
 */
type FromReader = { id: number; buf: ArrayBuffer; len: number } | { id: number; end: true; kept: number } | { id: number; error: string };

/** Spare slice buffers a reader holds at most (given back by the receiver, reused for the next slices). */
const SPARES = 8;

/**
 * The reader's side: answers each `start` on `port` by reading the file slice by slice until the end, a `stop`, or
 * an error (sent as its message), and each `replay` by unpacking the slices a keeping start kept. `codec` makes
 * the packer a keeping start needs (the reader worker compiles build/keep.wasm; absent: keeping fails the stream).
 * Runs in web/reader_worker.ts; tests drive it over a MessageChannel.
 */
export function serveSlices(port: PortLike, codec?: () => Promise<KeepCodec>): void {
  let current = 0;
  let credit = 0;
  // Every loop waiting for credit (a stream a later one replaced still waits: woken, it sees that and ends).
  const waiting: (() => void)[] = [];
  // What a keeping start kept: slices as read (`raw`, while the start's raw budget lasts) or packed, null once
  // released; complete when that read reached the end.
  let kept: ({ bytes: Uint8Array; raw: boolean } | null)[] = [];
  let keptComplete = false;
  let keptBytes = 0;
  // Buffers the receiver gave back: slices travel in these instead of new ones, so a conversion's passes move a
  // few buffers back and forth and the receiver (a thread busy in WebAssembly, whose garbage collector hardly
  // runs) is not left holding a gigabyte of dropped slices; the fresh ones a read makes die here.
  const spares: ArrayBuffer[] = [];
  const spare = (n: number): ArrayBuffer | null => {
    while (spares.length) {
      const b = spares.pop()!;
      if (b.byteLength >= n) return b;
    }
    return null;
  };
  const post = (m: FromReader, transfer?: Transferable[]) => port.postMessage(m, transfer);
  port.onmessage = (e: MessageEvent) => {
    const m = e.data as ToReader;
    if ("back" in m) {
      if (spares.length < SPARES) spares.push(m.back);
      return;
    }
    if ("start" in m || "replay" in m) {
      current = m.id;
      credit = m.window;
      if ("start" in m) void read(m.id, m.start, m.slice, !!m.keep, m.rawBudget ?? 0);
      else void replay(m.id, m.release);
    } else if (m.id === current) {
      if ("take" in m) credit += m.take;
      else current = 0;
    }
    for (const w of waiting.splice(0)) w();
  };
  /** Waits for credit; false once stream `id` was stopped or replaced. */
  async function mayPost(id: number): Promise<boolean> {
    while (credit <= 0 && current === id) await new Promise<void>((ok) => waiting.push(ok));
    return current === id;
  }
  /**
   * Reads `file` as stream `id`; with `keep`, keeps it: the first `rawBudget` bytes as read (no CPU spent), the rest
   * packed (3× smaller, ≈ 2.8 s of CPU per GiB on this thread).
   */
  async function read(id: number, file: Blob, slice: number, keep: boolean, rawBudget: number): Promise<void> {
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
      let packer: KeepCodec | null = null;
      let rawKept = 0;
      if (keep) {
        kept = [];
        keptComplete = false;
        keptBytes = 0;
      }
      next();
      while (queue.length) {
        if (!(await mayPost(id))) return;
        const got = await queue.shift()!;
        // A later start or a stop may have come while the slice was read: this stream's state is not ours to touch.
        if (current !== id) return;
        next();
        credit--;
        const len = got.byteLength;
        // Kept as read while the raw budget lasts, the rest packed.
        const raw = keep && rawKept + len <= rawBudget;
        if (raw) {
          // In a block allocated here: one the replay can free at once (Chromium's transfer(0) does not free the
          // buffer a Blob read made).
          const own = new Uint8Array(len);
          own.set(new Uint8Array(got));
          kept.push({ bytes: own, raw: true });
          keptBytes += len;
          rawKept += len;
        } else if (keep) {
          if (!packer) {
            packer = await (codec ?? noCodec)();
            if (current !== id) return;
          }
          // Packing reads the slice after it went to the core: copied into the codec first (its bytes move with the
          // transfer), packed while the core decodes it.
          packer.stage(new Uint8Array(got));
        }
        // A kept slice travels in a buffer given back when there is one (so that they keep circulating instead of
        // piling up here once the spares are full).
        let buf = keep ? spare(len) : null;
        if (buf) {
          new Uint8Array(buf).set(new Uint8Array(got));
          freeNow(got);
        } else buf = got;
        post({ id, buf, len }, [buf]);
        if (keep && !raw) {
          const p = packer!.packStaged();
          kept.push({ bytes: p, raw: false });
          keptBytes += p.length;
        }
      }
      if (current !== id) return;
      keptComplete = keep;
      post({ id, end: true, kept: keep ? keptBytes : 0 });
    } catch (err) {
      if (current === id) post({ id, error: err instanceof Error ? err.message : String(err) });
    }
  }
  async function replay(id: number, release: boolean): Promise<void> {
    try {
      let unpacker: KeepCodec | null = null;
      if (!keptComplete) throw new Error("nothing kept to replay (the read that keeps did not reach the end)");
      for (let k = 0; k < kept.length; k++) {
        if (!(await mayPost(id))) return;
        const e = kept[k];
        if (!e) throw new Error("the kept bytes were already released");
        const p = e.bytes;
        if (release) {
          kept[k] = null;
          keptBytes -= p.length;
        }
        let buf: ArrayBuffer;
        let n: number;
        if (e.raw) {
          // A copy travels (the kept slice itself would come back as a buffer transferred in, which Chromium
          // frees only when this thread's collector runs: hardly ever), and a released slice is freed now.
          n = p.length;
          buf = spare(n) ?? new ArrayBuffer(n);
          new Uint8Array(buf).set(p);
          if (release) freeNow(p.buffer as ArrayBuffer);
        } else {
          unpacker ??= await (codec ?? noCodec)();
          n = KeepCodec.unpackedLength(p);
          buf = spare(n) ?? new ArrayBuffer(n);
          unpacker.unpack(p, new Uint8Array(buf));
          // A released block's memory goes back now, not when this thread's collector next runs (it hardly runs
          // here: a replay allocates nothing).
          if (release) freeNow(p.buffer as ArrayBuffer);
        }
        credit--;
        post({ id, buf, len: n }, [buf]);
      }
      if (release) keptComplete = false;
      if (current === id) post({ id, end: true, kept: keptBytes });
    } catch (err) {
      if (current === id) post({ id, error: err instanceof Error ? err.message : String(err) });
    }
  }
}

/**
 * Frees `buf`'s memory at once (ArrayBuffer.prototype.transfer to length 0 detaches it), where supported; for
 * buffers allocated on this thread (Chromium does not free one transferred in from another thread this way).
 */
export function freeNow(buf: ArrayBuffer): void {
  const b = buf as ArrayBuffer & { transfer?: (n: number) => ArrayBuffer; detached?: boolean };
  if (typeof b.transfer === "function" && !b.detached) b.transfer(0);
}

function noCodec(): Promise<KeepCodec> {
  return Promise.reject(new Error("this reader cannot keep what it reads (no codec)"));
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

let streamIds = 0;

/**
 * The receiver's side of one stream: sends `open` (a start or a replay, given its id here) and turns the slices
 * that come back into a ReadableStream (each chunk a whole, transferred ArrayBuffer). `ended(kept)` runs when the
 * reader says the stream is complete. `name` labels errors.
 */
function portStream(
  port: PortLike, name: string, open: Record<string, unknown>, window: number,
  ended?: (kept: number) => void, done?: () => void, received?: WeakSet<ArrayBuffer>,
): ReadableStream<Uint8Array> {
  const id = ++streamIds;
  const queue: Uint8Array[] = [];
  let end = false;
  let failed: Error | null = null;
  let wake: (() => void) | null = null;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done?.();
  };
  port.onmessage = (e: MessageEvent) => {
    const m = e.data as FromReader;
    if (m.id !== id) return; // an answer to a stream this port ended before
    if ("buf" in m) {
      queue.push(new Uint8Array(m.buf, 0, m.len));
      received?.add(m.buf);
    }
    else if ("end" in m) {
      end = true;
      ended?.(m.kept);
    } else failed = new Error(`${name}: reading the file failed: ${m.error}`);
    wake?.();
    wake = null;
  };
  port.postMessage({ ...open, id, window } as ToReader);
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      while (!queue.length && !end && !failed) await new Promise<void>((ok) => (wake = ok));
      if (queue.length) {
        const c = queue.shift()!;
        if (Number.isFinite(window)) port.postMessage({ id, take: 1 } satisfies ToReader);
        ctl.enqueue(c);
        return;
      }
      finish();
      if (failed) throw failed;
      ctl.close();
    },
    cancel() {
      port.postMessage({ id, stop: true } satisfies ToReader);
      queue.length = 0;
      finish();
    },
  }, { highWaterMark: 0 });
}

/**
 * The receiver's side: a stream of `file`'s bytes in slices from the reader behind `port` (each chunk a whole,
 * transferred ArrayBuffer). `name` labels errors.
 */
export function sliceStream(port: PortLike, file: Blob, name: string, opts: SliceStreamOptions = {}): ReadableStream<Uint8Array> {
  return portStream(port, name, { start: file, slice: opts.slice ?? SLICE_BYTES }, opts.window ?? 4, undefined, opts.done);
}

/**
 * A reader that keeps what it read (web/file_source.ts `keeper`): read() reads the file once, the reader packing
 * each slice as it goes; replay() streams the kept bytes again, unpacked on the reader's thread.
 */
export interface KeepingReader {
  /** Reads the file; the reader keeps it, packed. */
  read(): ReadableStream<Uint8Array>;
  /** Whether a read() (or a replay without release) reached the end: the kept bytes are whole. */
  readonly complete: boolean;
  /** Packed bytes the reader holds (as of the last stream's end). */
  readonly keptBytes: number;
  /** Replays the kept bytes; `release`: each block is dropped once sent (the last pass: memory shrinks as it runs). */
  replay(release: boolean): ReadableStream<Uint8Array>;
  /**
   * Hands a chunk of read() or replay() back once its bytes were used (copied into the core), for the reader to
   * fill again; the chunk is empty (detached) afterwards. Chunks from elsewhere are ignored.
   */
  giveBack(chunk: Uint8Array): void;
  /** Drops everything kept and ends the reader. */
  close(): void;
}

/**
 * A {@link KeepingReader} over the reader behind `port`; `close` is called once by {@link KeepingReader.close}.
 * Slices in flight: `window` (default 4) for every stream.
 */
export function keepingReader(
  port: PortLike, file: Blob, name: string, opts: { slice?: number; window?: number; close?: () => void; rawBudget?: number } = {},
): KeepingReader {
  const window = opts.window ?? 4;
  // The buffers this reader sent (and not given back yet).
  const given = new WeakSet<ArrayBuffer>();
  let complete = false;
  let keptBytes = 0;
  let closed = false;
  const self: KeepingReader = {
    giveBack(chunk: Uint8Array) {
      const buf = chunk.buffer as ArrayBuffer & { detached?: boolean };
      if (closed || buf.detached || buf.byteLength === 0) return;
      if (!given.delete(buf)) return;
      port.postMessage({ back: buf } satisfies ToReader, [buf]);
    },
    get complete() {
      return complete;
    },
    get keptBytes() {
      return keptBytes;
    },
    read() {
      complete = false;
      if (closed) return failedStream(`${name}: the file's reader was closed`);
      return portStream(port, name, { start: file, slice: opts.slice ?? SLICE_BYTES, keep: true, rawBudget: opts.rawBudget ?? 0 }, window, (k) => {
        complete = true;
        keptBytes = k;
      }, undefined, given);
    },
    replay(release: boolean) {
      if (release) complete = false;
      if (closed) return failedStream(`${name}: the kept bytes were already released (the file's reader was closed)`);
      return portStream(port, name, { replay: true, release }, window, (k) => {
        keptBytes = k;
        if (!release) complete = true;
        // Everything was sent and nothing is kept: end the reader now, so that its buffers and codec are gone
        // before the core's end of the pass (the load's memory peak), not when the source is disposed.
        else self.close();
      }, undefined, given);
    },
    close() {
      if (closed) return;
      closed = true;
      complete = false;
      opts.close?.();
    },
  };
  return self;
}

/** A stream that fails with `message` when read. */
function failedStream(message: string): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    pull() {
      throw new Error(message);
    },
  });
}

/** Starts the viewer's nested reader worker (web/reader_worker.ts, next to the calling worker's script), or null. */
function readerWorker(): Worker | null {
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
    w.onmessage?.(new MessageEvent("message", { data: { id: streamIds, error: e.message || "the reader thread failed" } }));
  });
  return w;
}

/**
 * A stream of `file` read by a nested worker of its own (web/reader_worker.ts, next to the calling worker's
 * script), ended with the stream; `null` where workers cannot start workers (the caller then reads `File.stream()`).
 */
export function readerThreadStream(file: Blob, name: string, opts: Omit<SliceStreamOptions, "done"> = {}): ReadableStream<Uint8Array> | null {
  const w = readerWorker();
  if (!w) return null;
  return sliceStream(w as unknown as PortLike, file, name, { ...opts, done: () => w.terminate() });
}

/**
 * A {@link KeepingReader} on a nested worker of its own, ended by close(); `null` where workers cannot start
 * workers (the caller then keeps the file itself).
 */
export function keepingReaderThread(file: Blob, name: string, rawBudget = 0): KeepingReader | null {
  const w = readerWorker();
  if (!w) return null;
  return keepingReader(w as unknown as PortLike, file, name, { close: () => w.terminate(), rawBudget });
}
