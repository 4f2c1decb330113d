/**
 * A dump whose tail was never written (assembly/format/container.ts `zeroTailed`, docs/format.md "Chunk header"): a crash
 * on ext4 or XFS can leave a file at its full size with its last blocks read as zeros. The last buffer chunk then
 * is complete by its length but fails its payload checksum; it was skipped whole (BAD_PAYLOAD_CRC: 0 of the torch
 * fixture's 3,624 events of a cut at 582,872 with zeros to the full size). A buffer chunk whose payload ends in more
 * than a record of zeros (512 bytes) with nothing but zeros after it to the end of the file is now read as a cut
 * buffer: every whole record before the zeros, the same events and warnings as the file cut where the zeros begin.
 * A chunk damaged otherwise (a shorter run of zeros, a valid chunk or other bytes after the zeros) is skipped as
 * before, in either pass and however the input is read.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { createEngine } from "../../src/node/wasm.js";
import { toChrome, trickle, warningOf } from "../helpers/convert.js";
import { chunkSpans, type ChunkSpan } from "../helpers/dump_chunks.js";
import { CHUNK_HEADER_SIZE } from "../../src/format/container.js";

/** `bytes[0, keep)` then zeros up to `size` bytes. */
function zeroedFrom(bytes: Uint8Array, keep: number, size: number): Uint8Array {
  const out = new Uint8Array(size);
  out.set(bytes.subarray(0, keep));
  return out;
}

/** Chrome JSON of `bytes` read `piece` bytes at a time. */
async function trickled(bytes: Uint8Array, piece: number): Promise<string> {
  const parts: Buffer[] = [];
  await (await createEngine()).convert(trickle(bytes, piece), (b) => parts.push(Buffer.from(b)));
  return Buffer.concat(parts).toString();
}

const read = (p: string) => new Uint8Array(readFileSync(new URL(`../../${p}`, import.meta.url)));
const DUMPS = [
  "samples/h100_torch_train_nvtx.rawtrace", "samples/mi250_minitoy_rocprof.rawtrace", "samples/xpu_train_pti.rawtrace",
  "samples/gaudi2_mlp_synapse.rawtrace", "test/fixtures/real/h100/torch.rawtrace",
];

/**
 * The last buffer chunk (ACTIVITY, or HPU_TRACE) of `bytes` of 2 KiB or more, and a cut halfway into it, after a byte
 * that is not zero, 8-aligned.
 */
function cutPoint(bytes: Uint8Array): { last: ChunkSpan; cut: number } {
  const last = chunkSpans(bytes).filter((c) => (c.type === 5 || c.type === 14) && c.len >= 2048).pop()!;
  let cut = (last.off + CHUNK_HEADER_SIZE + Math.floor(last.len / 2)) & ~7;
  while (bytes[cut - 1] === 0) cut -= 8;
  assert.ok(last.off + CHUNK_HEADER_SIZE + last.len - cut > 512, "more than a record of zeros in the payload");
  return { last, cut };
}

test("zeros from inside the last buffer to the file's full size (or its end, or 6 MiB past): the file cut where the zeros begin", async () => {
  for (const name of DUMPS) {
    const bytes = read(name);
    const { last, cut } = cutPoint(bytes);
    const plain = await toChrome(bytes.subarray(0, cut));
    assert.ok(plain.result.events > 0, name);
    for (const size of [bytes.length, last.end, last.end + (6 << 20)]) {
      const what = `${name}: zeros from ${cut} to ${size}`;
      const zeroed = zeroedFrom(bytes, cut, size);
      const got = await toChrome(zeroed);
      assert.equal(got.trace.traceEvents, plain.trace.traceEvents, `${what}: the cut file's events`);
      assert.is(warningOf(got.result, "BAD_PAYLOAD_CRC"), undefined, `${what}: not skipped as damaged`);
      const t = got.result.info.warnings.find((w) => w.code === "TRUNCATED")!;
      assert.equal([t.offset, t.detail], [last.off, size - last.off], `${what}: TRUNCATED from the chunk to the end`);
      // The same warnings as the cut file, but for TRUNCATED's count of bytes and NO_END's offset (the file's end).
      const codes = (r: typeof got) => r.result.info.warnings.map((w) =>
        `${w.code} ${w.code === "TRUNCATED" ? "" : w.detail} ${w.code === "NO_END" ? "" : w.offset}`);
      assert.equal(codes(got), codes(plain), what);
      // What is lost runs from the record the zeros start in to the end of the file.
      const ranges = got.result.info.loss.ranges;
      assert.is(ranges[ranges.length - 1].to, size, `${what}: ${JSON.stringify(ranges)}`);
      assert.ok(ranges[0].from <= cut, `${what}: ${JSON.stringify(ranges)}`);
    }
  }
});

test("read a few bytes at a time, the zeros after the chunk arriving in many reads: the same output", async () => {
  const bytes = read("samples/xpu_train_pti.rawtrace");
  const { cut } = cutPoint(bytes);
  const zeroed = zeroedFrom(bytes, cut, bytes.length + 5000);
  const want = (await toChrome(zeroed)).text;
  for (const piece of [8, 13, 600, 4096]) assert.is(await trickled(zeroed, piece), want, `reads of ${piece} bytes`);
});

test("a chunk damaged otherwise is skipped as before: short zeros, a valid chunk or other bytes after the zeros", async () => {
  const bytes = read("samples/h100_torch_train_nvtx.rawtrace");
  const cs = chunkSpans(bytes);
  const { last, cut } = cutPoint(bytes);
  const next = cs.find((c) => c.off === last.end)!;
  // The dump without that buffer, and the dump cut before it: the events these keep.
  const without = new Uint8Array(bytes.length - (last.end - last.off));
  without.set(bytes.subarray(0, last.off));
  without.set(bytes.subarray(last.end), last.off);
  const before = (await toChrome(bytes.subarray(0, last.off))).result.events;
  const after = (await toChrome(without)).result.events;
  const check = async (b: Uint8Array, what: string, want: number, scanned: { from: number; to: number }) => {
    const got = await toChrome(b);
    assert.is(got.result.events, want, `${what}: events`);
    const w = (code: string) => got.result.info.warnings.find((x) => x.code === code);
    assert.equal([w("BAD_PAYLOAD_CRC")?.offset, w("BAD_PAYLOAD_CRC")?.detail], [last.off, last.seq], `${what}: BAD_PAYLOAD_CRC`);
    assert.equal([w("BAD_CHUNK_HEADER")?.offset, w("BAD_CHUNK_HEADER")?.detail], [scanned.from, scanned.to - scanned.from], `${what}: the zeros scanned`);
    assert.is(w("TRUNCATED"), undefined, `${what}: not read as cut`);
    // The chunk and the zeros after it, one range (adjacent ranges join).
    assert.equal(got.result.info.loss.ranges[0], { from: last.off, to: scanned.to, code: "BAD_PAYLOAD_CRC", seq: last.seq }, what);
    for (const piece of [13, 4096]) assert.is(await trickled(b, piece), got.text, `${what}: reads of ${piece} bytes`);
  };
  // The payload ends in 256 zeros only (a record's own zero fields can be that long), zeros to the end.
  const short = zeroedFrom(bytes, last.end, bytes.length);
  short.fill(0x41, cut, last.off + CHUNK_HEADER_SIZE + last.len - 256);
  short.fill(0, last.off + CHUNK_HEADER_SIZE + last.len - 256);
  await check(short, "256 zeros", before, { from: last.end, to: bytes.length });
  // Zeros, then the chunks after it, intact: 8 bytes and 6 MiB of zeros after the chunk's end.
  for (const gap of [8, 6 << 20]) {
    const b = new Uint8Array(last.end + gap + (bytes.length - next.off));
    b.set(bytes.subarray(0, cut));
    b.set(bytes.subarray(next.off), last.end + gap);
    await check(b, `a valid chunk ${gap} bytes after`, after, { from: last.end, to: last.end + gap });
  }
  // Zeros, then bytes that are no chunk: damaged bytes to the end.
  const tail = zeroedFrom(bytes, cut, last.end + 100_003);
  tail.fill(0x5a, tail.length - 3);
  await check(tail, "zeros then other bytes", before, { from: last.end, to: tail.length });
});

test.run();
