/**
 * Repeated chunk sequence numbers (assembly/format/container.ts): a chunk is dropped as a duplicate only when its
 * content (payload CRC, length, type) equals the first chunk of that number; different content under a reused
 * number is kept and reported as SEQ_REUSED.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { toChrome, info } from "../helpers/convert.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { CHUNK_HEADER_SIZE, PREAMBLE_SIZE } from "../../src/format/container.js";

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

test("the same chunk twice (same seq, same bytes) is still dropped as a duplicate", async () => {
  const base = sampleDump();
  const dv = new DataView(base.buffer, base.byteOffset, base.byteLength);
  // The last ACTIVITY chunk before END: find chunk offsets and types.
  const offs: number[] = [];
  for (let p = PREAMBLE_SIZE; p + CHUNK_HEADER_SIZE <= base.length; p += CHUNK_HEADER_SIZE + ((dv.getUint32(p + 12, true) + 7) & ~7)) offs.push(p);
  const act = offs.filter((p) => dv.getUint16(p + 4, true) === 5);
  const p = act[act.length - 1];
  const end = p + CHUNK_HEADER_SIZE + ((dv.getUint32(p + 12, true) + 7) & ~7);
  const copy = base.slice(p, end);
  const dup = new Uint8Array(base.length + copy.length);
  dup.set(base.subarray(0, end));
  dup.set(copy, end);
  dup.set(base.subarray(end), end + copy.length);
  const ref = JSON.parse((await toChrome(base)).text);
  const d = JSON.parse((await toChrome(dup)).text);
  assert.is(events(d), events(ref));
  assert.ok(d.rawtrace.warnings.some((x: any) => x.code === "DUPLICATE_CHUNK"));
  assert.not.ok(d.rawtrace.warnings.some((x: any) => x.code === "SEQ_REUSED"));
});

test.run();
