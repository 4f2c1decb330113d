/**
 * The timeline stream's fix-up (assembly/emit/timeline_order.ts, src/core/timeline.ts): the records leave the
 * core in arrival order and the host moves them into timeline order with the order (a permutation), lanes and
 * partners the core sends at the end. Every event's 16 words, the rows, lanes, names and summary must be exactly what the core gave when it
 * kept every record and wrote them in order itself (test/core/timeline_digests.json: digests recorded with that
 * core, commit 364d4be, on the samples, the fixtures and a generated dump of several chunks; jax_step's and
 * torch_graph's again when CUDA event records were named `cudaEvent`, as in the Chrome JSON, instead of `Event Record`:
 * with that one name put back, the new tables give the old digests; the Gaudi2 sample's again when Synapse host calls
 * were numbered by name in the order the buffers were written (their API ids 4 and 25 became 3 and 4: every other
 * word the same); the two fuzz fixtures without HEADER and KIND_SIZES (stats-device-ffffffff-writes-address-0,
 * xspace-occupancy-warp-7fffffff) again when their strides came from the CUPTI layout their buffer walks exactly under
 * instead of 11.8's: 6 events instead of 1, the first one's words the same; and xspace-invalid-utf8-after-address-0-write
 * when a later buffer's kernels could still decide the layout: 12 events instead of 7, the NVTX range 1 ending at its
 * end record, 19.5 µs as the fixture's source wrote it, not closed early at 9.001); the MI250 sample's when the ROCm decoder
 * hid the calls Kineto's rocprofiler-sdk logger hides (its 4 hipGetDevicePropertiesR0600: 33 events, not 37) and the
 * sample's two Tensile GEMMs got their grid in work-groups (2, not 512: only those words differ), and again when its
 * kernels' theoretical occupancy became unknown (NVIDIA's rules only: the occupancy word); a fix-up that does
 * not add up is an error, never a silently different timeline.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "../../bench/generate.js";
import { tileDump } from "../../bench/tile_dump.js";
import * as C from "../../src/tools/cupti_records.js";
import { rng } from "../../src/tools/rng.js";
import { cudaWriter } from "../helpers/cuda_writer.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";
import { TL_CHUNK, TL_REC, TimelineEvents, TimelineParser } from "../../src/core/timeline.js";
import { timelineDigest, timelineOf } from "../helpers/timeline_digest.js";

const DIGESTS: Record<string, string> = JSON.parse(readFileSync("test/core/timeline_digests.json", "utf8"));
const SMALL = "test/fixtures/real/h100/cuda_sample.rawtrace";

for (const [file, want] of Object.entries(DIGESTS)) {
  if (file.startsWith("generate(")) continue;
  test(`${file}: every event's fields as the records-in-core path gave them`, async () => {
    const t = await timelineOf(new Uint8Array(readFileSync(file)));
    assert.is(`${t.events.length} ${timelineDigest(t.meta, t.events)}`, want);
    // The partners found by sorting the events by correlation id instead of through the table: the same.
    const s = await timelineOf(new Uint8Array(readFileSync(file)), "t.rawtrace", (e) => { e.partnerMode = "sorted"; });
    assert.is(`${s.events.length} ${timelineDigest(s.meta, s.events)}`, want, "partners sorted");
  });
}

test("sparse correlation ids (a real trace tiled): partners by sorting, no table spilled, the same timeline", async () => {
  // torch.rawtrace numbers its events' calls 11 … 44,199 for 7,900 events (CUPTI numbers every call, traced or not):
  // 20 copies span 884,000 ids. With a 64 KiB paged budget the table (8 B per id) would spill most of itself.
  const tdir = mkdtempSync(join(tmpdir(), "rawtrace-partners-"));
  try {
    const tiled = join(tdir, "torch_x20.rawtrace");
    tileDump("test/fixtures/real/h100/torch.rawtrace", 20, tiled);
    const bytes = new Uint8Array(readFileSync(tiled));
    const run = async (mode: "auto" | "table" | "sorted") => {
      let spilled = 0;
      const t = await timelineOf(bytes, "t.rawtrace", (e) => {
        e.partnerMode = mode;
        e.pagedBudgetBytes = 64 << 10;
        const convert = e.convert.bind(e);
        e.convert = async (...args: Parameters<typeof convert>) => {
          const r = await convert(...args);
          spilled = e.spilledBytes;
          return r;
        };
      });
      return { digest: timelineDigest(t.meta, t.events), spilled, partners: countPartners(t.events) };
    };
    const table = await run("table");
    const sorted = await run("sorted");
    const auto = await run("auto");
    assert.ok(table.partners > 100000, `partners ${table.partners}`);
    assert.is(sorted.digest, table.digest);
    assert.is(auto.digest, table.digest);
    assert.is(auto.spilled, sorted.spilled, "auto sorts these ids");
    assert.ok(table.spilled > auto.spilled + 1_000_000, `table spilled ${table.spilled}, sorting ${auto.spilled}`);
  } finally {
    rmSync(tdir, { recursive: true, force: true });
  }
});

test("partners by sorting and by the table agree where a correlation has several launches and tied device work", async () => {
  // Per correlation: launches on two threads (the first in output order wins), kernels on three streams with two
  // sharing the earliest start (the first of those in output order wins) — in several arrival orders.
  const L: C.CuptiLayout = "cuda13";
  const T = 1_780_000_000_000_000_000n;
  for (const seed of [1, 2, 3]) {
    const w = cudaWriter(L, T, 9);
    w.strings([[0x1000n, "k"]]);
    const rand = rng(seed);
    const recs: Uint8Array[] = [];
    for (let c = 1; c <= 300; c++) {
      const t = T + BigInt(c) * 10_000n;
      const group = [
        C.apiRecord(L, { kind: 5, cbid: 211, start: t + BigInt(Math.floor(rand() * 50)), end: t + 900n, processId: 9, threadId: 1 + Math.floor(rand() * 2), correlationId: c }),
        C.apiRecord(L, { kind: 5, cbid: 211, start: t + 100n, end: t + 800n, processId: 9, threadId: 1 + Math.floor(rand() * 2), correlationId: c }),
        ...[0, 1, 2].map((s) => C.kernelRecord(L, {
          start: t + 2000n + (s === 2 ? BigInt(Math.floor(rand() * 3)) : 1n), end: t + 5000n, deviceId: 0, contextId: 1,
          streamId: 7 + ((s + c) % 3), correlationId: c, namePtr: 0x1000n,
        })),
      ];
      for (let i = group.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [group[i], group[j]] = [group[j], group[i]];
      }
      recs.push(...group);
    }
    w.activity(C.concat(recs));
    w.end();
    const bytes = w.bytes();
    const digest = async (mode: "table" | "sorted") => {
      const t = await timelineOf(bytes, "t.rawtrace", (e) => { e.partnerMode = mode; });
      return `${countPartners(t.events)} ${timelineDigest(t.meta, t.events)}`;
    };
    const table = await digest("table");
    assert.is(await digest("sorted"), table, `seed ${seed}`);
    assert.ok(table.startsWith("1500 "), table);
  }
});

/** Events with a partner. */
function countPartners(events: TimelineEvents): number {
  let n = 0;
  for (let i = 0; i < events.length; i++) if (events.partner(i) !== 0xffffffff) n++;
  return n;
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
    const l = dv.getUint32(o + 12, true);
    if (t === tag) return { at: o + 16, n };
    o += 16;
    if (t === 1) o += n * TL_REC + m * 16 + l * 16; // records, extension entries, long durations
    else if (t === 2 || t === 4) o += words(n);
    else if (t === 3) {
      const u = (k: number) => dv.getUint32(o + k, true);
      const [rows, lanes, names, nameBytes] = [u(12), u(16), u(20), u(24)];
      o += 64 + rows * 32 + lanes * 24 + names * 8 + nameBytes;
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

test("durations of 2^32 - 1 ns and more across EVENTS blocks: exact; a long duration that names a short record, none for a long one, one outside its block: errors", async () => {
  // 10,000 kernels on 4 streams, every 7th 2^32 - 1 ns or longer (the records say DUR_LONG, their blocks carry the
  // f64s), the rest short: three blocks of 4,096 records.
  const L: C.CuptiLayout = "cuda13";
  const T = 1_780_000_000_000_000_000n;
  const w = cudaWriter(L, T, 9);
  w.strings([[0x1000n, "k"]]);
  const want = new Map<number, number>();
  const recs: Uint8Array[] = [];
  for (let c = 1; c <= 10_000; c++) {
    const d = c % 7 === 0 ? 2n ** 32n - 1n + BigInt(c) * 1_000_003n : BigInt(c % 1000);
    want.set(c, Number(d));
    const t = T + BigInt(c) * 1000n;
    recs.push(C.kernelRecord(L, { start: t, end: t + d, deviceId: 0, contextId: 1, streamId: c % 4, correlationId: c, namePtr: 0x1000n }));
  }
  w.activity(C.concat(recs));
  w.end();
  const base = await stream(w.bytes());
  const ev = parse(base);
  assert.is(ev.length, 10_000);
  for (let i = 0; i < ev.length; i++) if (ev.dur(i) !== want.get(ev.correlation(i))) assert.unreachable(`event ${i}: ${ev.dur(i)}`);
  // Fed in pieces of 7 bytes (long durations split between pushes): the same.
  const pieces = new TimelineEvents();
  const parser = new TimelineParser((chunk) => pieces.add(chunk));
  for (let o = 0; o < base.length; o += 7) parser.push(base.subarray(o, o + 7));
  parser.finish();
  for (let i = 0; i < ev.length; i++) if (pieces.dur(i) !== ev.dur(i)) assert.unreachable(`pieces: event ${i}`);
  // The first block's records and long durations.
  const { at, n } = blockAt(base, 1);
  const dv0 = new DataView(base.buffer);
  const m = dv0.getUint32(at - 8, true);
  const l = dv0.getUint32(at - 4, true);
  assert.is(n, 4096);
  assert.is(l, Math.floor(4096 / 7));
  const longAt = at + n * TL_REC + m * 16;
  assert.is(dv0.getUint32(longAt, true), 6, "record 6 (correlation 7) is the first long one");
  // A long duration that names a short record of its block.
  let s = base.slice();
  new DataView(s.buffer).setUint32(longAt, 5, true);
  assert.throws(() => parse(s), /timeline stream: a long duration for record 5, whose duration is not long/);
  // A short record that says DUR_LONG: no long duration for it.
  s = base.slice();
  new DataView(s.buffer).setUint32(at + 5 * TL_REC + 8, 0xffffffff, true);
  assert.throws(() => parse(s), /timeline stream: 1429 records with a long duration, 1428 long durations/);
  // One naming a record of another block, and two for one record.
  s = base.slice();
  new DataView(s.buffer).setUint32(longAt, 4096, true);
  assert.throws(() => parse(s), /timeline stream: long duration \d+ of event 4096, not one of the block's 0…4095/);
  s = base.slice();
  new DataView(s.buffer).setUint32(longAt + 16, 6, true);
  assert.throws(() => parse(s), /of event 6, not one of the block's/);
});

test.run();
