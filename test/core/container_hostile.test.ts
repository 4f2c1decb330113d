/**
 * Hostile chunk lengths (assembly/format/container.ts): a file of valid chunk headers a few bytes apart, each
 * declaring a payload of megabytes that fails its checksum, is read in time linear in its size, with each header
 * reported where it is: the window keeps room after a large chunk, so the next header, 24 bytes on, does not cost a
 * move of the whole window and a read of 24 bytes; a chunk found inside a damaged one's span whose own span holds a
 * chunk header is damaged without its payload hashed (each one's megabytes were); and whether a damaged buffer chunk
 * ends in never-written zeros is asked after whether a header starts inside it (each one scanned the zeros).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { crc32 } from "node:zlib";
import { xxh64Low } from "../../src/format/xxh64.js";
import { memorySource, type ByteSource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";

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

test("a chunk inside a damaged chunk's span whose own span holds a valid chunk header is damaged too, unhashed; the header inside is read", async () => {
  // A (seq 0) declares 64 bytes more than it has, so B (seq 1) starts inside its span; B's payload, its checksum
  // right, holds C (seq 2, an unknown type, empty) at an 8-byte offset. Before, B was hashed, found intact and C
  // read as B's bytes; B is now taken as damaged up to C (an intact chunk holds no chunk header), and C is read.
  const header = (type: number, seq: number, len: number, sum: number, flags = 4) => {
    const h = Buffer.alloc(24);
    h.writeUInt32LE(0x4b435452, 0);
    h.writeUInt16LE(type, 4);
    h.writeUInt16LE(flags, 6);
    h.writeUInt32LE(seq, 8);
    h.writeUInt32LE(len, 12);
    h.writeUInt32LE(sum, 16);
    h.writeUInt32LE(crc32(h.subarray(0, 20)) >>> 0, 20);
    return h;
  };
  const cPart = header(99, 2, 0, 0, 0);
  const bPayload = Buffer.concat([Buffer.alloc(16, 7), cPart]);
  const b = Buffer.concat([header(98, 1, bPayload.length, xxh64Low(bPayload)), bPayload]);
  const a = Buffer.concat([header(97, 0, 64 + 64, 0xdead), Buffer.alloc(64, 3)]);
  const pre = Buffer.alloc(16);
  MAGIC.copy(pre);
  pre.writeUInt16LE(1, 8);
  pre.writeUInt16LE(2, 10);
  const info = await (await createEngine()).info(memorySource(Buffer.concat([pre, a, b])));
  const bOff = 16 + a.length;
  assert.equal(info.loss.ranges, [
    { from: 16, to: bOff, code: "BAD_PAYLOAD_CRC", seq: 0 },
    { from: bOff, to: bOff + 24 + 16, code: "BAD_PAYLOAD_CRC", seq: 1 },
  ]);
  assert.is(info.warnings.find((w) => w.code === "UNKNOWN_CHUNK")?.offset, bOff + 24 + 16, "C read");
});

test.run();
