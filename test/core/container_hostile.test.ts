/**
 * Hostile chunk lengths (assembly/format/container.ts): a file of valid chunk headers a few bytes apart, each
 * declaring a payload of megabytes that fails its checksum, is read in time linear in its size, with each header
 * reported where it is: the window keeps room after a large chunk, so the next header, 24 bytes on, does not cost a
 * move of the whole window and a read of 24 bytes; chunks found inside a damaged one's span are hashed within a
 * budget linear in the file's size, past which one whose own span holds a chunk header is damaged without its payload
 * hashed (each one's megabytes were), while an intact chunk of an honest file is read whatever its payload holds; and
 * whether a damaged buffer chunk ends in never-written zeros is asked after whether a header starts inside it (each
 * one scanned the zeros). The window grows in few steps, so the memory it leaves behind stays bounded.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { crc32 } from "node:zlib";
import { xxh64Low } from "../../src/format/xxh64.js";
import { memorySource, type ByteSource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { toChrome, trickle } from "../helpers/convert.js";
import { chunkSpans } from "../helpers/dump_chunks.js";

const MAGIC = Buffer.from("RAWTRACE");

/**
 * A dump of `n` ACTIVITY chunk headers 24 bytes apart, each declaring `len` payload bytes (wrong XXH64), then `fill`
 * bytes, the last one 1.
 */
function nested(n: number, len: number, fill = 0x55): Buffer {
  const b = Buffer.alloc(16 + n * 24 + len + 64, fill);
  b[b.length - 1] = 1;
  MAGIC.copy(b, 0);
  b.writeUInt16LE(1, 8);
  b.writeUInt16LE(2, 10);
  b.writeUInt32LE(0, 12);
  for (let i = 0; i < n; i++) {
    const o = 16 + i * 24;
    b.writeUInt32LE(0x4b435452, o);
    b.writeUInt16LE(5, o + 4);
    b.writeUInt16LE(4, o + 6); // XXH64
    b.writeUInt32LE(i, o + 8);
    b.writeUInt32LE(len, o + 12);
    b.writeUInt32LE(12345, o + 16);
    b.writeUInt32LE(crc32(b.subarray(o, o + 20)) >>> 0, o + 20);
  }
  return b;
}

/** A source over `bytes` that counts the reads made of it. */
function counted(bytes: Uint8Array): { src: ByteSource; reads: () => number } {
  let reads = 0;
  const inner = memorySource(bytes, "nested.rawtrace");
  const open = async () => {
    const r = await inner.open();
    return { read: (dst: Uint8Array) => (reads++, r.read(dst)) };
  };
  return { reads: () => reads, src: { ...inner, open } };
}

test("2,000 headers 24 bytes apart, each declaring 6 MiB: each reported at its offset, in a few reads per pass", async () => {
  const n = 2000;
  const bytes = nested(n, 6 << 20);
  const e = await createEngine();
  const { src, reads } = counted(bytes);
  const info = await e.info(src);
  const bad = info.warnings.find((w) => w.code === "BAD_PAYLOAD_CRC")!;
  assert.equal([bad.count, bad.offset], [n, 16]);
  assert.is(info.loss.rangesTotal, n + 1, "each header, then the filler after the last one's span");
  assert.ok(reads() < 50, `${reads()} reads of a ${bytes.length}-byte file (one per header before)`);
  const c = counted(bytes);
  const r = await e.convert(c.src, () => {});
  assert.equal(r.info.warnings.find((w) => w.code === "BAD_PAYLOAD_CRC")!.count, n);
  assert.ok(c.reads() < 100, `convert: ${c.reads()} reads`);
});

test("10,000 headers declaring 4 MiB - 48, just under the window: a few reads, as when they declare more", async () => {
  // The window grew only for a chunk larger than itself: each of these fit it with 24 bytes to spare, so each
  // header cost a move of the whole window and a read of 24 bytes (10,003 reads).
  const n = 10000;
  const e = await createEngine();
  for (const len of [(4 << 20) - 48, (4 << 20) - 1024, (3 << 20) + 8]) {
    const { src, reads } = counted(nested(n, len));
    const info = await e.info(src);
    assert.is(info.warnings.find((w) => w.code === "BAD_PAYLOAD_CRC")!.count, n);
    assert.ok(reads() < 50, `declaring ${len}: ${reads()} reads`);
  }
});

test("20 headers each declaring 4 MiB more than the one before: the window grows a few times, not 20", async () => {
  // The window grew to each one's size plus 4 MiB, leaving the last window behind each time: 1 GiB of memory here,
  // 4 GiB and a host error ('Start offset -2058037512 is outside the bounds of the buffer') with 40.
  const n = 20;
  const lens = Array.from({ length: n }, (_, i) => (4 << 20) * (i + 1) - 32);
  const b = nested(n, lens[n - 1]);
  for (let i = 0; i < n; i++) {
    const o = 16 + i * 24;
    b.writeUInt32LE(lens[i], o + 12);
    b.writeUInt32LE(crc32(b.subarray(o, o + 20)) >>> 0, o + 20);
  }
  const e = await createEngine();
  const info = await e.info(memorySource(b));
  assert.is(info.warnings.find((w) => w.code === "BAD_PAYLOAD_CRC")!.count, n);
  assert.ok(e.memoryBytes <= 512 << 20, `${e.memoryBytes} bytes of memory for a ${b.length}-byte file`);
});

test("40,000 headers declaring 16 MiB, then 0x55 or zero bytes (a 17 MB file): each reported, as 2,000 were (minutes before)", async () => {
  const e = await createEngine();
  for (const fill of [0x55, 0]) {
    const n = 40000;
    const r = await e.convert(memorySource(nested(n, 16 << 20, fill)), () => {});
    const bad = r.info.warnings.find((w) => w.code === "BAD_PAYLOAD_CRC")!;
    assert.equal([bad.count, bad.offset], [n, 16], `fill ${fill}`);
    assert.equal(r.info.loss.ranges[1], { from: 40, to: 64, code: "BAD_PAYLOAD_CRC", seq: 1 });
  }
});

/** A chunk header: `type`, `seq`, `len` payload bytes, payload checksum `sum` of the kind `flags` names (XXH64). */
function header(type: number, seq: number, len: number, sum: number, flags = 4): Buffer {
  const h = Buffer.alloc(24);
  h.writeUInt32LE(0x4b435452, 0);
  h.writeUInt16LE(type, 4);
  h.writeUInt16LE(flags, 6);
  h.writeUInt32LE(seq, 8);
  h.writeUInt32LE(len, 12);
  h.writeUInt32LE(sum, 16);
  h.writeUInt32LE(crc32(h.subarray(0, 20)) >>> 0, 20);
  return h;
}

/** A format 1.2 preamble. */
function preamble(): Buffer {
  const pre = Buffer.alloc(16);
  MAGIC.copy(pre);
  pre.writeUInt16LE(1, 8);
  pre.writeUInt16LE(2, 10);
  return pre;
}

/**
 * B: an intact chunk (type 98, seq `seq`, its XXH64 right) whose 40-byte payload holds at offset 16 the header of C
 * (type 99, seq `seq` + 1, empty, no checksum).
 */
function chunkHoldingHeader(seq: number): Buffer {
  const payload = Buffer.concat([Buffer.alloc(16, 7), header(99, seq + 1, 0, 0, 0)]);
  return Buffer.concat([header(98, seq, payload.length, xxh64Low(payload)), payload]);
}

/** 24 bytes that are a valid chunk header and printable: "RTCK", 16 lowercase letters, then their CRC-32. */
function headerName(): string {
  let seed = 1;
  for (;;) {
    const b = Buffer.alloc(24);
    b.write("RTCK", 0, "latin1");
    for (let i = 4; i < 20; i++) b[i] = 0x61 + ((seed = (seed * 1103515245 + 12345) >>> 0) % 26);
    b.writeUInt32LE(crc32(b.subarray(0, 20)) >>> 0, 20);
    if (b.subarray(20).every((x) => x >= 0x20 && x < 0x7f)) return b.toString("latin1");
  }
}

test("an intact chunk whose payload holds a valid chunk header (an NVTX name), after one that lost bytes, is read", async () => {
  // STRINGS holds the range name "RTCKqckosecikigkygguT1lV", a valid chunk header at an 8-byte file offset; the
  // API_NAMES chunk before it lost 8 bytes, so STRINGS starts inside its span. STRINGS was taken as damaged unhashed
  // (an intact chunk was assumed to hold no chunk header): the kernel's and the range's names were lost, the name's
  // bytes read as chunk headers (CHUNK_TOO_LARGE, BAD_CHUNK_HEADER).
  const name = headerName();
  const L = "cuda13";
  const T = 1_780_000_000_123_456_789n;
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 12080, driverVersion: 12080, pid: 42, startNs: T, hostname: "h", commandLine: "x" });
  w.clock({ which: 0, vendorNs: T, realtimeNs: T, monotonicNs: 5n, monotonicRawNs: 5n, boottimeNs: 5n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [2, 41, "cudaMemcpyAsync_v3020"]]);
  w.strings([[0x3000n, name], [0x1000n, "my_kernel"]]);
  w.activity(C.concat([
    C.markerRecord(L, 2, T + 500n, 1, 42, 43, 0x3000n),
    C.apiRecord(L, { kind: 5, cbid: 211, start: T + 1000n, end: T + 5000n, processId: 42, threadId: 43, correlationId: 5 }),
    C.kernelRecord(L, { start: T + 7000n, end: T + 9501n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 5, namePtr: 0x1000n }),
    C.markerRecord(L, 4, T + 20000n, 1, 42, 43, 0n),
  ]));
  w.end();
  const intact = w.bytes();
  const spans = chunkSpans(intact);
  const api = spans.find((s) => s.type === 4)!;
  const str = spans.find((s) => s.type === 6)!;
  assert.ok(Buffer.from(intact).indexOf(name, str.off, "latin1") % 8 === 0, "the name at an 8-byte offset");
  const cut = api.off + 24 + 16;
  const bytes = Buffer.concat([intact.subarray(0, cut), intact.subarray(cut + 8)]);
  const { trace, result } = await toChrome(bytes);
  assert.equal(result.info.loss.ranges, [{ from: api.off, to: str.off - 8, code: "BAD_PAYLOAD_CRC", seq: api.seq }]);
  assert.equal(result.info.warnings.map((x) => x.code).sort(), ["BAD_PAYLOAD_CRC", "SEQ_GAP"]);
  const names = trace.traceEvents.filter((e: any) => e.ph === "X").map((e: any) => e.name);
  assert.ok(names.includes("my_kernel") && names.includes(name), names.join(", "));
  const e = await createEngine();
  const whole: Buffer[] = [];
  await e.convert(memorySource(bytes, "test.rawtrace"), (x) => whole.push(Buffer.from(x)));
  for (const piece of [1, 24, 4093]) {
    const parts: Buffer[] = [];
    await e.convert(trickle(bytes, piece), (x) => parts.push(Buffer.from(x)));
    assert.ok(Buffer.concat(parts).equals(Buffer.concat(whole)), `read in pieces of ${piece}`);
  }
});

test("a chunk inside a damaged chunk's span is hashed: intact, it is read whole, a chunk header in its payload its bytes", async () => {
  // A (seq 0) declares 64 bytes more than it has, so B (seq 1) starts inside its span; B's payload, its checksum
  // right, holds C (seq 2, an unknown type, empty) at an 8-byte offset: C is B's bytes, not a chunk.
  const a = Buffer.concat([header(97, 0, 64 + 64, 0xdead), Buffer.alloc(64, 3)]);
  const info = await (await createEngine()).info(memorySource(Buffer.concat([preamble(), a, chunkHoldingHeader(1)])));
  const bOff = 16 + a.length;
  assert.equal(info.loss.ranges, [{ from: 16, to: bOff, code: "BAD_PAYLOAD_CRC", seq: 0 }]);
  const unknown = info.warnings.find((w) => w.code === "UNKNOWN_CHUNK")!;
  assert.equal([unknown.offset, unknown.count], [bOff, 1], "B read, C not");
});

test("past the hashing budget (a hostile file), such a chunk is damaged unhashed, up to the chunk header it holds", async () => {
  // 10 headers 24 bytes apart, each declaring 1 MiB (wrong XXH64), each inside the span of the one before, then B
  // as above: the first ones' megabytes are hashed, past twice the file's bytes no more; B (its span holding C) is
  // then taken as damaged up to C without its payload hashed, and C is read. In both passes, in any pieces.
  const n = 10;
  const heads = Array.from({ length: n }, (_, i) => header(97, i, 1 << 20, 0xdead));
  const bOff = 16 + n * 24;
  const file = Buffer.concat([preamble(), ...heads, chunkHoldingHeader(n), Buffer.alloc(1 << 20, 0x55)]);
  const e = await createEngine();
  for (const src of [memorySource(file), trickle(file, 4093)]) {
    const r = await e.convert(src, () => {});
    assert.equal(r.info.loss.ranges.slice(n - 1), [
      { from: bOff - 24, to: bOff, code: "BAD_PAYLOAD_CRC", seq: n - 1 },
      { from: bOff, to: bOff + 40, code: "BAD_PAYLOAD_CRC", seq: n },
      { from: bOff + 64, to: file.length, code: "BAD_CHUNK_HEADER" },
    ]);
    assert.is(r.info.warnings.find((w) => w.code === "UNKNOWN_CHUNK")?.offset, bOff + 40, "C read");
  }
});

test.run();
