/**
 * Hostile chunk lengths (assembly/format/container.ts): a file of valid chunk headers a few bytes apart, each
 * declaring a payload of megabytes that fails its checksum, is read in time linear in its size, with each header
 * reported where it is: the window keeps room after a large chunk, so the next header, 24 bytes on, does not cost a
 * move of the whole window and a read of 24 bytes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { crc32 } from "node:zlib";
import { memorySource, type ByteSource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";

const MAGIC = Buffer.from("RAWTRACE");

/** A dump of `n` ACTIVITY chunk headers 24 bytes apart, each declaring `len` payload bytes (wrong XXH64), then filler. */
function nested(n: number, len: number): Buffer {
  const b = Buffer.alloc(16 + n * 24 + len + 64, 0x55);
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

test.run();
