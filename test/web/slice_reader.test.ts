/**
 * The viewer's file-reader thread protocol (web/slice_reader.ts), both sides driven over a MessageChannel as the
 * core's worker and the nested reader worker drive it: the bytes arrive whole and in order, the reader never runs
 * more than `window` slices ahead of the consumer (unless told to read to the end), a failing read fails the stream
 * with the file's name, cancelling stops the reader, and a conversion through it (the file source's `read` option,
 * kept for replay) gives the same bytes as one from memory without touching `File.stream()`.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";
import { keepingReader, serveSlices, sliceStream, type PortLike } from "../../web/slice_reader.js";
import { KeepCodec } from "../../src/core/keep_codec.js";
import { fileByteSource } from "../../web/file_source.js";
import { rng } from "../../src/tools/rng.js";

/** Both sides of a reader over a fresh channel; `sent` counts the slices the reader posted. */
function channel(): { reader: PortLike; receiver: PortLike; sent: () => number; close(): void } {
  const ch = new MessageChannel();
  let sent = 0;
  const reader = ch.port1 as unknown as PortLike;
  const post = reader.postMessage.bind(reader);
  reader.postMessage = (m: unknown, t?: Transferable[]) => {
    if (m && typeof m === "object" && "buf" in m) sent++;
    post(m, t);
  };
  return {
    reader, receiver: ch.port2 as unknown as PortLike, sent: () => sent,
    close: () => (ch.port1.close(), ch.port2.close()),
  };
}

async function drain(s: ReadableStream<Uint8Array>, each?: () => Promise<void>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  const r = s.getReader();
  for (;;) {
    const x = await r.read();
    if (x.done) return out;
    out.push(x.value);
    await each?.();
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) out.set(p, o), (o += p.length);
  return out;
}

const tick = () => new Promise<void>((ok) => setTimeout(ok, 5));

type Source = Parameters<Awaited<ReturnType<typeof createEngine>>["convert"]>[0];

/**
 * The NVTX sample as a Blob whose `stream()` throws (everything must go through the reader), the SHA-256 of its
 * timeline conversion from memory, and the function that hashes a conversion of another source.
 */
async function timelineOfSample(): Promise<{ sha: (src: Source) => Promise<string>; want: string; blob: Blob }> {
  const dump = readFileSync("samples/h100_torch_train_nvtx.rawtrace");
  const engine = await createEngine();
  const sha = async (src: Source) => {
    const h = createHash("sha256");
    await engine.convert(src, (b) => h.update(b), { format: "timeline", traceName: "t" });
    return h.digest("hex");
  };
  const blob = new Blob([dump]);
  blob.stream = () => {
    throw new Error("File.stream() called");
  };
  return { sha, want: await sha(memorySource(dump, "t.rawtrace")), blob };
}

test("slices arrive whole and in order, for sizes around the slice boundary", async () => {
  const r = rng(17);
  for (const [size, slice] of [[0, 64], [1, 64], [63, 64], [64, 64], [65, 64], [1000, 64], [100_003, 4096]]) {
    const bytes = new Uint8Array(size).map(() => Math.floor(r() * 256));
    const c = channel();
    serveSlices(c.reader);
    let ended = 0;
    const parts = await drain(sliceStream(c.receiver, new Blob([bytes]), "f.rawtrace", { slice, done: () => ended++ }));
    assert.equal(concat(parts), bytes, `size ${size}`);
    assert.ok(parts.every((p, i) => p.length === (i < parts.length - 1 ? slice : size - slice * (parts.length - 1))));
    assert.ok(parts.every((p) => p.byteOffset === 0 && p.byteLength === p.buffer.byteLength), "whole buffers");
    assert.is(ended, 1, "done once");
    c.close();
  }
});

test("the reader stays within the window of a slow consumer; Infinity reads ahead to the end", async () => {
  const bytes = new Uint8Array(64 * 40).fill(7);
  for (const window of [1, 3]) {
    const c = channel();
    serveSlices(c.reader);
    let maxAhead = 0;
    let taken = 0;
    const parts = await drain(sliceStream(c.receiver, new Blob([bytes]), "f", { slice: 64, window }), async () => {
      taken++;
      await tick(); // give the reader every chance to run ahead
      maxAhead = Math.max(maxAhead, c.sent() - taken);
    });
    assert.is(parts.length, 40);
    assert.ok(maxAhead <= window, `window ${window}: ${maxAhead} ahead`);
    c.close();
  }
  const c = channel();
  serveSlices(c.reader);
  const s = sliceStream(c.receiver, new Blob([bytes]), "f", { slice: 64, window: Infinity });
  for (let i = 0; i < 2000 && c.sent() < 40; i++) await tick(); // up to 10 s: a loaded machine too
  assert.is(c.sent(), 40, "read to the end before anything was taken");
  assert.is((await drain(s)).length, 40);
  c.close();
});

test("a failing read fails the stream with the file's name; cancel stops the reader", async () => {
  const bad = new Blob([new Uint8Array(1000)]);
  bad.slice = (() => ({ arrayBuffer: () => Promise.reject(new Error("disk on fire")) })) as unknown as Blob["slice"];
  // A channel that does not clone (the Blob's failing slice() must reach the reader as it is).
  const a = { onmessage: null } as PortLike;
  const b = { onmessage: null } as PortLike;
  a.postMessage = (m) => setTimeout(() => b.onmessage?.({ data: m } as MessageEvent));
  b.postMessage = (m) => setTimeout(() => a.onmessage?.({ data: m } as MessageEvent));
  serveSlices(a);
  let error = "";
  try {
    await drain(sliceStream(b, bad, "big.rawtrace", { slice: 64 }));
  } catch (e) {
    error = (e as Error).message;
  }
  assert.match(error, /^big\.rawtrace: reading the file failed: disk on fire/);

  const d = channel();
  serveSlices(d.reader);
  const s = sliceStream(d.receiver, new Blob([new Uint8Array(64 * 100)]), "f", { slice: 64, window: 2 });
  const r = s.getReader();
  await r.read();
  await r.cancel();
  const at = d.sent();
  for (let i = 0; i < 5; i++) await tick();
  assert.ok(d.sent() <= at + 1, "nothing more after stop (one slice may have been in flight)");
  d.close();
});

test("a kept conversion through the reader thread: same bytes as memory, File.stream() never called", async () => {
  const { sha, want, blob } = await timelineOfSample();
  const channels: ReturnType<typeof channel>[] = [];
  const keeps: boolean[] = [];
  const src = fileByteSource(blob, "t.rawtrace", {
    keep: true,
    blockBytes: 65536,
    read: (f, keep) => {
      const c = channel();
      channels.push(c);
      keeps.push(keep);
      serveSlices(c.reader);
      return sliceStream(c.receiver, f, "t.rawtrace", { slice: 40_000, window: keep ? Infinity : 4 });
    },
  });
  assert.is(await sha(src), want);
  assert.equal(keeps, [true], "one read, kept");
  assert.is(src.fileReads, 1);
  for (const c of channels) c.close();
});

const keepModule = new WebAssembly.Module(readFileSync("build/keep.wasm"));
const codec = () => Promise.resolve(new KeepCodec(keepModule));

test("a keeping reader: read once, replayed from its packed copy (same bytes every pass), released by the last", async () => {
  const { sha, want, blob } = await timelineOfSample();
  const c = channel();
  serveSlices(c.reader, codec);
  let closed = 0;
  const keeper = keepingReader(c.receiver, blob, "t.rawtrace", { slice: 40_000, close: () => closed++ });
  const src = fileByteSource(blob, "t.rawtrace", {
    keep: true,
    keeper,
    read: () => {
      throw new Error("read() called: the keeper reads");
    },
  });
  assert.is(await sha(src), want);
  assert.is(src.fileReads, 1);
  assert.is(keeper.complete, false, "the emit pass released the kept bytes");
  assert.is(keeper.keptBytes, 0);
  src.dispose();
  assert.is(closed, 1);
  c.close();
});

test("a mixed keeping reader: the first bytes kept as read, the rest packed; replays and the conversion the same", async () => {
  const dump = readFileSync("samples/h100_torch_train_nvtx.rawtrace");
  const slice = 65536;
  const slices = Math.ceil(dump.length / slice);
  assert.ok(slices >= 6, `${slices} slices`);
  const packedOnly = await (async () => {
    const c = channel();
    serveSlices(c.reader, codec);
    const k = keepingReader(c.receiver, new Blob([dump]), "t.rawtrace", { slice });
    await drain(k.read());
    c.close();
    return k.keptBytes;
  })();
  // Budgets: none (all packed), three slices and a half (three kept as read), all of it (no packing at all).
  for (const [budget, rawSlices] of [[0, 0], [3.5 * slice, 3], [Infinity, slices]] as const) {
    const c = channel();
    let codecs = 0;
    serveSlices(c.reader, async () => (codecs++, codec()));
    const keeper = keepingReader(c.receiver, new Blob([dump]), "t.rawtrace", { slice, window: 2, rawBudget: budget });
    const parts = await drain(keeper.read());
    assert.equal(concat(parts), new Uint8Array(dump));
    for (const p of parts) keeper.giveBack(p);
    const raw = Math.min(dump.length, rawSlices * slice);
    if (budget === 0) assert.is(keeper.keptBytes, packedOnly);
    else if (raw === dump.length) assert.is(keeper.keptBytes, dump.length, "all kept as read");
    else {
      // The raw part as it is, the rest packed (smaller than itself).
      assert.ok(keeper.keptBytes > raw && keeper.keptBytes < dump.length, `${keeper.keptBytes}: ${raw} raw + the rest packed`);
      assert.ok(keeper.keptBytes > packedOnly, "more kept than packing everything");
    }
    for (const release of [false, true]) {
      const again = await drain(keeper.replay(release));
      assert.equal(concat(again), new Uint8Array(dump), `budget ${budget}, replay (release ${release})`);
      for (const p of again) keeper.giveBack(p);
    }
    assert.is(keeper.keptBytes, 0);
    // No packing, no codec.
    if (budget === Infinity) assert.is(codecs, 0, "a budget the file fits in never makes the codec");
    c.close();
  }
  // A conversion through a mixed keeper: the same timeline as from memory.
  const { sha, want, blob } = await timelineOfSample();
  const c = channel();
  serveSlices(c.reader, codec);
  const keeper = keepingReader(c.receiver, blob, "t.rawtrace", { slice: 40_000, rawBudget: 100_000 });
  const src = fileByteSource(blob, "t.rawtrace", { keep: true, keeper, read: () => { throw new Error("read() called: the keeper reads"); } });
  assert.is(await sha(src), want);
  assert.is(src.fileReads, 1);
  src.dispose();
  c.close();
});

test("a keeping reader: kept bytes packed; replay without release repeats; cut short means nothing to replay", async () => {
  const dump = readFileSync("samples/h100_torch_train_nvtx.rawtrace");
  const c = channel();
  serveSlices(c.reader, codec);
  let closed = 0;
  const keeper = keepingReader(c.receiver, new Blob([dump]), "t.rawtrace", { slice: 65536, window: 2, close: () => closed++ });
  const given: Uint8Array[] = [];
  const parts = await drain(keeper.read());
  assert.equal(concat(parts), new Uint8Array(dump));
  assert.ok(keeper.complete);
  assert.ok(keeper.keptBytes > 0 && keeper.keptBytes < dump.length / 2, `${keeper.keptBytes} packed of ${dump.length}`);
  for (const p of parts) keeper.giveBack(p), given.push(p);
  assert.ok(given.every((p) => p.length === 0), "given back: detached here");
  for (const release of [false, false, true]) {
    const again = await drain(keeper.replay(release));
    assert.equal(concat(again), new Uint8Array(dump), `replay (release ${release})`);
    for (const p of again) keeper.giveBack(p);
  }
  assert.is(keeper.complete, false);
  assert.is(closed, 1, "the releasing replay ended the reader");
  const failure = async (s: ReadableStream<Uint8Array>) => {
    try {
      await drain(s);
    } catch (e) {
      return (e as Error).message;
    }
    return "";
  };
  assert.match(await failure(keeper.replay(false)), /^t\.rawtrace: the kept bytes were already released/);
  assert.match(await failure(keeper.read()), /^t\.rawtrace: the file's reader was closed/);
  c.close();

  // The reader's side on its own: nothing to replay before a keeping read reached the end; a read cut short keeps
  // nothing replayable; the next read starts over.
  const d = channel();
  serveSlices(d.reader, codec);
  const k2 = keepingReader(d.receiver, new Blob([dump]), "t.rawtrace", { slice: 65536, window: 2 });
  assert.match(await failure(k2.replay(false)), /^t\.rawtrace: reading the file failed: nothing kept to replay/);
  const r = k2.read().getReader();
  await r.read();
  await r.cancel();
  assert.is(k2.complete, false);
  assert.match(await failure(k2.replay(false)), /nothing kept to replay/);
  assert.equal(concat(await drain(k2.read())), new Uint8Array(dump));
  assert.ok(k2.complete);
  assert.equal(concat(await drain(k2.replay(false))), new Uint8Array(dump));
  d.close();
});

test.run();
