/**
 * The payload checksum a dump carries (docs/format.md, chunk flag bits 0–2: CRC-32, XXH32, XXH64's low 32 bits or
 * none) changes nothing in what the converter writes, and every kind is verified:
 * - the committed dumps verify as they are: the recorded ones (format 1.0 collectors: CRC-32), the samples and
 *   fixtures made by format 1.1 writers (XXH32) and any made since (format 1.2: XXH64);
 * - every sample and real fixture re-stamped with CRC-32, with XXH32, with XXH64, with no checksum, and with the
 *   three in turn chunk by chunk converts to byte-identical Chrome JSON and XSpace (and the same warnings);
 * - one flipped payload byte is caught under each kind, in every chunk of a sample;
 * - a header that sets two or three checksum bits is reported and its chunk skipped, the chunks after it kept;
 * - the TS writer's `checksum` option writes the flag and value it names, and refuses unknown names.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { crc32 } from "node:zlib";
import { Engine, memorySource, type ConvertResult } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { CHUNK_FLAG_CRC, CHUNK_FLAG_XXH32, CHUNK_FLAG_XXH64, CHUNK_HEADER_SIZE, PREAMBLE_SIZE } from "../../src/format/container.js";
import { CHUNK_FLAG_SUMS, payloadChecksum } from "../../src/format/checksum.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import { xxh32 } from "../../src/format/xxh32.js";
import { xxh64Low } from "../../src/format/xxh64.js";

const DUMPS = [
  ...readdirSync("samples").filter((f) => f.endsWith(".rawtrace")).map((f) => `samples/${f}`),
  ...readdirSync("test/fixtures/real/h100").filter((f) => f.endsWith(".rawtrace")).map((f) => `test/fixtures/real/h100/${f}`),
].sort();

let shared: Engine | null = null;
async function engine(): Promise<Engine> {
  shared ??= await createEngine();
  return shared;
}

/** SHA-256 of the output in `format`, and the result. */
async function convert(bytes: Uint8Array, format: "chrome" | "xspace"): Promise<{ sha: string; result: ConvertResult }> {
  const h = createHash("sha256");
  const result = await (await engine()).convert(memorySource(bytes, "x.rawtrace"), (b) => { h.update(b); }, { format });
  return { sha: h.digest("hex"), result };
}

/** File offsets of every chunk header. */
function chunkOffsets(b: Uint8Array): number[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: number[] = [];
  for (let p = PREAMBLE_SIZE; p + CHUNK_HEADER_SIZE <= b.length;) {
    out.push(p);
    p += CHUNK_HEADER_SIZE + ((dv.getUint32(p + 12, true) + 7) & ~7);
  }
  return out;
}

/** A copy of `b` whose chunks carry the checksum `pick(i)` names (flag bits and value), header CRCs recomputed. */
function restamp(b: Uint8Array, pick: (i: number) => number): Uint8Array {
  const out = b.slice();
  const dv = new DataView(out.buffer);
  chunkOffsets(out).forEach((off, i) => {
    const flag = pick(i);
    const len = dv.getUint32(off + 12, true);
    dv.setUint16(off + 6, (dv.getUint16(off + 6, true) & ~CHUNK_FLAG_SUMS) | flag, true);
    dv.setUint32(off + 16, payloadChecksum(flag, out.subarray(off + CHUNK_HEADER_SIZE, off + CHUNK_HEADER_SIZE + len)), true);
    dv.setUint32(off + 20, crc32(out.subarray(off, off + 20)) >>> 0, true);
  });
  return out;
}

const codes = (r: ConvertResult) => r.info.warnings.map((w) => `${w.code}@${w.offset}×${w.count}`).sort();

/** The checksum a writer of format 1.`minor` stores by default. */
const BY_MINOR = [CHUNK_FLAG_CRC, CHUNK_FLAG_XXH32, CHUNK_FLAG_XXH64];

test("the committed dumps verify: format 1.0 ones carry CRC-32, format 1.1 ones XXH32, format 1.2 ones XXH64", async () => {
  assert.ok(DUMPS.length >= 7, DUMPS.join(" "));
  const kinds = new Set<number>();
  for (const f of DUMPS) {
    const b = new Uint8Array(readFileSync(f));
    const dv = new DataView(b.buffer);
    const want = BY_MINOR[dv.getUint16(10, true)];
    assert.ok(want !== undefined, `${f}: format minor ${dv.getUint16(10, true)}`);
    kinds.add(want);
    for (const off of chunkOffsets(b)) assert.is(dv.getUint16(off + 6, true) & CHUNK_FLAG_SUMS, want, `${f} chunk at ${off}`);
    const { result } = await convert(b, "chrome");
    assert.not.ok(result.info.warnings.some((w) => w.code === "BAD_PAYLOAD_CRC" || w.code === "BAD_CHUNK_HEADER"), f);
  }
  assert.ok(kinds.size >= 2, "two kinds at least among the committed dumps");
});

test("Chrome JSON and XSpace are byte-identical whichever payload checksum the dump carries", async () => {
  for (const f of DUMPS) {
    const orig = new Uint8Array(readFileSync(f));
    const variants: Array<[string, Uint8Array]> = [
      ["crc32", restamp(orig, () => CHUNK_FLAG_CRC)],
      ["xxh32", restamp(orig, () => CHUNK_FLAG_XXH32)],
      ["xxh64", restamp(orig, () => CHUNK_FLAG_XXH64)],
      ["none", restamp(orig, () => 0)],
      ["mixed", restamp(orig, (i) => BY_MINOR[i % 3])],
    ];
    for (const format of ["chrome", "xspace"] as const) {
      const want = await convert(orig, format);
      for (const [name, bytes] of variants) {
        const got = await convert(bytes, format);
        assert.is(got.sha, want.sha, `${f} ${format} ${name}`);
        assert.equal(codes(got.result), codes(want.result), `${f} ${format} ${name}: warnings`);
      }
    }
  }
});

test("one flipped payload byte is caught under CRC-32, XXH32 and XXH64, in every chunk of a sample", async () => {
  const orig = new Uint8Array(readFileSync("samples/mi250_minitoy_rocprof.rawtrace"));
  const dv = new DataView(orig.buffer);
  for (const [name, b] of [
    ["crc32", restamp(orig, () => CHUNK_FLAG_CRC)],
    ["xxh32", restamp(orig, () => CHUNK_FLAG_XXH32)],
    ["xxh64", restamp(orig, () => CHUNK_FLAG_XXH64)],
  ] as const) {
    for (const off of chunkOffsets(b)) {
      const len = dv.getUint32(off + 12, true);
      if (len === 0) continue;
      const bad = b.slice();
      bad[off + CHUNK_HEADER_SIZE + ((off * 7) % len)] ^= 0x04;
      const w = (await convert(bad, "chrome")).result.info.warnings.find((x) => x.code === "BAD_PAYLOAD_CRC");
      assert.ok(w, `${name}: chunk at ${off}`);
      assert.is(w!.offset, off, `${name}: chunk at ${off}`);
    }
  }
});

test("a header with two or three checksum bits: BAD_CHUNK_HEADER at its offset, the chunk skipped, the others kept", async () => {
  const orig = new Uint8Array(readFileSync("samples/mi250_minitoy_rocprof.rawtrace"));
  const offs = chunkOffsets(orig);
  const want = await convert(orig, "chrome");
  // The last chunk (END) carries nothing the outputs depend on: every other event must still be there.
  const last = offs.length - 1;
  for (const bits of [3, 5, 6, 7]) {
    const b = restamp(orig, (i) => (i === last ? 0 : BY_MINOR[i % 3]));
    const dv = new DataView(b.buffer);
    const off = offs[last];
    dv.setUint16(off + 6, dv.getUint16(off + 6, true) | bits, true);
    dv.setUint32(off + 20, crc32(b.subarray(off, off + 20)) >>> 0, true);
    const got = await convert(b, "chrome");
    const w = got.result.info.warnings.find((x) => x.code === "BAD_CHUNK_HEADER");
    assert.ok(w, `bits ${bits}`);
    assert.is(w!.offset, off, `bits ${bits}: offset`);
    assert.is(got.result.events, want.result.events, `bits ${bits}: events`);
  }
});

test("RawtraceWriter checksum option: XXH64 by default, XXH32 and CRC-32 on request, unknown names refused", () => {
  const payload = Uint8Array.from({ length: 45 }, (_, i) => i * 11);
  for (const [opt, flag, sum] of [
    [undefined, CHUNK_FLAG_XXH64, xxh64Low(payload)],
    ["xxh64", CHUNK_FLAG_XXH64, xxh64Low(payload)],
    ["xxh32", CHUNK_FLAG_XXH32, xxh32(payload)],
    ["crc32", CHUNK_FLAG_CRC, crc32(payload) >>> 0],
  ] as const) {
    const w = RawtraceWriter.inMemory(opt ? { checksum: opt } : {});
    w.chunk(5, payload);
    w.chunk(5, payload, false);
    const b = w.bytes();
    const dv = new DataView(b.buffer);
    assert.is(dv.getUint16(10, true), 2, "format minor 2");
    assert.is(dv.getUint16(PREAMBLE_SIZE + 6, true), flag, `${opt} flag`);
    assert.is(dv.getUint32(PREAMBLE_SIZE + 16, true), sum, `${opt} value`);
    const second = PREAMBLE_SIZE + CHUNK_HEADER_SIZE + 48;
    assert.is(dv.getUint16(second + 6, true), 0, "without checksum: no flag");
    assert.is(dv.getUint32(second + 16, true), 0, "without checksum: 0");
  }
  assert.throws(() => RawtraceWriter.inMemory({ checksum: "md5" as never }), /unknown payload checksum "md5"/);
  for (const bits of [3, 5, 6, 7]) assert.throws(() => payloadChecksum(bits, payload), /more than one checksum bit/);
});

test.run();
