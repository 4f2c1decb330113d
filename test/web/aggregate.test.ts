/**
 * The viewer's pure parts in Node, on the timeline tables of a real dump: the range aggregate (web/aggregate.ts)
 * equals a brute-force pass over every event for ranges of every width and position, per track and all tracks;
 * TSV; search (web/search.ts) counts and time-order stepping (the URL hash: test/web/hash.test.ts).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { basename } from "node:path";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { Flag, Kind, TL_NONE, TimelineEvents, TimelineParser } from "../../src/core/timeline.js";
import { makeLoadedFile, type LoadedFile } from "../../web/model.js";
import { aggregate, sortLines, toTsv, type RowRef } from "../../web/aggregate.js";
import { nameTest, searchEvents, stepMatch } from "../../web/search.js";

const SAMPLE = "test/fixtures/real/h100/cuda_sample.rawtrace";

async function loaded(path: string): Promise<LoadedFile> {
  const engine = await createEngine();
  const events = new TimelineEvents();
  const parser = new TimelineParser((chunk) => events.add(chunk));
  const res = await engine.convert(fileSource(path), parser.sink, { format: "timeline" });
  return makeLoadedFile(1, basename(path), res.info, parser.finish(), events, 0, 0);
}

/** Per name (count, total clipped ns) by looking at every event of the given rows. */
function brute(f: LoadedFile, a: number, b: number, rows: Set<number> | null): Map<string, { count: number; total: number; min: number; max: number }> {
  const m = new Map<string, { count: number; total: number; min: number; max: number }>();
  const ev = f.events;
  for (let i = 0; i < ev.length; i++) {
    if (rows && !rows.has(ev.row(i))) continue;
    // Incomplete work (duration unknown) and, over all tracks, the NVTX ranges' GPU projections are not counted.
    if ((ev.flags(i) & Flag.INCOMPLETE) !== 0 || (!rows && ev.kind(i) === Kind.GPU_RANGE)) continue;
    const s = ev.start(i);
    const d = ev.dur(i);
    const inside = d > 0 ? s < b && s + d > a : s >= a && s <= b;
    if (!inside) continue;
    const n = ev.name(i);
    const name = n !== TL_NONE ? f.names[n] : ev.kind(i) === Kind.GRAPH ? `CUDA Graph ${ev.word(i, 9)}` : `(unnamed kind ${ev.kind(i)})`;
    const part = d > 0 ? Math.min(s + d, b) - Math.max(s, a) : 0;
    const x = m.get(name) ?? { count: 0, total: 0, min: Infinity, max: -Infinity };
    x.count++;
    x.total += part;
    x.min = Math.min(x.min, part);
    x.max = Math.max(x.max, part);
    m.set(name, x);
  }
  return m;
}

let f: LoadedFile;
test.before(async () => {
  f = await loaded(SAMPLE);
});

test("range aggregate equals a pass over every event: 40 ranges, all tracks and each track", () => {
  const lo = f.meta.header.minStart;
  const hi = f.meta.header.maxEnd;
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  let checked = 0;
  for (let k = 0; k < 40; k++) {
    const w = (hi - lo) * (k < 5 ? 1.1 : rnd() ** 3);
    const a = k < 5 ? lo - (hi - lo) * 0.05 : lo + rnd() * (hi - lo - w);
    const b = a + w;
    for (const rows of [null, [k % f.meta.header.rows]]) {
      const got = aggregate([f], a, b, rows ? rows.map((row) => ({ file: f, row })) : null);
      const want = brute(f, a, b, rows ? new Set(rows) : null);
      const named = got.lines.filter((l) => !l.name.startsWith("(unnamed"));
      assert.is(named.length, [...want.keys()].filter((n) => !n.startsWith("(unnamed")).length, `names in [${a}, ${b}]`);
      for (const l of named) {
        const x = want.get(l.name)!;
        assert.ok(x, l.name);
        assert.is(l.count, x.count, `${l.name} count`);
        assert.ok(Math.abs(l.total - x.total) < 1e-3, `${l.name} total ${l.total} vs ${x.total}`);
        assert.ok(Math.abs(l.min - x.min) < 1e-3 && Math.abs(l.max - x.max) < 1e-3, `${l.name} min/max`);
        assert.ok(Math.abs(l.percent - (x.total / (b - a)) * 100) < 1e-9, `${l.name} %`);
        checked++;
      }
      assert.is(got.events, [...want.values()].reduce((s, x) => s + x.count, 0), "events");
    }
  }
  assert.ok(checked > 100, `${checked} lines checked`);
});

/** One event of a made-up file: start, duration (ns), name id, kind, flags, graph id (word 9). */
interface FakeEvent { s: number; d: number; name: number; kind: number; flags?: number; graph?: number }

/** A LoadedFile with one lane per row holding `rows`' events in start order (what aggregate() reads of it). */
function fakeFile(rows: FakeEvent[][], names: string[]): LoadedFile {
  const evs = rows.flat();
  const rowWords = new Uint32Array(rows.length * 8);
  const lanes: Array<{ first: number; count: number; max: number }> = [];
  rows.forEach((r, k) => {
    rowWords[k * 8 + 4] = lanes.length;
    rowWords[k * 8 + 5] = 1;
    lanes.push({ first: lanes.reduce((n, l) => n + l.count, 0), count: r.length, max: Math.max(0, ...r.map((e) => e.d)) });
  });
  return {
    meta: { header: { rows: rows.length }, rows: rowWords }, names, offset: 0,
    events: {
      start: (i: number) => evs[i].s, dur: (i: number) => evs[i].d, end: (i: number) => evs[i].s + evs[i].d,
      name: (i: number) => evs[i].name, kind: (i: number) => evs[i].kind,
      flags: (i: number) => evs[i].flags ?? 0, word: (i: number, k: number) => (k === 9 ? evs[i].graph ?? 0 : 0),
    },
    lanes: { first: (l: number) => lanes[l].first, count: (l: number) => lanes[l].count, overlapping: () => false, maxDur: (l: number) => lanes[l].max },
  } as unknown as LoadedFile;
}

test("CUDA graphs are told apart by graph id; an NVTX range's GPU projections count only on their own rows; incomplete work is left out", async () => {
  const lines = (f: LoadedFile, rows: RowRef[] | null = null) => aggregate([f], 0, 1000, rows).lines.map((l) => [l.name, l.count, l.total]);
  // Before: one "(unnamed CUDA graph)" line, 2 graphs, 400 ns.
  const graphs = fakeFile([[{ s: 0, d: 100, name: TL_NONE, kind: Kind.GRAPH, graph: 3 }, { s: 200, d: 300, name: TL_NONE, kind: Kind.GRAPH, graph: 7 }]], []);
  assert.equal(lines(graphs), [["CUDA Graph 7", 1, 300], ["CUDA Graph 3", 1, 100]]);
  // Before: train_step counted twice (1,800 ns, 180 % of the range) over all tracks.
  const nvtx = fakeFile([[{ s: 0, d: 1000, name: 0, kind: Kind.RANGE }], [{ s: 100, d: 800, name: 0, kind: Kind.GPU_RANGE }]], ["train_step"]);
  assert.equal(lines(nvtx), [["train_step", 1, 1000]]);
  assert.equal(lines(nvtx, [{ file: nvtx, row: 1 }]), [["train_step", 1, 800]], "the annotation row picked: its projection");
  // Before: count 2, average 50, min 0.
  const cut = fakeFile([[{ s: 0, d: 100, name: 0, kind: Kind.KERNEL }, { s: 500, d: 0, name: 0, kind: Kind.KERNEL, flags: Flag.INCOMPLETE }]], ["gemm"]);
  const [gemm] = aggregate([cut], 0, 1000, null).lines;
  assert.equal([gemm.count, gemm.total, gemm.avg, gemm.min], [1, 100, 100, 100]);
  // A real dump's NVTX ranges over all tracks: each host range once, not once more per stream it projects onto.
  const n = await loaded("test/fixtures/real/h100/torch_nvtx.rawtrace");
  let projections = 0;
  const hostRanges = new Map<string, number>();
  for (let i = 0; i < n.events.length; i++) {
    if (n.events.kind(i) === Kind.GPU_RANGE) projections++;
    if (n.events.kind(i) !== Kind.RANGE || n.events.name(i) === TL_NONE) continue;
    const name = n.names[n.events.name(i)];
    hostRanges.set(name, (hostRanges.get(name) ?? 0) + 1);
  }
  assert.ok(projections > 0 && hostRanges.size > 0, "the fixture projects NVTX ranges onto GPU streams");
  const everything = aggregate([n], -1, n.meta.header.maxEnd + 1, null);
  for (const [name, count] of hostRanges) assert.is(everything.lines.find((l) => l.name === name)?.count, count, name);
});

test("sort by column both ways; TSV has a header and one line per name", () => {
  const got = aggregate([f], -1, f.meta.header.maxEnd + 1, null);
  const byCount = sortLines([...got.lines], "count", false);
  assert.ok(byCount.every((l, k) => k === 0 || byCount[k - 1].count >= l.count));
  const byName = sortLines([...got.lines], "name", true);
  assert.ok(byName.every((l, k) => k === 0 || byName[k - 1].name.localeCompare(l.name) <= 0));
  const tsv = toTsv(byCount).trimEnd().split("\n");
  assert.is(tsv.length, got.lines.length + 1);
  assert.is(tsv[1].split("\t")[1], String(byCount[0].count));
  assert.is(tsv[1].split("\t").length, 7);
});

test("search: substring and regex counts; stepping in time order visits every match once", () => {
  const sub = searchEvents([f], nameTest("cudaLaunch", false));
  let want = 0;
  for (let i = 0; i < f.events.length; i++) {
    const n = f.events.name(i);
    if (n !== TL_NONE && f.names[n].toLowerCase().includes("cudalaunch")) want++;
  }
  assert.is(sub.total, want);
  assert.ok(want > 10);
  const re = searchEvents([f], nameTest("^cudaLaunch\\w*$", true));
  assert.is(re.total, want);
  assert.throws(() => nameTest("(", true));
  let at = null;
  let last = -Infinity;
  const seen = new Set<number>();
  for (let k = 0; k < want; k++) {
    const r = stepMatch([f], sub, at, 1)!;
    assert.is(r.rank, k + 1);
    const t = f.events.start(r.hit.i);
    assert.ok(t >= last, "time order");
    last = t;
    seen.add(r.hit.i);
    at = r.hit;
  }
  assert.is(seen.size, want, "each match once");
  assert.is(stepMatch([f], sub, at, 1)!.rank, 1, "wraps to the first");
  assert.is(stepMatch([f], sub, null, -1)!.rank, want, "Shift+Enter from nothing: the last");
});

test.run();
