/**
 * The viewer says what the Chrome JSON says, for every event of every bundled dump (the samples of each vendor —
 * CUDA, ROCm, XPU, Gaudi — and the real H100 fixtures, which add CUDA event records, event syncs and graphs):
 *  - the name it shows (web/model.ts eventName over the timeline tables, as the page gets them) is the Chrome JSON's
 *    name of the same event — the event at the same time on the same Chrome row (pid, tid);
 *  - its details: the Chrome JSON the details API reads from the dump for each event (src/core/details.ts, what
 *    web/worker.ts details gives the panel) is, byte for byte, that event's line of `rawtrace convert`'s output —
 *    every line of it claimed by exactly one viewer event, at the event's time, row and name —, the panel lists
 *    every one of its args with the JSON's key and value (web/details.ts argFields), and every field the panel shows
 *    from the timeline record (eventFields) that the JSON also writes has the JSON's value (context, correlation,
 *    cbid, External id, grid, block, registers, shared memory, bytes, devices, graph id, event ids, sync kind and
 *    stream, domain and color, a counter's value);
 *  - the page's own request, a few events named by start, kind and row (the first and last of each kind, and events
 *    that share all three), gets each event's own JSON.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import * as C from "../../src/tools/cupti_records.js";
import { cudaWriter } from "../helpers/cuda_writer.js";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { Kind, RowClass, TimelineEvents, TimelineParser } from "../../src/core/timeline.js";
import { eventDetails, type EventJson } from "../../src/core/details.js";
import { eventName, makeLoadedFile, rowWord, type LoadedFile } from "../../web/model.js";
import { argFields, eventFields, type Field } from "../../web/details.js";
import { chromeOf, convert, type Chrome } from "./viewer_helpers.js";

/**
 * A CUDA dump with what no bundled dump has: a CUDA graph slice (GRAPH_TRACE: the whole graph launch as one event)
 * and NVTX markers (instants), one with a domain and color.
 */
function graphsAndMarkers(): string {
  const L: C.CuptiLayout = "cuda13";
  const T = 1_780_000_000_000_000_000n;
  const w = cudaWriter(L, T, 4242);
  w.apiNames([[2, 311, "cudaGraphLaunch_v10000"]]);
  w.strings([[0x3000n, "checkpoint"], [0x3100n, "my_domain"], [0x3200n, "tick"]]);
  w.activity(C.concat([
    C.externalRecord(L, 3, 91n, 20),
    C.apiRecord(L, { kind: 5, cbid: 311, start: T + 1000n, end: T + 3000n, processId: 4242, threadId: 7, correlationId: 20 }),
    C.markerRecord(L, 1, T + 3500n, 1, 4242, 7, 0x3000n, 0x3100n),
    C.markerRecord(L, 1, T + 3600n, 2, 4242, 7, 0x3200n),
    C.graphTraceRecord(L, { correlationId: 20, start: T + 4000n, end: T + 9000n, deviceId: 0, graphId: 3, contextId: 1, streamId: 7 }),
  ]));
  w.end();
  const path = join(TMP, "graphs_markers.rawtrace");
  writeFileSync(path, w.bytes());
  return path;
}
const TMP = mkdtempSync(join(tmpdir(), "rawtrace-parity-"));
test.after(() => rmSync(TMP, { recursive: true, force: true }));

/**
 * One dump per vendor (samples/), the real H100 fixtures with CUDA event records, event waits and graph launches, and
 * a crafted one with a CUDA graph slice and NVTX markers.
 */
const DUMPS = [
  "samples/alexnet_a100_rank0.rawtrace",
  "samples/h100_torch_train_nvtx.rawtrace",
  "samples/mi250_minitoy_rocprof.rawtrace",
  "samples/xpu_train_pti.rawtrace",
  "samples/gaudi2_mlp_synapse.rawtrace",
  "test/fixtures/real/h100/jax_step.rawtrace",
  "test/fixtures/real/h100/torch_graph.rawtrace",
  "test/fixtures/real/h100/cuda_sample.rawtrace",
  graphsAndMarkers(),
];

/** The file as the page holds it after a load (web/worker.ts load, web/model.ts makeLoadedFile). */
async function loaded(path: string): Promise<LoadedFile> {
  const engine = await createEngine();
  const events = new TimelineEvents();
  const parser = new TimelineParser((chunk) => events.add(chunk));
  const res = await engine.convert(fileSource(path), parser.sink, { format: "timeline", traceName: basename(path) });
  return makeLoadedFile(1, basename(path), res.info, parser.finish(), events, 0, 0);
}

/** The Chrome (pid, tid) of viewer row `r` (Kineto's rows: web/layout.ts and emit/chrome_json.ts). */
function chromeRowOf(f: LoadedFile, r: number): string {
  const cls = rowWord(f, r, 0);
  const a = rowWord(f, r, 1);
  const b = rowWord(f, r, 2);
  if (cls === RowClass.GPU_SYNC) return `${a}/${b + 1000000}`;
  if (cls === RowClass.GPU_CONTEXT_SYNC) return `${a}/999999`;
  // Every overhead on one Chrome row (pid 2^31 - 1, tid 0); the viewer keeps a row per thread or device.
  if (cls === RowClass.HOST_OVERHEAD || cls === RowClass.GPU_OVERHEAD) return "2147483647/0";
  if (cls === RowClass.GPU_COUNTER) return `${a}/0`;
  return `${a}/${b}`;
}

/**
 * Pairs every viewer event with its Chrome JSON event: the same start (ns since the Unix epoch; a
 * gpu_user_annotation is widened by 1 ns on each side, as Kineto's) on the same Chrome row, equal names first. Returns
 * the JSON event of each viewer event (undefined: none at that place).
 */
function pair(f: LoadedFile, t: Chrome): Array<Record<string, any> | undefined> {
  const jb = BigInt(t.baseTimeNanoseconds);
  const at = new Map<string, Array<Record<string, any>>>();
  for (const e of t.traceEvents) {
    if (e.ph !== "X" && e.ph !== "i" && e.ph !== "C") continue;
    const ts = BigInt(e.tsNs) + jb + (e.cat === "gpu_user_annotation" ? 1n : 0n);
    const k = `${e.pid}/${e.tid}@${ts}`;
    (at.get(k) ?? at.set(k, []).get(k)!).push(e);
  }
  const ev = f.events;
  const out: Array<Record<string, any> | undefined> = [];
  const rest: number[] = [];
  const key = (i: number) => `${chromeRowOf(f, ev.row(i))}@${f.meta.header.baseNs + BigInt(ev.start(i))}`;
  // Same name first (several events may start together on a row), then whatever is left at that place.
  for (let i = 0; i < ev.length; i++) {
    const c = at.get(key(i)) ?? [];
    const j = c.findIndex((e) => e.name === eventName(f, i));
    if (j >= 0) out[i] = c.splice(j, 1)[0];
    else rest.push(i);
  }
  for (const i of rest) out[i] = at.get(key(i))?.shift();
  return out;
}

for (const path of DUMPS) {
  test(`${basename(path)}: every event's name in the viewer is its Chrome JSON name`, async () => {
    const f = await loaded(path);
    const t = await chromeOf(path);
    const pairs = pair(f, t);
    const wrong = new Map<string, number>();
    for (let i = 0; i < f.events.length; i++) {
      const j = pairs[i];
      assert.ok(j, `${path}: event ${i} (${eventName(f, i)}) has a Chrome JSON event at its place`);
      if (j!.name !== eventName(f, i)) {
        const w = `kind ${f.events.kind(i)}: viewer "${eventName(f, i)}", Chrome JSON "${j!.name}"`;
        wrong.set(w, (wrong.get(w) ?? 0) + 1);
      }
    }
    assert.equal([...wrong].map(([w, n]) => `${n} × ${w}`), [], `${path}: names`);
  });
}

/** The details API's answer for every event of `path` (src/core/details.ts, "all"). */
async function allDetails(path: string): Promise<Map<number, EventJson>> {
  return eventDetails(await createEngine(), fileSource(path), "all", { traceName: basename(path) });
}

/** Exact ns of a µs text with three decimals ("12.345" → 12345). */
function ns(us: string): bigint {
  const [i, f] = us.split(".");
  return BigInt(i) * 1000n + BigInt((f ?? "0").padEnd(3, "0"));
}

/** Whether the panel's text `text` shows the JSON value `v` (numbers compared as numbers: "12.5" and 12.500000000). */
function shows(text: string, v: unknown): boolean {
  if (typeof v === "string") return text === v;
  if (typeof v === "number") return text.trim() !== "" && Number(text) === v;
  return JSON.stringify(JSON.parse(text)) === JSON.stringify(v);
}

/**
 * Where a field the panel shows from the timeline record differs from what the Chrome JSON writes for the same event
 * (`args` parsed, `raw` the args' JSON text per key: ids past 2^53 compared exactly). Fields the JSON does not write
 * (threads, occupancy, direction, memory kinds, bandwidth, return value, step…) are the viewer's own.
 */
function recordVsArgs(fields: Field[], args: Record<string, any>, raw: Map<string, string>): string[] {
  const out: string[] = [];
  const field = (k: string) => fields.find((x) => x.field === k)?.text;
  const same = (k: string, key: string, want: (text: string) => string = (t) => t) => {
    const text = field(k);
    if (text === undefined || !raw.has(key)) return;
    const v = raw.get(key)!;
    const shown = want(text);
    if (shown !== (v.startsWith('"') ? JSON.parse(v) : v)) out.push(`${k} "${text}" vs ${key} ${v}`);
  };
  same("context", "context");
  same("correlation", "correlation");
  same("cbid", "cbid");
  same("external", "External id");
  same("graph", "graph id");
  same("registers", "registers per thread");
  same("grid", "grid", (t) => t.replace(/ /g, ""));
  same("block", "block", (t) => t.replace(/ /g, ""));
  same("bytes", "bytes", (t) => t.split(" ")[0].replace(/,/g, ""));
  same("domain", "domain");
  same("value", "value", (t) => t.replace(/,/g, ""));
  same("device", "device");
  same("stream", "stream");
  same("event-id", "event_id");
  same("event-id", "wait_on_cuda_event_id");
  same("sync-stream", "stream", (t) => (t === "whole context" ? "-1" : t));
  same("sync-type", "cuda_sync_kind", (t) => t.replace(/ \(\d+\)$/, ""));
  const st = field("shared-static");
  const dy = field("shared-dynamic");
  if (st !== undefined && args["shared memory"] !== undefined && Number(st) + Number(dy) !== args["shared memory"]) {
    out.push(`shared memory ${st} + ${dy} vs ${args["shared memory"]}`);
  }
  const color = field("color");
  if (color !== undefined && `#${((args.color ?? 0) & 0xffffff).toString(16).padStart(6, "0")}` !== color) out.push(`color ${color} vs ${args.color}`);
  const devs = field("copy-devices");
  if (devs !== undefined && args.fromDevice !== undefined && devs !== `device ${args.fromDevice} → device ${args.toDevice}`) {
    out.push(`copy-devices "${devs}" vs ${args.fromDevice} → ${args.toDevice}`);
  }
  return out;
}

for (const path of DUMPS) {
  test(`${basename(path)}: each event's details are its Chrome JSON line, every arg shown, the record's fields agreeing`, async () => {
    const f = await loaded(path);
    const all = await allDetails(path);
    const text = (await convert(path, "chrome")).toString("utf8");
    // Every event line of the Chrome JSON (not its metadata, flows and the Record Window End marker), as a multiset.
    const want = new Map<string, number>();
    for (const line of text.split("\n")) {
      const l = line.replace(/,$/, "");
      if (!/^\{"ph":"[XiC]"/.test(l) || l.includes('"pid":""')) continue;
      want.set(l, (want.get(l) ?? 0) + 1);
    }
    const claim = (l: string, what: string) => {
      const n = want.get(l);
      assert.ok(n, `${path}: ${what}'s JSON is a line of the Chrome JSON: ${l.slice(0, 200)}`);
      if (n === 1) want.delete(l);
      else want.set(l, n! - 1);
    };
    const jsonBase = BigInt(JSON.parse(text.slice(0, text.indexOf('"traceEvents"')) + '"x":0}').baseTimeNanoseconds);
    const wrong = new Map<string, number>();
    const note = (w: string) => wrong.set(w, (wrong.get(w) ?? 0) + 1);
    const ev = f.events;
    for (let i = 0; i < ev.length; i++) {
      const j = all.get(i);
      assert.ok(j, `${path}: event ${i} has details`);
      claim(j!.text, `event ${i}`);
      for (const w of j!.with) if (!/^\{"ph":"[sf]"/.test(w)) claim(w, `event ${i}'s step marker`);
      const k = ev.kind(i);
      const e = JSON.parse(j!.text);
      // The same event: its name, Chrome row and start (a gpu_user_annotation is widened by 1 ns each side).
      if (e.name !== eventName(f, i)) note(`kind ${k}: name "${eventName(f, i)}" vs "${e.name}"`);
      if (`${e.pid}/${e.tid}` !== chromeRowOf(f, ev.row(i))) note(`kind ${k}: row ${chromeRowOf(f, ev.row(i))} vs ${e.pid}/${e.tid}`);
      const ts = ns(/"ts":([\d.]+)/.exec(j!.text)![1]) + jsonBase + (e.cat === "gpu_user_annotation" ? 1n : 0n);
      if (ts !== f.meta.header.baseNs + BigInt(ev.start(i))) note(`kind ${k}: start`);
      // Every arg, with the JSON's key and value, in its order.
      const args: Record<string, any> = e.args ?? {};
      const shown = argFields(j!);
      const entries = Object.entries(args);
      if (!entries.length) {
        if (shown.length !== 1 || shown[0].field !== "args") note(`kind ${k}: no args, shown ${JSON.stringify(shown)}`);
      } else {
        const got = shown.map((x) => x.label).join(", ");
        if (got !== entries.map(([key]) => key).join(", ")) note(`kind ${k}: args shown ${got} vs ${Object.keys(args).join(", ")}`);
        for (const [key, v] of entries) {
          const x = shown.find((y) => y.label === key);
          if (x && (x.field !== `arg:${key}` || !shows(x.text, v))) note(`kind ${k}: arg ${key} shown "${x.text}" vs ${JSON.stringify(v)}`);
        }
      }
      // The panel's fields from the record agree with the JSON where it writes the same thing.
      const raw = new Map(j!.args);
      for (const w of recordVsArgs(eventFields({ file: f, i }, { origin: 0, manyFiles: false }), args, raw)) note(`kind ${k}: ${w}`);
    }
    assert.equal([...wrong].map(([w, n]) => `${n} × ${w}`), [], `${path}: details`);
    assert.equal([...want.keys()].map((l) => l.slice(0, 160)), [], `${path}: Chrome JSON events no viewer event claims`);

    // The page's request: events by start, kind and row, their timeline index picking among equals.
    const key = (i: number) => `${ev.start(i)}/${ev.kind(i)}/${ev.row(i)}`;
    const byKey = new Map<string, number[]>();
    for (let i = 0; i < ev.length; i++) (byKey.get(key(i)) ?? byKey.set(key(i), []).get(key(i))!).push(i);
    const pick = new Set<number>();
    const firstOf = new Map<number, number>();
    const lastOf = new Map<number, number>();
    for (let i = 0; i < ev.length; i++) {
      if (!firstOf.has(ev.kind(i))) firstOf.set(ev.kind(i), i);
      lastOf.set(ev.kind(i), i);
    }
    for (const i of [...firstOf.values(), ...lastOf.values()]) pick.add(i);
    const shared = [...byKey.values()].filter((l) => l.length > 1).slice(0, 3).flat();
    for (const i of shared) pick.add(i);
    const targets = [...pick].map((i) => {
      const r = ev.row(i);
      return { start: ev.start(i), kind: ev.kind(i), rowClass: rowWord(f, r, 0), a: rowWord(f, r, 1), b: rowWord(f, r, 2), index: i };
    });
    const got = await eventDetails(await createEngine(), fileSource(path), targets, { traceName: basename(path) });
    assert.equal([...got.keys()].sort((a, b) => a - b), [...pick].sort((a, b) => a - b), `${path}: each event asked about answered`);
    for (const i of pick) assert.is(got.get(i)!.text, all.get(i)!.text, `${path}: event ${i} (kind ${ev.kind(i)}) asked alone`);
    if (path.includes("alexnet") || path.includes("xpu")) assert.ok(shared.length >= 2, `${path}: events sharing start, kind and row asked about`);
  });
}

test("the dumps above hold every event kind the viewer draws", async () => {
  const kinds = new Set<number>();
  for (const path of DUMPS) {
    const f = await loaded(path);
    for (let i = 0; i < f.events.length; i++) kinds.add(f.events.kind(i));
  }
  assert.equal(Object.entries(Kind).filter(([, k]) => !kinds.has(k)).map(([n]) => n), []);
});

test("past the timeline's 16,384-row cap (events of later threads share its last row) the details of an event there are found: the page names that row by the shared row's words", async () => {
  const L: C.CuptiLayout = "cuda13";
  const T = 1_780_000_000_000_000_000n;
  const w = cudaWriter(L, T, 4242);
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"]]);
  const recs: Uint8Array[] = [];
  // One API call on each of 16,387 threads: rows for the first 16,383, the last row shared by the other 4.
  for (let t = 0; t < 16387; t++) {
    recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: T + BigInt(t) * 1000n, end: T + BigInt(t) * 1000n + 500n, processId: 4242, threadId: 100 + t, correlationId: 10 + t }));
  }
  for (let i = 0; i < recs.length; i += 4096) w.activity(C.concat(recs.slice(i, i + 4096)));
  w.end();
  const path = join(TMP, "many_threads.rawtrace");
  writeFileSync(path, w.bytes());
  const f = await loaded(path);
  const ev = f.events;
  const all = await eventDetails(await createEngine(), fileSource(path), "all", { traceName: basename(path) });
  // The last six events by start: two on rows of their own, four on the shared last row.
  const order = [...Array(ev.length).keys()].sort((x, y) => ev.start(x) - ev.start(y)).slice(-6);
  assert.ok(order.filter((i) => ev.row(i) === ev.row(order[5])).length >= 4, "four events share the capped row");
  const targets = order.map((i) => {
    const r = ev.row(i);
    return { start: ev.start(i), kind: ev.kind(i), rowClass: rowWord(f, r, 0), a: rowWord(f, r, 1), b: rowWord(f, r, 2), index: i };
  });
  const got = await eventDetails(await createEngine(), fileSource(path), targets, { traceName: basename(path) });
  assert.equal([...got.keys()].sort((x, y) => x - y), [...order].sort((x, y) => x - y), "each event asked about answered");
  for (const i of order) assert.is(got.get(i)!.text, all.get(i)!.text, `event ${i}`);
});

test("a details pass reports the timeline's own event count (the capture writes each event's Chrome JSON again: not counted twice)", async () => {
  const path = "samples/h100_torch_train_nvtx.rawtrace";
  const plain = await (await createEngine()).convert(fileSource(path), () => {}, { format: "timeline", traceName: basename(path) });
  const withAll = await (await createEngine()).convert(fileSource(path), () => {},
    { format: "timeline", traceName: basename(path), details: "all" });
  assert.ok(plain.events > 0);
  assert.is(withAll.events, plain.events);
});

test.run();
