/**
 * The Chrome JSON writer's fast paths (assembly/emit/put.ts, chrome_text.ts): timestamps formatted from per-second
 * windows, numbers at every digit-count boundary, ids from the tables of recent ids, kept row / stream / launch / graph-and-channel
 * texts, kept event openings (category,
 * name and row) and names escaped 16 bytes at a time must give exactly the text plain formatting gives. Each expected string is computed here with BigInt.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { toChrome } from "../helpers/convert.js";

const L: C.CuptiLayout = "cuda13";
const GRID = 3944619n * 1000000000n;
/** A time on the time base grid (half of Kineto's 3 months): the output's base, so relative times are the offsets below. */
const G = GRID * 450n;
const PID = 77;
const TID = 78;

/** Kineto's µs text of a relative time in ns. */
const us = (r: bigint) => `${r / 1000n}.${(r % 1000n).toString().padStart(3, "0")}`;

/** A dump whose collector started at G + `start` ns, with the activity `build` writes. */
function dump(build: (w: RawtraceWriter) => void, start = 0n): Uint8Array {
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 13000, driverVersion: 13000, pid: PID,
    startNs: G + start, hostname: "h", commandLine: "/bin/x",
  });
  w.clock({ which: 0, vendorNs: G + start, realtimeNs: G + start, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [2, 311, "cudaGraphLaunch_v10000"]]);
  w.devices([{
    id: 0, multiprocessors: 132, globalMemoryBytes: 80n << 30n, memoryBandwidth: 3350000000000n, coreClockKhz: 1980000,
    ccMajor: 9, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536,
    regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 233472,
    sharedMemPerBlockOptin: 232448, maxBlocksPerMultiprocessor: 32, name: "NVIDIA H100 80GB HBM3",
  }, {
    id: 1, multiprocessors: 108, globalMemoryBytes: 40n << 30n, memoryBandwidth: 1555000000000n, coreClockKhz: 1410000,
    ccMajor: 8, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536,
    regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 167936,
    sharedMemPerBlockOptin: 166912, maxBlocksPerMultiprocessor: 32, name: "NVIDIA A100-SXM4-40GB",
  }]);
  build(w);
  w.end();
  return w.bytes();
}

/** The X event lines of a trace text, each with its following flow line when there is one. */
function lines(text: string): string[] {
  return text.split("\n").filter((l) => l.startsWith('{"ph":'));
}

for (const far of [0n, 3_921_449_000_000_000n]) test(`timestamps across second windows, host and device interleaved (${far} ns from the base)`, async () => {
  // Relative starts: < 1 s (no seconds prefix when far is 0), around window edges, three windows in turn. The
  // first is the earliest event, so the output's base is G.
  const rel = [500n, 999_999_999n, 1_000_000_000n, 1_000_000_001n, 1_999_999_999n, 2_000_000_000n, 999_000_000n,
    2_500_000_000n, 59_999_999_999n, 9_999_999_999n, 10_000_000_000n, 1_000_999_999n].map((r) => r + far);
  const recs: Uint8Array[] = [];
  rel.forEach((r, i) => {
    // A launch on the host, its kernel on the device 1.5 ms later: the two interleave across windows.
    recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: G + r, end: G + r + 2_001n, processId: PID, threadId: TID, correlationId: i + 1 }));
    recs.push(C.kernelRecord(L, {
      start: G + r + 1_500_000n, end: G + r + 1_500_000n + 1_234_567n, deviceId: 0, contextId: 1, streamId: 7,
      correlationId: i + 1, namePtr: 0n, gridX: 4, blockX: 128,
    }));
  });
  const { text } = await toChrome(dump((w) => w.activity(C.concat(recs)), far));
  const got = lines(text).filter((l) => l.includes('"ph":"X"')).map((l) => /"ts":(\d+\.\d{3}),"dur":(\d+\.\d{3})/.exec(l)!.slice(1));
  const want: string[][] = [];
  for (const r of rel) {
    want.push([us(r), us(2_001n)]);
    want.push([us(r + 1_500_000n), us(1_234_567n)]);
  }
  assert.equal(got.sort(), want.sort());
  // Every flow event repeats its own event's pid, tid and ts.
  const ls = lines(text);
  for (let i = 1; i < ls.length; i++) {
    if (!/"ph":"[sf]"/.test(ls[i])) continue;
    const ev = ls[i - 1];
    for (const k of ["pid", "tid", "ts"]) {
      assert.is(new RegExp(`"${k}":([^,]+)`).exec(ls[i])![1], new RegExp(`"${k}":([^,]+)`).exec(ev)![1], `${k} of ${ls[i]}`);
    }
  }
});

test("numbers at every digit-count boundary: correlation, External id (u64), durations, graph node ids", async () => {
  const corrs = [1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999, 100000, 9999999, 10000000, 99999999, 100000000,
    999999999, 1000000000, 4294967295];
  const exts = [0n, 9n, 10n, 9999n, 10000n, 4294967295n, 4294967296n, 9999999999n, 10000000000n, 10000000001n,
    99999999999999n, 12345678901234567890n, 18446744073709551615n];
  const durs = [0n, 1n, 999n, 1000n, 9_999_999n, 10_000_000n, 4_294_967_295n, 4_294_967_296n, 9_876_543_210n];
  const recs: Uint8Array[] = [];
  corrs.forEach((c, i) => {
    const ext = exts[i % exts.length];
    const dur = durs[i % durs.length];
    recs.push(C.externalRecord(L, 3, ext, c));
    recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: G + 1000n * BigInt(i), end: G + 1000n * BigInt(i) + dur, processId: PID, threadId: TID, correlationId: c }));
    recs.push(C.kernelRecord(L, {
      start: G + 5_000_000n, end: G + 5_000_000n + dur, deviceId: 0, contextId: 1, streamId: 7, correlationId: c, namePtr: 0n,
      graphId: c, graphNodeId: exts[(i + 3) % exts.length], channelID: c, channelType: 1,
    }));
  });
  const { text } = await toChrome(dump((w) => w.activity(C.concat(recs))));
  corrs.forEach((c, i) => {
    const ext = exts[i % exts.length];
    const dur = durs[i % durs.length];
    const api = `"dur":${us(dur)},"args":{"External id":${ext},"cbid":211,"correlation":${c}}}`;
    assert.ok(text.includes(api), api);
    const k = `"dur":${us(dur)},"args":{"External id":${ext},"queued":0,"device":0,"context":1,"stream":7,"correlation":${c},`;
    assert.ok(text.includes(k), k);
    const tail = `"graph id":${c},"graph node id":${exts[(i + 3) % exts.length]},"channel":${c},"channel_type":1}}`;
    assert.ok(text.includes(tail), tail);
    assert.ok(text.includes(`{"ph":"f","id":${c},`), `flow ${c}`);
  });
});

test("ids from the recent-id tables: counting up across digit counts, down, colliding slots, around 2^32", async () => {
  // Correlation ids: counting up (each one's text made from the one before, except after a 9), down, 256 apart (the
  // same table slot), up to 2^32 - 1, then 0. External ids: up across digit counts and across 2^32 (the u64 path).
  const corrs: number[] = [];
  for (let c = 1; c <= 1200; c++) corrs.push(c);
  for (let c = 99990; c <= 100110; c++) corrs.push(c);
  for (let c = 5000; c >= 4900; c--) corrs.push(c);
  for (let k = 0; k < 60; k++) corrs.push(300005 + 256 * k);
  for (let c = 4294967200; c <= 4294967295; c++) corrs.push(c);
  // Then 0 right after 2^32 - 1 (the id before 0 wraps), as an external id too.
  corrs.push(0);
  const n = corrs.length;
  const ext = (i: number) => (i === n - 2 ? 4294967295n : i === n - 1 ? 0n : i < 1100 ? BigInt(i) : 4294967296n - 300n + BigInt(i - 1100));
  const recs: Uint8Array[] = [];
  corrs.forEach((c, i) => {
    recs.push(C.externalRecord(L, 3, ext(i), c));
    recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: G + 1000n * BigInt(i), end: G + 1000n * BigInt(i) + 10n, processId: PID, threadId: TID, correlationId: c }));
    // The kernel of every other call later (its ids met again a few records on), of the others right after.
    if (i % 2 === 1) return;
    recs.push(C.kernelRecord(L, {
      start: G + 5_000_000n + BigInt(i), end: G + 5_000_001n + BigInt(i), deviceId: 0, contextId: 1, streamId: 7, correlationId: c,
      namePtr: 0n,
    }));
  });
  corrs.forEach((c, i) => {
    if (i % 2 === 0) return;
    recs.push(C.kernelRecord(L, {
      start: G + 5_000_000n + BigInt(i), end: G + 5_000_001n + BigInt(i), deviceId: 0, contextId: 1, streamId: 7, correlationId: c,
      namePtr: 0n,
    }));
  });
  const { text } = await toChrome(dump((w) => w.activity(C.concat(recs))));
  const ls = lines(text);
  // Each launch and kernel line by its correlation text, with the external id text it carries.
  const api = new Map<string, [string, number]>();
  const ker = new Map<string, [string, number]>();
  ls.forEach((l, i) => {
    // Correlation 0 is "none": no correlation arg (HTA reads a missing one as -1; it would join every 0).
    // Nor an External id through it (an external correlation record naming correlation 0 would tag every one).
    let m = /"args":\{(?:"External id":(\d+),)?"cbid":211(?:,"correlation":(\d+))?\}\},$/.exec(l);
    if (m) api.set(m[2] ?? "0", [m[1] ?? "none", i]);
    m = /"args":\{(?:"External id":(\d+),)?"queued":0,"device":0,"context":1,"stream":7(?:,"correlation":(\d+))?,/.exec(l);
    if (m) ker.set(m[2] ?? "0", [m[1] ?? "none", i]);
  });
  const count = (re: RegExp) => ls.filter((l) => re.test(l)).length;
  corrs.forEach((c, i) => {
    const e = c === 0 ? "none" : String(ext(i));
    const a = api.get(String(c));
    assert.ok(a && a[0] === e, `launch ${c}`);
    const k = ker.get(String(c));
    assert.ok(k && k[0] === e, `kernel ${c}`);
    if (c === 0) return; // correlation 0 is none: no arrow either (it would join every 0 to every other 0)
    assert.ok(ls[a![1] + 1].startsWith(`{"ph":"s","id":${c},`), `flow start ${c}`);
    assert.ok(ls[k![1] + 1].startsWith(`{"ph":"f","id":${c},`), `flow end ${c}`);
  });
  assert.is(count(/^\{"ph":"[sf]"/), 2 * (corrs.length - 1));
  assert.is(count(/"correlation":0[,}]/), 0, "no correlation 0 written");
});

test("kept texts: rows, streams and launch shapes follow their keys (devices, pids, shapes that collide)", async () => {
  const recs: Uint8Array[] = [];
  const shapes: Array<[number, number, number, number]> = [];
  const N = 700;
  for (let i = 0; i < N; i++) {
    // 700 shapes over a cache of 256 sets of two entries and two devices: every entry is replaced at least once.
    const dev = i % 2;
    const grid = 1 + ((i * 37) % 5000);
    const block = 32 << (i % 5);
    shapes.push([dev, grid, block, 16 + (i % 50)]);
    recs.push(C.kernelRecord(L, {
      start: G + BigInt(i) * 10_000n, end: G + BigInt(i) * 10_000n + 5000n, deviceId: dev, contextId: 1 + dev,
      streamId: 7 + (i % 70), correlationId: i + 1, namePtr: 0n, gridX: grid, gridY: 1 + (i & 1), blockX: block,
      registersPerThread: 16 + (i % 50), staticSharedMemory: (i % 3) * 1024, dynamicSharedMemory: (i % 4) * 2048,
    }));
    recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: G + BigInt(i), end: G + BigInt(i) + 10n, processId: PID + (i % 70), threadId: TID + i, correlationId: 100000 + i }));
  }
  // The same shapes again (cache hits), in reverse order.
  for (let j = 0; j < N; j++) {
    const i = N - 1 - j;
    const dev = i % 2;
    recs.push(C.kernelRecord(L, {
      start: G + 1_000_000_000n + BigInt(j) * 10_000n, end: G + 1_000_000_000n + BigInt(j) * 10_000n + 5000n, deviceId: dev,
      contextId: 1 + dev, streamId: 7 + (i % 70), correlationId: 1000 + j, namePtr: 0n, gridX: shapes[i][1], gridY: 1 + (i & 1),
      blockX: shapes[i][2], registersPerThread: shapes[i][3], staticSharedMemory: (i % 3) * 1024, dynamicSharedMemory: (i % 4) * 2048,
    }));
  }
  const { trace } = await toChrome(dump((w) => w.activity(C.concat(recs))));
  const sms = [132, 108];
  let kernels = 0;
  for (const e of trace.traceEvents) {
    if (e.ph === "X" && e.cat === "kernel") {
      kernels++;
      const a = e.args;
      const i = a.correlation <= N ? a.correlation - 1 : N - 1 - (a.correlation - 1000);
      const [dev, grid, block, regs] = shapes[i];
      assert.is(e.pid, dev);
      assert.is(e.tid, 7 + (i % 70));
      assert.is(a.device, dev);
      assert.is(a.context, 1 + dev);
      assert.is(a.stream, 7 + (i % 70));
      assert.is(a["registers per thread"], regs);
      assert.is(a["shared memory"], (i % 3) * 1024 + (i % 4) * 2048);
      assert.equal(a.grid, [grid, 1 + (i & 1), 1]);
      assert.equal(a.block, [block, 1, 1]);
      const blocks = grid * (1 + (i & 1));
      assert.is(a["blocks per SM"], Math.round((blocks / sms[dev]) * 1e6) / 1e6);
      assert.is(a["warps per SM"], Math.round(((blocks * Math.ceil(block / 32)) / sms[dev]) * 1e6) / 1e6);
    } else if (e.ph === "X" && e.cat === "cuda_runtime") {
      const i = e.args.correlation - 100000;
      assert.is(e.pid, PID + (i % 70));
      assert.is(e.tid, TID + i);
    }
  }
  assert.is(kernels, 2 * N);
});

test("kept graph and channel args: 300 tails over the 256-entry table, met twice", async () => {
  const tail = (i: number) => ({ graphId: i % 7 === 0 ? 0 : 1000 + i, graphNodeId: i % 5 === 0 ? 0n : (1n << 40n) + BigInt(i * 977), channelID: i % 300, channelType: 1 + (i % 3) });
  const recs: Uint8Array[] = [];
  const order = [...Array(300).keys(), ...Array.from({ length: 300 }, (_, j) => (j * 7) % 300)];
  order.forEach((i, n) => {
    recs.push(C.kernelRecord(L, {
      start: G + BigInt(n) * 1000n, end: G + BigInt(n) * 1000n + 10n, deviceId: 0, contextId: 1, streamId: 7, correlationId: n + 1,
      namePtr: 0n, ...tail(i),
    }));
  });
  const { trace } = await toChrome(dump((w) => w.activity(C.concat(recs))));
  const ks = trace.traceEvents.filter((e) => e.ph === "X" && e.cat === "kernel");
  assert.is(ks.length, order.length);
  for (const e of ks) {
    const t = tail(order[e.args.correlation - 1]);
    assert.is(e.args["graph id"], t.graphId);
    assert.is(BigInt(e.args["graph node id"]), t.graphNodeId);
    assert.is(e.args.channel, t.channelID);
    assert.is(e.args.channel_type, t.channelType);
  }
});

test("names escaped around 16-byte blocks: quotes, backslashes and control bytes at every position", async () => {
  const names: string[] = [];
  // 5000 and 70000 bytes: past the fast path's limit (written in pieces, the second across output windows).
  for (const len of [1, 15, 16, 17, 31, 32, 33, 100, 5000, 70000]) {
    for (const at of [0, 14, 15, 16, len - 1]) {
      if (at >= len) continue;
      for (const bad of ['"', "\\", "\n", "\t", "\r", "\u0001", "\u001f"]) {
        const s = "x".repeat(len).split("");
        s[at] = bad;
        if (len > 3) s[len - 3] = "\\";
        names.push(s.join(""));
      }
    }
  }
  const strings: Array<readonly [bigint, string]> = names.map((n, i) => [0x10000n + BigInt(i) * 0x20000n, n] as const);
  const recs = names.map((_, i) => C.kernelRecord(L, {
    start: G + BigInt(i) * 1000n, end: G + BigInt(i) * 1000n + 10n, deviceId: 0, contextId: 1, streamId: 7,
    correlationId: i + 1, namePtr: 0x10000n + BigInt(i) * 0x20000n,
  }));
  const { trace } = await toChrome(dump((w) => {
    w.strings(strings);
    w.activity(C.concat(recs));
  }));
  const got = trace.traceEvents.filter((e) => e.cat === "kernel").map((e) => e.name);
  assert.equal(got, names);
});

test("names escaped around 32-byte blocks and their tail: every length to 80 clean, one bad byte at every position", async () => {
  const names: string[] = [];
  // Clean names take whole 32-byte blocks and then the last 0–31 bytes in one test; one bad byte anywhere (in a
  // block or in the tail after clean blocks) sends the rest through the byte-exact path.
  for (let len = 1; len <= 80; len++) names.push(String.fromCharCode(...Array.from({ length: len }, (_, i) => 97 + (i % 26))));
  for (let len = 17; len <= 70; len++) {
    for (let at = 0; at < len; at++) {
      for (const bad of ['"', "\u0001"]) {
        const s = "y".repeat(len).split("");
        s[at] = bad;
        names.push(s.join(""));
      }
    }
  }
  const strings: Array<readonly [bigint, string]> = names.map((n, i) => [0x10000n + BigInt(i) * 0x100n, n] as const);
  const recs = names.map((_, i) => C.kernelRecord(L, {
    start: G + BigInt(i) * 1000n, end: G + BigInt(i) * 1000n + 10n, deviceId: 0, contextId: 1, streamId: 7,
    correlationId: i + 1, namePtr: 0x10000n + BigInt(i) * 0x100n,
  }));
  const { trace } = await toChrome(dump((w) => {
    w.strings(strings);
    w.activity(C.concat(recs));
  }));
  const got = trace.traceEvents.filter((e) => e.cat === "kernel").map((e) => e.name);
  assert.is(got.length, names.length);
  assert.equal(got, names);
});

test("kept openings: (category, name, row) triples over the cache, names at the length limit, scratch and replaced names", async () => {
  // 150 kernel names (some to escape, some multi-byte, lengths 300–339 around the longest opening kept) on 6 rows:
  // 900 triples over 256 sets of two entries, met twice in a different order, so entries are replaced and found again.
  const names: string[] = [];
  for (let i = 0; i < 150; i++) {
    if (i < 40) names.push(`k${i}_` + "z".repeat(300 + i - String(i).length - 2));
    else if (i % 7 === 0) names.push(`esc"${i}\\tab\t\u0001é€${i}`);
    else names.push(`kernel_${i}_${"ab".repeat(i % 30)}`);
  }
  const ptr = (i: number) => 0x7f0000000000n + BigInt(i) * 0x400n;
  const recs: Uint8Array[] = [];
  const want = new Map<number, { name: string; pid: number; tid: number }>();
  let corr = 1;
  let t = 0n;
  const kernel = (i: number, row: number, name: string) => {
    const c = corr++;
    t += 10_000n;
    recs.push(C.kernelRecord(L, {
      start: G + t, end: G + t + 500n, deviceId: row % 2, contextId: 1 + (row % 2), streamId: 7 + row, correlationId: c,
      namePtr: ptr(i),
    }));
    want.set(c, { name, pid: row % 2, tid: 7 + row });
    // A launch call with no name-table entry between kernels: its name is a scratch buffer, rewritten per call.
    if (c % 5 === 0) {
      const cb = 9000 + (c % 37);
      const a = corr++;
      recs.push(C.apiRecord(L, { kind: 5, cbid: cb, start: G + t + 1n, end: G + t + 2n, processId: PID, threadId: TID + (c % 3), correlationId: a }));
      want.set(a, { name: `cuda_runtime_cbid_${cb}`, pid: PID, tid: TID + (c % 3) });
    }
  };
  for (let i = 0; i < 150; i++) for (let row = 0; row < 6; row++) kernel(i, row, names[i]);
  for (let row = 5; row >= 0; row--) for (let i = 149; i >= 0; i -= 2) kernel(i, row, names[i]);
  const first = C.concat(recs.splice(0));
  // The same pointers with new bytes in a later strings chunk: the kernels after it carry the new names.
  const renamed = names.map((n, i) => (i % 3 === 0 ? `renamed_${i}_${n.slice(0, 20)}` : n));
  for (let i = 0; i < 150; i += 1) kernel(i, i % 6, renamed[i]);
  const second = C.concat(recs.splice(0));
  const { text, trace } = await toChrome(dump((w) => {
    w.strings(names.map((n, i) => [ptr(i), n] as const));
    w.activity(first);
    w.strings(renamed.map((n, i) => [ptr(i), n] as const).filter((_, i) => i % 3 === 0));
    w.activity(second);
  }));
  let seen = 0;
  for (const e of trace.traceEvents) {
    if (e.ph !== "X") continue;
    const w = want.get(e.args.correlation)!;
    assert.ok(w, `event ${e.args.correlation}`);
    assert.is(e.name, w.name, `name of ${e.args.correlation}`);
    assert.is(e.pid, w.pid);
    assert.is(e.tid, w.tid);
    seen++;
  }
  assert.is(seen, want.size);
  // Every flow event repeats its own event's pid, tid and ts (its row text comes from the kept opening).
  const ls = lines(text);
  for (let i = 1; i < ls.length; i++) {
    if (!/"ph":"[sf]"/.test(ls[i])) continue;
    for (const k of ["pid", "tid", "ts"]) {
      assert.is(new RegExp(`"${k}":([^,]+)`).exec(ls[i])![1], new RegExp(`"${k}":([^,]+)`).exec(ls[i - 1])![1], `${k} of ${ls[i]}`);
    }
  }
});

test("graph launches: the flow event carries the graph's own pid, tid and ts", async () => {
  const recs = [
    C.apiRecord(L, { kind: 5, cbid: 211, start: G + 1000n, end: G + 2000n, processId: PID, threadId: TID, correlationId: 1 }),
    C.kernelRecord(L, { start: G + 5000n, end: G + 6000n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 1, namePtr: 0n }),
    C.apiRecord(L, { kind: 5, cbid: 311, start: G + 3000n, end: G + 4000n, processId: PID, threadId: TID, correlationId: 2 }),
    C.graphTraceRecord(L, { correlationId: 2, start: G + 7123n, end: G + 9000n, deviceId: 0, graphId: 5, contextId: 1, streamId: 9 }),
  ];
  const { trace } = await toChrome(dump((w) => w.activity(C.concat(recs))));
  const g = trace.traceEvents.find((e) => e.cat === "cuda_graph")!;
  assert.is(g.name, "CUDA Graph 5");
  assert.is(g.tid, 9);
  const f = trace.traceEvents.find((e) => e.ph === "f" && e.id === 2)!;
  assert.ok(f, "flow end of the graph launch");
  assert.is(f.pid, g.pid);
  assert.is(f.tid, 9);
  assert.is(f.ts, g.ts);
});

test.run();
