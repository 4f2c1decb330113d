/**
 * The timeline stream's fix-up (assembly/emit/timeline_order.ts, src/core/timeline.ts): the records leave the
 * core in arrival order and the host moves them into timeline order with the order (a permutation), lanes and
 * partners the core sends at the end. Every event's 16 words, the rows, lanes, names and summary must be exactly what the core gave when it
 * kept every record and wrote them in order itself (test/core/timeline_digests.json: digests recorded with that
 * core, commit 364d4be, on the samples, the fixtures and a generated dump of several chunks); a fix-up that does
 * not add up is an error, never a silently different timeline.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "../../bench/generate.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";
import { TL_CHUNK, TimelineEvents, TimelineParser } from "../../src/core/timeline.js";
import { timelineDigest, timelineOf } from "../helpers/timeline_digest.js";

const DIGESTS: Record<string, string> = JSON.parse(readFileSync("test/core/timeline_digests.json", "utf8"));
const SMALL = "test/fixtures/real/h100/cuda_sample.rawtrace";

for (const [file, want] of Object.entries(DIGESTS)) {
  if (file.startsWith("generate(")) continue;
  test(`${file}: every event's fields as the records-in-core path gave them`, async () => {
    const t = await timelineOf(new Uint8Array(readFileSync(file)));
    assert.is(`${t.events.length} ${timelineDigest(t.meta, t.events)}`, want);
  });
}

const dir = mkdtempSync(join(tmpdir(), "rawtrace-fixup-"));
const big = join(dir, "g.rawtrace");
generate(300000, big);
const bigBytes = new Uint8Array(readFileSync(big));
rmSync(dir, { recursive: true, force: true });

test("a generated dump of two chunks: the same words, lanes and partners (extension entries across chunks)", async () => {
  const t = await timelineOf(bigBytes);
  assert.ok(t.events.length > TL_CHUNK, "more than one chunk");
  assert.ok(t.meta.header.extEntries > 0);
  assert.is(`${t.events.length} ${timelineDigest(t.meta, t.events)}`, DIGESTS["generate(300000)"]);
});

/** The whole stream of a conversion, in one buffer. */
async function stream(bytes: Uint8Array): Promise<Uint8Array> {
  const engine = await createEngine();
  const parts: Uint8Array[] = [];
  await engine.convert(memorySource(bytes, "t.rawtrace"), (b) => parts.push(b.slice()), { format: "timeline" });
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Byte offset of the payload of the first block with `tag` (walking the blocks before it). */
function blockAt(s: Uint8Array, tag: number): { at: number; n: number } {
  const dv = new DataView(s.buffer, s.byteOffset, s.byteLength);
  const words = (k: number) => (k + (k & 1)) * 4;
  let o = 0;
  for (;;) {
    const t = dv.getUint32(o, true);
    const n = dv.getUint32(o + 4, true);
    const m = dv.getUint32(o + 8, true);
    if (t === tag) return { at: o + 16, n };
    o += 16;
    if (t === 1) o += n * 48 + m * 16;
    else if (t === 2 || t === 4) o += words(n);
    else if (t === 3) {
      const u = (k: number) => dv.getUint32(o + k, true);
      const [rows, lanes, names, nameBytes] = [u(12), u(16), u(20), u(24)];
      o += 64 + rows * 32 + words(rows) + lanes * 24 + names * 8 + nameBytes;
    } else throw new Error(`block ${t} at ${o - 16}`);
  }
}

function parse(s: Uint8Array): TimelineEvents {
  const events = new TimelineEvents();
  const parser = new TimelineParser((chunk) => events.add(chunk));
  parser.push(s);
  parser.finish();
  return events;
}


test("the stream parses whole and in one piece (the digest path) — baseline for the corruptions below", async () => {
  const s = await stream(new Uint8Array(readFileSync(SMALL)));
  assert.is(parse(s).length, 579);
});

test("an order that puts two records in one place, or one past the events, is an error naming the record", async () => {
  const base = await stream(new Uint8Array(readFileSync(SMALL)));
  let s = base.slice();
  const { at, n } = blockAt(s, 2);
  assert.is(n, 579);
  const dv = new DataView(s.buffer);
  dv.setUint32(at + 4, dv.getUint32(at, true), true);
  assert.throws(() => parse(s), /timeline stream: record 1: timeline index \d+ given twice/);
  s = base.slice();
  new DataView(s.buffer).setUint32(at, 1e6, true);
  assert.throws(() => parse(s), /timeline stream: record 0: timeline index 1000000 of 579/);
});

test("a partner past the events, a partner count off by one, a cut stream: errors", async () => {
  const base = await stream(new Uint8Array(readFileSync(SMALL)));
  let s = base.slice();
  const p = blockAt(s, 4);
  assert.is(p.n, 579);
  new DataView(s.buffer).setUint32(p.at + 8, 579, true);
  assert.throws(() => parse(s), /timeline stream: event 2: partner 579 of 579 events/);
  s = base.slice();
  new DataView(s.buffer).setUint32(p.at - 12, 578, true);
  assert.throws(() => parse(s), /timeline stream: block 4 of 578 events/);
  assert.throws(() => parse(base.subarray(0, base.length >> 1)), /timeline stream: incomplete/);
});

test("records split anywhere between pushes: the same parts", async () => {
  const s = await stream(new Uint8Array(readFileSync(SMALL)));
  const whole = parse(s);
  for (const piece of [1, 7, 48, 1000]) {
    const events = new TimelineEvents();
    const parser = new TimelineParser((chunk) => events.add(chunk));
    for (let o = 0; o < s.length; o += piece) parser.push(s.subarray(o, o + piece));
    const meta = parser.finish();
    assert.is(events.length, whole.length);
    for (let i = 0; i < events.length; i++) {
      for (let w = 0; w < 16; w++) if (events.word(i, w) !== whole.word(i, w)) assert.unreachable(`piece ${piece}: event ${i} word ${w}`);
    }
    assert.is(meta.header.events, 579);
  }
});

test.run();
