import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { toChrome, events } from "../helpers/convert.js";
import { cudaWriter } from "../helpers/cuda_writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { sampleDump, T0, PID, TID } from "../helpers/sample_dump.js";
import { craftedDump, kernel, H100 } from "../helpers/crafted_dump.js";
import { apiRecord as rocmApi, dumpWith as rocmDumpWith, kernel as rocmKernel } from "../helpers/rocm_records.js";
import { metadata, synBuffer, synDump, tracePayload } from "../helpers/synapse_records.js";
import { CHUNK_HEADER_SIZE, PREAMBLE_SIZE } from "../../src/format/container.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";

const GRID = 3944619n * 1000000000n;
/** The bundled H100 sample (recorded 51.9 days into Kineto's 3-month period; CUPTI overhead records; pid 654). */
const H100_SAMPLE = fileURLToPath(new URL("../../samples/h100_torch_train_nvtx.rawtrace", import.meta.url));
/** Kineto's µs text of an absolute ns time for a given base. */
function us(ns: bigint, base: bigint): string {
  const r = ns - base;
  return `${r / 1000n}.${(r % 1000n).toString().padStart(3, "0")}`;
}

test("header: schema, devices, versions, distributedInfo, base time on half of Kineto's 3-month grid (ts under 2^42 µs)", async () => {
  const { trace } = await toChrome(sampleDump());
  assert.is(trace.schemaVersion, 1);
  assert.equal(trace.distributedInfo, { rank: 3, world_size: 8 });
  assert.is(trace.cupti_version, 130001);
  assert.is(trace.cuda_runtime_version, 12080);
  assert.is(trace.host_name, "gpu-node-1");
  assert.is(trace.displayTimeUnit, "ms");
  const first = T0 + 1000n;
  assert.is(BigInt(trace.baseTimeNanoseconds), first - (first % GRID));
  assert.is(trace.deviceProperties.length, 1);
  const d = trace.deviceProperties[0];
  assert.is(d.name, "NVIDIA H100 80GB HBM3");
  assert.is(d.numSms, 132);
  assert.is(d.computeMajor, 9);
  assert.is(d.totalGlobalMem, 80 * 2 ** 30);
  assert.is(d.sharedMemPerBlockOptin, 232448);
  assert.is(trace.traceName, "test.rawtrace");
});

test("traceEvents opens with the dump's own process_name (HTA reads a link to index 0 as none), named once", async () => {
  const samples = ["h100_torch_train_nvtx", "mi250_minitoy_rocprof", "xpu_train_pti", "gaudi2_mlp_synapse", "alexnet_a100_rank0"];
  for (const name of samples) {
    const bytes = readFileSync(fileURLToPath(new URL(`../../samples/${name}.rawtrace`, import.meta.url)));
    const { trace, result } = await toChrome(new Uint8Array(bytes));
    const lead = trace.traceEvents[0];
    assert.equal([lead.ph, lead.name, lead.pid], ["M", "process_name", result.info.pid], name);
    const named = trace.traceEvents.filter((e: { ph: string; name: string }) => e.ph === "M" && e.name === "process_name");
    assert.is(new Set(named.map((e: { pid: number }) => e.pid)).size, named.length, `${name}: one process_name per pid`);
    // The lead's pid is the one the host events use, with the same name the end gave it before.
    assert.ok(trace.traceEvents.some((e: { ph: string; pid: number }) => e.ph === "X" && e.pid === lead.pid), name);
  }
});

test("a HEADER that failed its checksum (its pid may be the damaged byte): the lead is the first process with API calls, named once", async () => {
  const b = new Uint8Array(readFileSync(fileURLToPath(new URL("../../samples/alexnet_a100_rank0.rawtrace", import.meta.url))));
  const pid = new DataView(b.buffer).getUint32(PREAMBLE_SIZE + CHUNK_HEADER_SIZE + 20, true);
  b[PREAMBLE_SIZE + CHUNK_HEADER_SIZE + 21] ^= 0x01; // a bit of the HEADER's pid
  const { trace, result } = await toChrome(b);
  assert.ok(result.info.warnings.some((w) => w.code === "HEADER_DAMAGED"));
  // Before: no lead, and the first event took HTA's index 0 (a launch there loses its link: "no link").
  assert.equal([trace.traceEvents[0].ph, trace.traceEvents[0].name, trace.traceEvents[0].pid], ["M", "process_name", pid]);
  assert.is(trace.traceEvents.filter((e: { ph: string; name: string; pid: number }) => e.ph === "M" && e.name === "process_name" && e.pid === pid).length, 1);
  const xp = new Set(trace.traceEvents.filter((e: { ph: string }) => e.ph === "X").map((e: { pid: number }) => e.pid));
  for (const e of trace.traceEvents.filter((e: { ph: string; name: string }) => e.ph === "M" && e.name === "process_name")) {
    assert.ok(xp.has(e.pid), `process_name of pid ${e.pid}, which has events`);
  }
});

test("API calls only from another process than the HEADER's: the lead is that process, and the HEADER's gets no process_name", async () => {
  const { trace } = await toChrome(sampleDump({ headerPid: PID + 100 }));
  const names = trace.traceEvents.filter((e: { ph: string; name: string }) => e.ph === "M" && e.name === "process_name");
  // Before: no lead (the trace opened with an event, at HTA's index 0).
  assert.equal([trace.traceEvents[0].ph, trace.traceEvents[0].name, trace.traceEvents[0].pid], ["M", "process_name", PID]);
  assert.is(names.filter((e: { pid: number }) => e.pid === PID).length, 1);
  assert.not.ok(names.some((e: { pid: number }) => e.pid === PID + 100), "no process without events");
});

test("a CUDA dump without API calls (kernels only): no lead, no process without events", async () => {
  const { trace } = await toChrome(craftedDump([H100], [kernel(1000n, 1), kernel(2000n, 2)]));
  const host = trace.traceEvents.filter((e: { ph: string; name: string; pid: number }) => e.ph === "M" && e.name === "process_name" && e.pid === PID);
  // Before: the HEADER's process led, named with no event of its own (an empty process in Perfetto).
  assert.is(host.length, 0);
  assert.is(trace.traceEvents.filter((e: { ph: string }) => e.ph === "X").length, 2);
});

test("a process whose only API calls are hidden by default (cudaGetDevice) or dropped (bad times) does not lead: the first process with a shown call does", async () => {
  // The HEADER's pid (PID) makes no call; 777 only cudaGetDevice (left out of the output), 888 launches a kernel.
  const recs = [
    C.apiRecord("cuda13", { kind: 5, cbid: 17, start: T0 + 10n, end: T0 + 20n, processId: 777, threadId: 1, correlationId: 1 }),
    C.apiRecord("cuda13", { kind: 5, cbid: 211, start: T0 + 500n, end: T0 + 600n, processId: 888, threadId: 2, correlationId: 2 }),
    kernel(1000n, 2),
  ];
  const { trace } = await toChrome(craftedDump([H100], recs));
  // Before: the lead named 777, a process with no event.
  assert.equal([trace.traceEvents[0].ph, trace.traceEvents[0].name, trace.traceEvents[0].pid], ["M", "process_name", 888]);
  const withEvents = new Set(trace.traceEvents.filter((e: { ph: string }) => e.ph === "X").map((e: { pid: number }) => e.pid));
  for (const e of trace.traceEvents.filter((e: { ph: string; name: string }) => e.ph === "M" && e.name === "process_name")) {
    assert.ok(withEvents.has(e.pid), `process_name of pid ${e.pid}, which has events`);
  }
  // With --all-api the hidden call is shown, and its process leads.
  const all = await toChrome(craftedDump([H100], recs), { allApi: true });
  assert.is(all.trace.traceEvents[0].pid, 777);
  // A shown call dropped for its times (start 0: BAD_TIMESTAMP) makes no event either (before: 777 led).
  const dropped = await toChrome(craftedDump([H100], [
    C.apiRecord("cuda13", { kind: 5, cbid: 211, start: 0n, end: 0n, processId: 777, threadId: 1, correlationId: 1 }), ...recs.slice(1),
  ]));
  assert.ok(dropped.trace.rawtrace.warnings.some((w: { code: string }) => w.code === "BAD_TIMESTAMP"));
  assert.is(dropped.trace.traceEvents[0].pid, 888);
  // Nor does one whose times lie outside the run's window (10 h after it: BAD_TIMESTAMP, known only once pass 1 has
  // read every record; before: 777 led, with no event).
  const H = 3_600_000_000_000n;
  const late = await toChrome(craftedDump([H100], [
    C.apiRecord("cuda13", { kind: 5, cbid: 211, start: T0 + 10n * H, end: T0 + 10n * H + 10n, processId: 777, threadId: 1, correlationId: 1 }), ...recs.slice(1),
  ]));
  assert.ok(late.trace.rawtrace.warnings.some((w: { code: string }) => w.code === "BAD_TIMESTAMP"));
  assert.not.ok(late.trace.traceEvents.some((e: { pid: number; ph: string }) => e.pid === 777 && e.ph === "X"));
  assert.is(late.trace.traceEvents[0].pid, 888);
});

test("a ROCm or Gaudi dump without host events (kernels, device entries only): no lead, no process without events", async () => {
  const rocm = await toChrome(rocmDumpWith([[rocmKernel(1, 1000, 2000), rocmKernel(2, 3000, 4000)]]));
  const hpu = await toChrome(synDump([tracePayload(synBuffer([...metadata(), { type: "X", ts: 100n, dur: 10n, engineType: 8, engineIndex: 1, name: "k" }]))]));
  for (const [what, { trace, result }] of [["ROCm", rocm], ["Gaudi", hpu]] as const) {
    const host = trace.traceEvents.filter((e: { ph: string; name: string; pid: number }) => e.ph === "M" && e.name === "process_name" && e.pid === result.info.pid);
    // Before: the HEADER's process led, named with no event of its own.
    assert.is(host.length, 0, what);
    assert.ok(trace.traceEvents.some((e: { ph: string }) => e.ph === "X"), what);
  }
  // With a host call, the HEADER's process leads again.
  const withCall = await toChrome(rocmDumpWith([[rocmApi("HIP_RUNTIME_API", 3, 1, 500, 900), rocmKernel(1, 1000, 2000)]]));
  assert.equal([withCall.trace.traceEvents[0].name, withCall.trace.traceEvents[0].pid], ["process_name", withCall.result.info.pid]);
  // Not with a host call outside the run's window (10 h after it, dropped: BAD_TIMESTAMP; before: it led, eventless).
  const H = 36e11;
  const late = await toChrome(rocmDumpWith([[rocmApi("HIP_RUNTIME_API", 3, 1, 10 * H + 500, 10 * H + 900), rocmKernel(1, 1000, 2000)]]));
  assert.ok(late.trace.rawtrace.warnings.some((w: { code: string }) => w.code === "BAD_TIMESTAMP"));
  assert.is(late.trace.traceEvents.filter((e: { ph: string; name: string; pid: number }) => e.ph === "M" && e.name === "process_name" && e.pid === late.result.info.pid).length, 0);
});

test("a source's host warnings with numbers that are not whole numbers ≥ 0 are not listed (no RangeError)", async () => {
  const bytes = sampleDump();
  for (const w of [{ offset: 1.5, detail: 2, count: 1 }, { offset: 1, detail: Number.NaN, count: 1 }, { offset: 2 ** 64, detail: 1, count: 1 }, { offset: 1, detail: 1, count: 0 }]) {
    const src = { ...memorySource(bytes, "t.rawtrace"), hostWarnings: () => [{ code: "STILL_WRITING" as const, message: "m", ...w }] };
    const parts: Buffer[] = [];
    await (await createEngine()).convert(src, (b) => parts.push(Buffer.from(b)));
    const t = JSON.parse(Buffer.concat(parts).toString("utf8"));
    assert.not.ok(t.rawtrace.warnings.some((x: { code: string }) => x.code === "STILL_WRITING"), JSON.stringify(w));
  }
  const src = { ...memorySource(bytes, "t.rawtrace"), hostWarnings: () => [{ code: "STILL_WRITING" as const, message: "m", offset: 10, detail: 20, count: 2 }] };
  const parts: Buffer[] = [];
  await (await createEngine()).convert(src, (b) => parts.push(Buffer.from(b)));
  const got = JSON.parse(Buffer.concat(parts).toString("utf8")).rawtrace.warnings.find((x: { code: string }) => x.code === "STILL_WRITING");
  assert.equal([got.count, got.offset, got.detail], [2, 10, 20]);
});

test("timestamps are µs with exactly three decimals, exact to the ns beyond 2^53", async () => {
  const { text, trace } = await toChrome(sampleDump());
  const base = BigInt(trace.baseTimeNanoseconds);
  // Kernel: start T0+7000, dur 2501 ns.
  assert.ok(text.includes(`"ts":${us(T0 + 7000n, base)},"dur":2.501,`), "kernel ts/dur text");
  for (const e of trace.traceEvents) {
    if (e.ph !== "X") continue;
    const m = text.match(/"ts":(\d+\.\d{3}),"dur":(\d+\.\d{3})/);
    assert.ok(m, "every X event has 3-decimal ts and dur");
  }
});

test("kernel: Kineto args, demangled name, flow end", async () => {
  const { trace } = await toChrome(sampleDump());
  const k = events(trace, "kernel");
  assert.is(k.length, 2);
  const a = k[0];
  assert.is(
    a.name,
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
  );
  assert.is(a.pid, 0);
  assert.is(a.tid, 7);
  assert.is(a.dur, 2.501);
  assert.equal(Object.keys(a.args).slice(0, 8), [
    "External id", "queued", "device", "context", "stream", "correlation", "registers per thread", "shared memory",
  ]);
  assert.is(a.args["External id"], 77);
  assert.is(a.args.correlation, 5);
  assert.is(a.args["registers per thread"], 16);
  assert.is(a.args["shared memory"], 3072);
  assert.equal(a.args.grid, [130, 2, 1]);
  assert.equal(a.args.block, [128, 1, 1]);
  assert.is(a.args["blocks per SM"], 1.969697);
  assert.is(a.args["warps per SM"], 7.878788);
  assert.is(a.args["graph id"], 3);
  assert.is(a.args["graph node id"], 9);
  assert.is(a.args.channel, 4);
  assert.is(a.args.channel_type, 1);
  const f = trace.traceEvents.filter((e) => e.ph === "f" && e.id === 5);
  assert.is(f.length, 1);
  assert.is(f[0].bp, "e");
  assert.is(f[0].ts, a.ts);
  assert.is(f[0].pid, 0);
  assert.is(f[0].tid, 7);
});

test("memcpy and memset: Kineto names, bytes, bandwidth", async () => {
  const { trace } = await toChrome(sampleDump());
  const [m] = events(trace, "gpu_memcpy");
  assert.is(m.name, "Memcpy HtoD (Pinned -> Device)");
  assert.is(m.args.bytes, 4096);
  assert.is(m.args["memory bandwidth (GB/s)"], 2.048);
  assert.is(m.args.correlation, 8);
  const [s] = events(trace, "gpu_memset");
  assert.is(s.name, "Memset (Device)");
  assert.is(s.tid, 9);
  assert.is(s.args.bytes, 256);
  assert.is(s.args["memory bandwidth (GB/s)"], 2.56);
});

test("runtime calls: Kineto's blocklist hidden by default, flows start at launches and copies", async () => {
  const { trace, result } = await toChrome(sampleDump());
  const rt = events(trace, "cuda_runtime");
  assert.equal(rt.map((e) => e.name), ["cudaLaunchKernel", "cudaMemcpyAsync"]);
  assert.is(events(trace, "cuda_driver").length, 0);
  assert.is(result.apiCallsHidden, 2);
  assert.is(rt[0].pid, PID);
  assert.is(rt[0].tid, TID);
  assert.equal(rt[0].args, { "External id": 77, cbid: 211, correlation: 5 });
  const s = trace.traceEvents.filter((e) => e.ph === "s");
  assert.equal(s.map((e) => e.id).sort(), [5, 8]);
  assert.ok(s.every((e) => e.cat === "ac2g" && e.name === "ac2g" && e.bp === undefined));
  const all = await toChrome(sampleDump(), { allApi: true });
  assert.equal(events(all.trace, "cuda_runtime").map((e) => e.name), ["cudaLaunchKernel", "cudaGetDevice", "cudaMemcpyAsync"]);
  assert.equal(events(all.trace, "cuda_driver").map((e) => e.name), ["cuCtxGetCurrent"]);
});

test("syncs: stream sync on the stream's sync row, context sync on the context row", async () => {
  const { trace } = await toChrome(sampleDump());
  const s = events(trace, "cuda_sync");
  assert.is(s.length, 2);
  assert.is(s[0].name, "Stream Sync");
  assert.is(s[0].tid, 1000007);
  assert.is(s[0].args.stream, 7);
  assert.is(s[0].args.cuda_sync_kind, "Stream Sync");
  assert.is(s[1].name, "Context Sync");
  assert.is(s[1].args.stream, -1);
  const names = trace.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name" && e.pid === 0);
  assert.ok(names.some((e) => e.tid === 1000007 && e.args.name === "stream 7 (sync)"));
  assert.ok(names.some((e) => e.tid === 7 && e.args.name === "stream 7"));
  // Sorted with its stream, as Kineto sorts its sync rows (sort_index = the stream id; before: after every stream).
  const sorts = trace.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_sort_index" && e.pid === 0);
  assert.is(sorts.find((e) => e.tid === 1000007)?.args.sort_index, 7);
  assert.is(sorts.find((e) => e.tid === 7)?.args.sort_index, 7);
});

test("hostile names are escaped and invalid UTF-8 replaced: the JSON stays valid", async () => {
  const { trace, text } = await toChrome(sampleDump());
  const k = events(trace, "kernel")[1];
  assert.is(k.name, 'b"\\\n\t\u0001\ufffd\u007fz');
  assert.ok(text.includes('"name":"b\\"\\\\\\n\\t\\u0001\ufffd\u007fz"'));
});

test("NVTX ranges become nested user_annotation slices with their domain", async () => {
  const { trace } = await toChrome(sampleDump());
  const r = events(trace, "user_annotation");
  assert.equal(r.map((e) => e.name).sort(), ["forward", "step"]);
  const step = r.find((e) => e.name === "step")!;
  const fwd = r.find((e) => e.name === "forward")!;
  assert.is(step.dur, 19.5);
  assert.is(fwd.dur, 5.4);
  assert.equal(fwd.args, { domain: "my_domain" });
  assert.ok(fwd.ts >= step.ts && fwd.ts + fwd.dur <= step.ts + step.dur, "nested");
  assert.is(step.pid, PID);
  assert.is(step.tid, TID);
});

test("NVTX ranges are projected onto the streams their launches ran on (gpu_user_annotation)", async () => {
  const { trace } = await toChrome(sampleDump());
  const g = events(trace, "gpu_user_annotation");
  const base = BigInt(trace.baseTimeNanoseconds);
  // "forward" holds cudaLaunchKernel (kernel 7000..9501) and cudaMemcpyAsync (copy 10000..12000) on stream 7;
  // "step" encloses "forward", so it spans the same work. Kineto widens each span by 1 ns on both sides.
  for (const name of ["forward", "step"]) {
    const e = g.find((x) => x.name === name)!;
    assert.ok(e, name);
    assert.is(e.pid, 0);
    assert.is(e.tid, 7);
    assert.is(e.ts, Number(us(T0 + 7000n - 1n, base)));
    assert.is(e.dur, 5.002);
  }
  assert.is(g.length, 2, "work without a launch call inside a range is not projected");
});

test("process and thread metadata as Kineto writes it", async () => {
  const { trace } = await toChrome(sampleDump());
  const m = trace.traceEvents.filter((e) => e.ph === "M");
  const find = (name: string, pid: number, tid = 0) => m.find((e) => e.name === name && e.pid === pid && e.tid === tid);
  assert.is(find("process_name", PID)!.args.name, "python3");
  assert.is(find("process_labels", PID)!.args.labels, "CPU");
  assert.is(find("process_labels", 0)!.args.labels, "GPU 0");
  assert.is(find("process_sort_index", 0)!.args.sort_index, 5000000);
  assert.is(find("thread_name", PID, TID)!.args.name, `thread ${TID} (pt_main_thread)`);
  const last = trace.traceEvents[trace.traceEvents.length - 1];
  assert.is(last.name, "Record Window End");
});

test("CUDA 11.8 and 12.9 layouts (Kernel8/9, Memcpy5/6, Sync v1…) decode to the same events as CUDA 13", async () => {
  const a = await toChrome(sampleDump({ layout: "cuda13" }));
  for (const layout of ["cuda11", "cuda12"] as const) {
    const b = await toChrome(sampleDump({ layout }));
    assert.equal(b.trace.traceEvents, a.trace.traceEvents, layout);
  }
  assert.is((await toChrome(sampleDump({ layout: "cuda11" }))).trace.cupti_version, 18);
});

test("a dump without KIND_SIZES is walked with the built-in sizes of its CUPTI version", async () => {
  for (const layout of ["cuda11", "cuda12", "cuda13"] as const) {
    const a = await toChrome(sampleDump({ layout }));
    const b = await toChrome(sampleDump({ layout, noKindSizes: true }));
    assert.equal(b.trace.traceEvents, a.trace.traceEvents, layout);
    // The same warnings, at other offsets: their chunks sit earlier without the KIND_SIZES chunk.
    const noOffset = (ws: Array<{ offset: number }>) => ws.map(({ offset: _, ...w }) => w);
    assert.equal(noOffset(b.trace.rawtrace.warnings), noOffset(a.trace.rawtrace.warnings), layout);
  }
});

test("clock anchors: vendor clock offset from CLOCK_REALTIME is applied", async () => {
  const off = 3_600_000_000_123n;
  const a = await toChrome(sampleDump());
  const b = await toChrome(sampleDump({ clockOffset: off }));
  const ka = events(a.trace, "kernel")[0];
  const kb = events(b.trace, "kernel")[0];
  const absA = BigInt(a.trace.baseTimeNanoseconds) + BigInt(Math.round(ka.ts * 1000));
  const absB = BigInt(b.trace.baseTimeNanoseconds) + BigInt(Math.round(kb.ts * 1000));
  // Doubles hold µs with ns precision here (values < 2^53 / 1000 relative to the base).
  assert.is(absB - absA, off);
});

test("times past 2^63 ns (a damaged clock anchor, found by the fuzzer): first/last/base are read unsigned, as the core keeps them", async () => {
  // The anchor puts the events around 2^63 ns (year 2262): the core's times are u64; JS read them as signed i64, so
  // lastNs came back negative, and a span computed from first and last was −1.8e19 ns.
  const off = (1n << 63n) - T0 - 5000n;
  const { trace, result } = await toChrome(sampleDump({ clockOffset: off }));
  const { firstNs, lastNs, collectorStartNs } = result.info;
  assert.ok(firstNs < 1n << 63n && lastNs > 1n << 63n, `${firstNs} … ${lastNs}`);
  assert.ok(lastNs - firstNs > 0n && lastNs - firstNs < 1_000_000n, `span ${lastNs - firstNs} ns`);
  assert.is(collectorStartNs, T0 + off);
  assert.is(result.baseTimeNs, BigInt(trace.baseTimeNanoseconds));
  assert.ok(result.baseTimeNs > 0n && result.baseTimeNs <= firstNs);
  // Every event inside the kept span, as the fuzz oracle checks.
  const from = Number(firstNs - result.baseTimeNs) / 1000;
  const span = Number(lastNs - firstNs) / 1000;
  for (const e of trace.traceEvents) {
    if (e.ph === "X") assert.ok(e.ts >= from - 0.002 && e.ts + e.dur <= from + span + 0.003, `${e.name} ${e.ts} ${e.dur}`);
  }
});

test("every ts reads back to its exact ns the way Perfetto reads it (double of µs, rounded to ns): the base keeps ts under 2^42 µs", async () => {
  // The H100 sample was recorded 51.9 days into Kineto's 3-month period: on Kineto's base 763 of its ts read 1 ns off
  // (and child slices ending where their parent ends spilled to an overlap track).
  const bytes = readFileSync(H100_SAMPLE);
  const { text, trace } = await toChrome(bytes);
  const base = BigInt(trace.baseTimeNanoseconds);
  let n = 0;
  let maxUs = 0;
  const off: string[] = [];
  for (const m of text.matchAll(/"ts":(\d+)\.(\d{3})/g)) {
    n++;
    maxUs = Math.max(maxUs, Number(m[1]));
    const exact = BigInt(m[1]) * 1000n + BigInt(m[2]);
    // Perfetto's JSON number parser: double(integer part) + fraction, then llround(v * 1000).
    const read = BigInt(Math.round((Number(m[1]) + Number(`0.${m[2]}`)) * 1000));
    if (read !== exact && off.length < 5) off.push(`${m[1]}.${m[2]} → ${read} ns`);
  }
  assert.ok(n > 3000, `${n} timestamps`);
  assert.equal(off, [], `ts read 1 ns off (base ${base})`);
  assert.ok(maxUs < 2 ** 42, `largest ts ${maxUs} µs`);
});

test("Perfetto's pid rule (uint32, anything else 0) leaves every process its own name: overhead is not on GPU 0's pid", async () => {
  // Kineto's pid -1 for CUPTI overhead reads as 0 in Perfetto: GPU 0 was named "CUPTI Overhead" and sorted last.
  const bytes = readFileSync(H100_SAMPLE);
  const { trace } = await toChrome(bytes);
  const perfettoPid = (p: unknown) => (typeof p === "number" && p >= 0 && p <= 0xffffffff ? p : 0);
  const names = new Map<number, string[]>();
  for (const e of trace.traceEvents) {
    if (e.ph === "M" && e.name === "process_name") names.set(perfettoPid(e.pid), [...(names.get(perfettoPid(e.pid)) ?? []), e.args.name]);
  }
  assert.ok(trace.traceEvents.some((e) => e.cat === "overhead"), "the sample has overhead records");
  for (const [pid, n] of names) assert.is(n.length, 1, `pid ${pid}: ${n.join(", ")}`);
  assert.equal(names.get(0), ["python3"], "GPU 0's process keeps the program's name, as Kineto's (labels GPU 0)");
  assert.equal(names.get(2147483647), ["CUPTI Overhead"]);
});

test("a program running as pid 1 with two GPUs (a container): GPU pids move past every Linux pid, one process per pid", async () => {
  // Kineto's rule (GPU pid = ordinal) put GPU 1's streams in the program's own process 1 (two names, two sort indexes).
  const w = cudaWriter("cuda13", T0, 1);
  w.devices([0, 1].map((id) => ({
    id, multiprocessors: 132, globalMemoryBytes: 80n << 30n, memoryBandwidth: 3350000000000n, coreClockKhz: 1980000,
    ccMajor: 9, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536,
    regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 233472,
    sharedMemPerBlockOptin: 232448, maxBlocksPerMultiprocessor: 32, name: `NVIDIA H100 ${id}`,
  })));
  const recs = [0, 1].flatMap((dev) => [
    C.apiRecord("cuda13", { kind: 5, cbid: 211, start: T0 + 1000n + BigInt(dev) * 10_000n, end: T0 + 2000n + BigInt(dev) * 10_000n, processId: 1, threadId: 1, correlationId: 10 + dev }),
    C.kernelRecord("cuda13", { start: T0 + 3000n + BigInt(dev) * 10_000n, end: T0 + 4000n + BigInt(dev) * 10_000n, deviceId: dev, contextId: 1, streamId: 7, correlationId: 10 + dev, namePtr: 0n }),
  ]);
  w.activity(C.concat(recs));
  w.end();
  const { trace } = await toChrome(w.bytes());
  const labels = new Map<number, string[]>();
  for (const e of trace.traceEvents) {
    if (e.ph === "M" && e.name === "process_labels") labels.set(e.pid, [...(labels.get(e.pid) ?? []), e.args.labels]);
  }
  assert.equal([...labels].sort((a, b) => a[0] - b[0]), [[1, ["CPU"]], [5000000, ["GPU 0"]], [5000001, ["GPU 1"]]]);
  assert.equal(events(trace, "kernel").map((e) => [e.pid, e.tid, e.args.device]), [[5000000, 7, 0], [5000001, 7, 1]]);
  // A program whose pid is no ordinal keeps Kineto's GPU pids (the sample: pid 654, GPU 0 on pid 0).
  const sample = await toChrome(readFileSync(H100_SAMPLE));
  assert.ok(events(sample.trace, "kernel").every((e) => e.pid === 0));
});

test("correlation 0 is no correlation: not written (HTA would join every 0 to every other 0)", async () => {
  // Gaudi: Synapse calls and the recipe-0 copies no launch is linked to; XPU: collectives.
  for (const [sample, unlinked] of [["gaudi2_mlp_synapse", 16], ["xpu_train_pti", 3]] as const) {
    const bytes = readFileSync(fileURLToPath(new URL(`../../samples/${sample}.rawtrace`, import.meta.url)));
    const { text, trace } = await toChrome(bytes);
    assert.not.match(text, /"correlation":0[,}]/, sample);
    const without = trace.traceEvents.filter((e) => e.ph === "X" && e.args && !("correlation" in e.args) &&
      ["hpu_op", "gpu_memcpy", "gpu_memset", "kernel", "collective_comm"].includes(e.cat)).length;
    assert.is(without, unlinked, `${sample}: events without a correlation`);
  }
});

test("trailer reports drops and completeness", async () => {
  const { trace } = await toChrome(sampleDump());
  assert.is(trace.rawtrace.dropped_records, 7);
  assert.is(trace.rawtrace.complete, true);
  assert.equal(trace.rawtrace.warnings.map((w: any) => w.code), ["DROPPED_RECORDS"]);
  const open = await toChrome(sampleDump({ end: false }));
  assert.is(open.trace.rawtrace.complete, false);
  assert.ok(open.trace.rawtrace.warnings.some((w: any) => w.code === "NO_END"));
});

test.run();
