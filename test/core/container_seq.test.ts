/**
 * Repeated chunk sequence numbers (assembly/format/container.ts): a chunk is dropped as a duplicate only when its
 * content (payload checksum, length, type) equals the first chunk of that number, whichever payload checksum each
 * copy carries (or none); different content under a reused number is kept and reported as SEQ_REUSED.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { toChrome, info } from "../helpers/convert.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { crc32 } from "node:zlib";
import { CHUNK_FLAG_CRC, CHUNK_FLAG_XXH32, CHUNK_FLAG_XXH64, CHUNK_HEADER_SIZE, PREAMBLE_SIZE } from "../../src/format/container.js";
import { CHUNK_FLAG_SUMS, payloadChecksum } from "../../src/format/checksum.js";
import { chunkSpans } from "../helpers/dump_chunks.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isLossWarning } from "../../src/core/codes.js";

function chunkCount(b: Uint8Array): number {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let n = 0;
  for (let p = PREAMBLE_SIZE; p + CHUNK_HEADER_SIZE <= b.length; n++) p += CHUNK_HEADER_SIZE + ((dv.getUint32(p + 12, true) + 7) & ~7);
  return n;
}

const events = (t: any) => t.traceEvents.filter((e: any) => e.ph !== "M").length;

test("a file whose chunks all carry seq 5 keeps every chunk and reports SEQ_REUSED", async () => {
  const normal = sampleDump();
  const same = sampleDump({ seq: 5 });
  const n = chunkCount(same);
  assert.ok(n >= 8, `${n} chunks`);
  const a = JSON.parse((await toChrome(normal)).text);
  const b = JSON.parse((await toChrome(same)).text);
  assert.is(events(b), events(a), "no chunk lost");
  const w = b.rawtrace.warnings;
  const reused = w.find((x: any) => x.code === "SEQ_REUSED");
  assert.ok(reused, JSON.stringify(w));
  assert.is(reused.count, n - 1);
  assert.is(reused.detail, 5);
  assert.not.ok(w.some((x: any) => x.code === "DUPLICATE_CHUNK"));
  const i = await info(same);
  assert.ok(i.warnings.some((x) => x.code === "SEQ_REUSED" && x.count === n - 1 && /different content/.test(x.message)));
  assert.ok(i.complete);
});

/** `base` with a copy of its last ACTIVITY chunk inserted after it, the copy re-stamped with checksum `flag` (0: none). */
function withCopyOfLastActivity(base: Uint8Array, flag: number): Uint8Array {
  const dv = new DataView(base.buffer, base.byteOffset, base.byteLength);
  const offs: number[] = [];
  for (let p = PREAMBLE_SIZE; p + CHUNK_HEADER_SIZE <= base.length; p += CHUNK_HEADER_SIZE + ((dv.getUint32(p + 12, true) + 7) & ~7)) offs.push(p);
  const act = offs.filter((p) => dv.getUint16(p + 4, true) === 5);
  const p = act[act.length - 1];
  const len = dv.getUint32(p + 12, true);
  const end = p + CHUNK_HEADER_SIZE + ((len + 7) & ~7);
  const copy = base.slice(p, end);
  const cv = new DataView(copy.buffer);
  cv.setUint16(6, (cv.getUint16(6, true) & ~CHUNK_FLAG_SUMS) | flag, true);
  cv.setUint32(16, payloadChecksum(flag, copy.subarray(CHUNK_HEADER_SIZE, CHUNK_HEADER_SIZE + len)), true);
  cv.setUint32(20, crc32(copy.subarray(0, 20)) >>> 0, true);
  const dup = new Uint8Array(base.length + copy.length);
  dup.set(base.subarray(0, end));
  dup.set(copy, end);
  dup.set(base.subarray(end), end + copy.length);
  return dup;
}

test("the same chunk twice (same seq, same bytes) is still dropped as a duplicate", async () => {
  const base = sampleDump();
  const dup = withCopyOfLastActivity(base, CHUNK_FLAG_XXH64);
  const ref = JSON.parse((await toChrome(base)).text);
  const d = JSON.parse((await toChrome(dup)).text);
  assert.is(events(d), events(ref));
  assert.ok(d.rawtrace.warnings.some((x: any) => x.code === "DUPLICATE_CHUNK"));
  assert.not.ok(d.rawtrace.warnings.some((x: any) => x.code === "SEQ_REUSED"));
});

test("the same chunk again with another payload checksum, or none, is a duplicate too (every pair of kinds)", async () => {
  const kinds = [["xxh64", CHUNK_FLAG_XXH64], ["xxh32", CHUNK_FLAG_XXH32], ["crc32", CHUNK_FLAG_CRC]] as const;
  for (const [name, first] of kinds) {
    const base = sampleDump({ checksum: name });
    const ref = events(JSON.parse((await toChrome(base)).text));
    for (const again of [0, CHUNK_FLAG_XXH64, CHUNK_FLAG_XXH32, CHUNK_FLAG_CRC]) {
      const d = JSON.parse((await toChrome(withCopyOfLastActivity(base, again))).text);
      const what = `first ${first}, again ${again}`;
      assert.is(events(d), ref, what);
      assert.ok(d.rawtrace.warnings.some((x: any) => x.code === "DUPLICATE_CHUNK"), what);
      assert.not.ok(d.rawtrace.warnings.some((x: any) => x.code === "SEQ_REUSED"), what);
    }
  }
  // And an unflagged first copy followed by a flagged one: the first is fingerprinted by XXH64, the second by its own
  // checksum, whichever it is.
  for (const [name, flag] of kinds) {
    const base = sampleDump({ checksum: name });
    const b = withCopyOfLastActivity(base, 0);
    // Swap the two copies: the unflagged one first.
    const dv = new DataView(b.buffer);
    const offs: number[] = [];
    for (let p = PREAMBLE_SIZE; p + CHUNK_HEADER_SIZE <= b.length; p += CHUNK_HEADER_SIZE + ((dv.getUint32(p + 12, true) + 7) & ~7)) offs.push(p);
    const two = offs.filter((p) => dv.getUint16(p + 4, true) === 5).slice(-2);
    const size = two[1] - two[0];
    const flagged = b.slice(two[0], two[1]);
    b.copyWithin(two[0], two[1], two[1] + size);
    b.set(flagged, two[1]);
    assert.is(dv.getUint16(two[0] + 6, true) & CHUNK_FLAG_SUMS, 0, "unflagged first");
    assert.is(dv.getUint16(two[1] + 6, true) & CHUNK_FLAG_SUMS, flag, "flagged second");
    const d = JSON.parse((await toChrome(b)).text);
    assert.is(events(d), events(JSON.parse((await toChrome(base)).text)), name);
    assert.ok(d.rawtrace.warnings.some((x: any) => x.code === "DUPLICATE_CHUNK"), `unflagged first, then ${name}`);
    assert.not.ok(d.rawtrace.warnings.some((x: any) => x.code === "SEQ_REUSED"), `unflagged first, then ${name}`);
  }
});

/** `b`'s chunks reordered: `order` lists chunk indexes (of {@link chunkSpans}) in their new file order. */
function reordered(b: Uint8Array, order: number[]): Uint8Array {
  const spans = chunkSpans(b);
  return new Uint8Array(Buffer.concat([Buffer.from(b.subarray(0, PREAMBLE_SIZE)), ...order.map((i) => Buffer.from(b.subarray(spans[i].off, spans[i].end)))]));
}

test("chunks out of order (two swapped, one moved to the end) are no gap; chunks that never come are, counted once (before: SEQ_GAP and a loss for a reordered file that lost nothing)", async () => {
  const base = new Uint8Array(readFileSync(fileURLToPath(new URL("../../samples/h100_torch_train_nvtx.rawtrace", import.meta.url))));
  const spans = chunkSpans(base);
  const acts = spans.map((c, i) => [c, i] as const).filter(([c]) => c.type === 5).map(([, i]) => i);
  assert.ok(acts.length >= 3, `${acts.length} ACTIVITY chunks`);
  const all = spans.map((_, i) => i);
  const end = all.length - 1;
  assert.is(spans[end].type, 10, "END last");
  const [a, b2, c] = acts;
  const ref = events(JSON.parse((await toChrome(base)).text));
  const run = async (order: number[]) => {
    const t = JSON.parse((await toChrome(reordered(base, order))).text);
    return { n: events(t), gap: t.rawtrace.warnings.find((x: any) => x.code === "SEQ_GAP"), losses: t.rawtrace.warnings.filter((x: any) => isLossWarning(x.code)) };
  };
  const swapped = all.map((i) => (i === a ? b2 : i === b2 ? a : i));
  const moved = [...all.filter((i) => i !== a && i !== end), a, end];
  for (const [what, order] of [["two swapped", swapped], ["one moved to the end", moved]] as const) {
    const r = await run(order);
    assert.is(r.n, ref, `${what}: every event`);
    assert.is(r.gap, undefined, `${what}: no gap`);
    assert.equal(r.losses, [], `${what}: no loss`);
  }
  // Two chunks missing, one of them found later: one missing. Two never come: two, said where the gap was met.
  const oneLate = [...all.filter((i) => i !== a && i !== b2 && i !== end), a, end];
  const late = await run(oneLate);
  // Said at the chunk after the one that never comes (`c`, where its number was found missing).
  const at = PREAMBLE_SIZE + oneLate.slice(0, oneLate.indexOf(c)).reduce((n, i) => n + (spans[i].end - spans[i].off), 0);
  assert.equal(late.gap && [late.gap.count, late.gap.detail, late.gap.offset], [1, 1, at]);
  const gone = await run(all.filter((i) => i !== a && i !== c));
  assert.is(gone.gap?.count, 2);
  const twoInARow = await run(all.filter((i) => i !== b2 && i !== c)); // neighbours: one gap of two
  assert.equal(twoInARow.gap && [twoInARow.gap.count, twoInARow.gap.detail], [2, 2]);
});

test("SEQ_GAP keeps the first gap's offset and count when a later gap is said whole (a damaged counter's jump of 2^21), and many gaps cost little at the end", async () => {
  const base = sampleDump({ end: false });
  const w = RawtraceWriter.inMemory({});
  for (const q of [20, 20 + 2 ** 21, 21 + 2 ** 21]) {
    w.seqOverride = q;
    w.log(1, "x");
  }
  const file = new Uint8Array(Buffer.concat([base, w.bytes().subarray(PREAMBLE_SIZE)]));
  const first = chunkSpans(file).find((c) => c.seq === 20)!;
  const gap = (await info(file)).warnings.find((x) => x.code === "SEQ_GAP");
  // Before the end-of-pass accounting, the large gap was said at once and its offset and count were taken as the first.
  assert.equal(gap && [gap.offset, gap.detail, gap.count], [first.off, 20 - (chunkSpans(base).at(-1)!.seq + 1), 20 - (chunkSpans(base).at(-1)!.seq + 1) + 2 ** 21 - 1]);
  // 4,000 gaps of 2^16 − 1 numbers each: every one recounted at the end, 64 bits of the bitset at a time.
  const many = RawtraceWriter.inMemory({});
  for (let k = 1; k <= 4000; k++) {
    many.seqOverride = 1000 + k * 65535;
    many.log(1, "x");
  }
  const big = new Uint8Array(Buffer.concat([base, many.bytes().subarray(PREAMBLE_SIZE)]));
  const g = (await info(big)).warnings.find((x) => x.code === "SEQ_GAP");
  const next = chunkSpans(base).at(-1)!.seq + 1;
  assert.is(g?.count, 1000 + 65535 - next + 3999 * 65534, "the first gap, then 3,999 of 65,534 numbers");
});

test("a gap of up to 2^20 numbers whose chunks all come later in the file is no gap (before: over 2^16 it was said whole, a loss); 4,000 gaps of 2^20 − 1 are counted", async () => {
  const base = sampleDump({ end: false });
  const next = chunkSpans(base).at(-1)!.seq + 1;
  for (const G of [65537, 2 ** 20]) {
    const w = RawtraceWriter.inMemory({});
    w.seqOverride = next + G; // the gap [next, next + G), every number of it written after
    w.log(1, "x");
    for (let q = next; q < next + G; q++) {
      w.seqOverride = q;
      w.log(1, "x");
    }
    const i = await info(new Uint8Array(Buffer.concat([base, w.bytes().subarray(PREAMBLE_SIZE)])));
    assert.not.ok(i.warnings.some((x) => x.code === "SEQ_GAP"), `gap of ${G}`);
  }
  // A counter jumping by 2^20 4,000 times: each jump a gap of 2^20 − 1 numbers, none of which ever comes (those in
  // the bitset, up to 2^27, recounted; the rest never tracked).
  const w = RawtraceWriter.inMemory({});
  for (let k = 0; k <= 4000; k++) {
    w.seqOverride = next + k * 2 ** 20;
    w.log(1, "x");
  }
  const g = (await info(new Uint8Array(Buffer.concat([base, w.bytes().subarray(PREAMBLE_SIZE)])))).warnings.find((x) => x.code === "SEQ_GAP");
  assert.is(g?.count, 4000 * (2 ** 20 - 1));
});

test.run();
