/**
 * web/layout.ts in Node: where files sit on the view axis (ranks of one run on recorded time, another run aligned to
 * the first file's start; a file that joins never moves the ones open) and the row layout, whose group state (by
 * key) survives a second file joining — on the timeline tables of real dumps.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { basename } from "node:path";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { TimelineEvents, TimelineParser } from "../../src/core/timeline.js";
import { makeLoadedFile, type LoadedFile } from "../../web/model.js";
import { groupKey, layoutRows, placeFiles, shiftNote, type GroupState, type Placement } from "../../web/layout.js";

const CUDA_SAMPLE = "test/fixtures/real/h100/cuda_sample.rawtrace";
const TORCH_NVTX = "samples/h100_torch_train_nvtx.rawtrace";
const ALEXNET = "samples/alexnet_a100_rank0.rawtrace";

let nextId = 1;
async function loaded(path: string): Promise<LoadedFile> {
  const engine = await createEngine();
  const events = new TimelineEvents();
  const parser = new TimelineParser((chunk) => events.add(chunk));
  const res = await engine.convert(fileSource(path), parser.sink, { format: "timeline" });
  return makeLoadedFile(nextId++, basename(path), res.info, parser.finish(), events, 0, 0);
}

/** A file with only a time range (what placement reads): absolute ns [base + a, base + b]. */
function fake(name: string, base: bigint, a: number, b: number, pid = 1000 + nextId, started = BigInt(nextId), events = 10): LoadedFile {
  return {
    id: nextId++, name, info: { pid, hostname: "node-1", collectorStartNs: started },
    meta: { header: { baseNs: base, minStart: a, maxEnd: b, events, rows: 0 } },
  } as unknown as LoadedFile;
}

/** View-axis start of a file. */
const startOf = (f: LoadedFile) => f.offset + f.meta.header.minStart;

test("two capture windows of one process (same host and pid) stay on recorded time, even an hour apart", () => {
  const s = 1_000_000_000n;
  const a = fake("win1", 1_700_000_000n * s, 5e9, 9e9, 4242, 77n);
  const b = fake("win2", 1_700_003_600n * s, 2e9, 3e9, 4242, 77n);
  const c = fake("other", 1_700_007_200n * s, 2e9, 3e9, 77); // overlaps neither: another run
  const d = fake("pid-reused", 1_700_010_800n * s, 2e9, 3e9, 4242, 99n); // same host and pid, another process
  const placed = new Map<LoadedFile, Placement>();
  placeFiles([a, b, c, d], placed, true);
  assert.is(b.offset, 3600e9, "same process: on recorded time");
  assert.is(placed.get(b)!.shift, 0n);
  assert.is(startOf(c), startOf(a), "another process of another run: aligned");
  assert.is(startOf(d), startOf(a), "a reused pid (another collector start) is another run: aligned");
});

test("an empty first file: later runs are aligned to the first file that has events", () => {
  const s = 1_000_000_000n;
  const empty = fake("empty", 1_700_000_000n * s, 0, 0, 1, 1n, 0);
  const a = fake("a", 1_700_000_100n * s, 5e9, 9e9);
  const b = fake("b", 1_700_009_000n * s, 2e9, 3e9);
  const files = [empty, a, b];
  const placed = new Map<LoadedFile, Placement>();
  placeFiles(files, placed, true);
  assert.is(startOf(b), startOf(a));
  assert.match(shiftNote(files, placed, b)!, /aligned to the start of a$/);
});

test("an empty first file anchors nothing: the next file's times stay exact (a dump cut inside its header, base 0)", () => {
  const s = 1_000_000_000n;
  const cut = fake("cut", 0n, 0, 0, 1, 1n, 0);
  const a = fake("a", 1_795_345_123_003_021_000n, 5e9, 9e9);
  const b = fake("b", 1_795_345_124n * s, 4e9, 12e9); // overlaps a: same run
  const files = [cut, a, b];
  const placed = new Map<LoadedFile, Placement>();
  placeFiles(files, placed, true);
  assert.is(cut.offset, 0);
  assert.is(a.offset, 0, "the first file with events is the anchor (was 1.8e18 from the empty file's base 0)");
  assert.is(placed.get(a)!.shift, 0n, "on recorded time, not aligned");
  assert.is(b.offset, 1e9 - 3_021_000, "b on recorded time relative to a, to the ns");
  // A start 1 ns apart stays 1 ns apart on the view axis.
  assert.is(a.offset + 5e9 + 1 - (a.offset + 5e9), 1);
});

test("ranks of one run keep recorded time; a run that overlaps none is aligned to the first file's start", () => {
  const s = 1_000_000_000n;
  const a = fake("a", 1_700_000_000n * s, 5e9, 9e9);
  const b = fake("b", 1_700_000_001n * s, 4e9, 12e9); // overlaps a (1 s later base)
  const c = fake("c", 1_700_003_600n * s, 2e9, 3e9); // an hour later: another run
  const d = fake("d", 1_700_003_600n * s, 2.5e9, 4e9); // overlaps c: a rank of c's run
  const files = [a, b, c, d];
  const placed = new Map<LoadedFile, Placement>();
  placeFiles(files, placed, true);
  assert.is(a.offset, 0, "the first file is the anchor");
  assert.is(b.offset, 1e9, "b on recorded time: its base is 1 s later");
  assert.is(placed.get(b)!.shift, 0n);
  assert.is(startOf(c), startOf(a), "c starts where a starts");
  assert.is(placed.get(c)!.shift, -(3600_000_000_000n + 2_000_000_000n - 5_000_000_000n), "c moved back by the time between the starts");
  assert.is(startOf(d) - startOf(c), 0.5e9, "d keeps its place relative to c (same run)");
  assert.is(placed.get(d)!.shift, placed.get(c)!.shift);
  assert.is(shiftNote(files, placed, c), "recorded 59 min 57 s later, aligned to the start of a");
  assert.is(shiftNote(files, placed, b), null);

  // ?align=absolute: everything on recorded time.
  const abs = new Map<LoadedFile, Placement>();
  const copies = files.map((f) => fake(f.name, f.meta.header.baseNs, f.meta.header.minStart, f.meta.header.maxEnd));
  placeFiles(copies, abs, false);
  assert.equal(copies.map((f) => f.offset), [0, 1e9, 3600e9, 3600e9]);
  assert.ok([...abs.values()].every((p) => p.shift === 0n));
});

test("a file that joins moves none of the files open (one that starts earlier included)", () => {
  const a = fake("a", 5_000_000_000n, 1e9, 2e9);
  const placed = new Map<LoadedFile, Placement>();
  placeFiles([a], placed, true);
  const before = a.offset;
  const early = fake("early", 4_000_000_000n, 1.5e9, 3e9); // overlaps a, starts before it
  placeFiles([a, early], placed, true);
  assert.is(a.offset, before);
  assert.is(early.offset, -1e9, "on recorded time, before the anchor");
  assert.ok(startOf(early) < startOf(a));
});

test("another run years later (a shift above 2^53 ns) is placed exactly: a second copy of it sits on the first", async () => {
  const h100 = await loaded(TORCH_NVTX);
  const alex = await loaded(ALEXNET);
  const alex2 = await loaded(ALEXNET);
  const files = [h100, alex, alex2];
  const placed = new Map<LoadedFile, Placement>();
  placeFiles(files, placed, true);
  const shift = placed.get(alex)!.shift;
  const exact = h100.meta.header.baseNs + BigInt(h100.meta.header.minStart) - alex.meta.header.baseNs - BigInt(alex.meta.header.minStart);
  assert.ok(shift > 2n ** 53n, `recorded 3 years earlier: a shift beyond 2^53 ns (${shift})`);
  assert.is(shift, exact, "the shift, to the ns");
  assert.is(startOf(alex), startOf(h100), "aligned to the first file's start");
  assert.is(alex2.offset, alex.offset, "the second copy on the first, to the ns");
  assert.is(placed.get(alex2)!.shift, shift);
  // The same kernel in both copies: the same view time, whatever order the copies came in.
  const k = alex.events.length >> 1;
  assert.is(alex2.offset + alex2.events.start(k), alex.offset + alex.events.start(k));
  const again = new Map<LoadedFile, Placement>();
  const copies = [alex, h100, alex2];
  placeFiles(copies, again, true);
  assert.is(alex2.offset, alex.offset, "copies of the anchor's run: on the anchor");
  assert.is(h100.offset + h100.meta.header.minStart, alex.offset + alex.meta.header.minStart);
});

test("layout: collapsed, pinned and moved groups of the first file stay so when a second file joins", async () => {
  const a = await loaded(CUDA_SAMPLE);
  const b = await loaded(TORCH_NVTX);
  const placed = new Map<LoadedFile, Placement>();
  placeFiles([a], placed, true);
  const st: GroupState = { collapsed: new Set<string>(), pinned: new Set<string>(), order: [] };
  const one = layoutRows([a], placed, st);
  assert.is(one.headers.length, 2, "cuda_sample: a process and a GPU");
  const [cpu, gpu] = one.headers;
  (st.pinned as Set<string>).add(gpu.key);
  (st.collapsed as Set<string>).add(cpu.key);
  const before = layoutRows([a], placed, st);
  assert.equal(before.headers.map((h) => [h.label, h.collapsed, h.pinned]), [[gpu.label, false, true], [cpu.label, true, false]]);

  placeFiles([a, b], placed, true);
  const two = layoutRows([a, b], placed, st);
  const mine = two.headers.filter((h) => h.key.startsWith(`${a.id}:`));
  assert.equal(mine.map((h) => [h.label, h.collapsed, h.pinned]), [
    [`cuda_sample.rawtrace · ${gpu.label}`, false, true],
    [`cuda_sample.rawtrace · ${cpu.label}`, true, false],
  ], "same state, the file named");
  assert.equal(two.headers.slice(0, 2), mine, "the first file's groups stay on top");
  assert.ok(two.headers.slice(2).every((h) => h.label.startsWith("(aligned) h100_torch_train_nvtx.rawtrace · ") && !h.collapsed && !h.pinned));
  // Each header knows the file's name in its label, which a narrow gutter shortens first (overlays.ts fitHeader).
  assert.equal(two.headers.map((h) => h.tag), [...mine.map(() => "cuda_sample.rawtrace"), ...two.headers.slice(2).map(() => "h100_torch_train_nvtx.rawtrace")]);
  assert.ok(one.headers.every((h) => h.tag === undefined), "one file: no name in the headers");
  assert.equal([...two.laneY.get(a)!], [...before.laneY.get(a)!], "the first file's lanes where they were");
  assert.equal(two.rows.filter((r) => r.file === a).map((r) => r.y), before.rows.map((r) => r.y));
  assert.is(groupKey(a, 0), `${a.id}:${a.rowGroups[0]}`);
});

test.run();
