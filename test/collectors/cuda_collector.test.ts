/**
 * The CUDA collector (collectors/cuda) end to end, without a GPU: what it records and the dump it writes.
 *
 * Runs each scenario of the test program with the collector loaded the way a user would (CUDA_INJECTION64_PATH-style
 * InitializeInjection, LD_PRELOAD, NVTX_INJECTION64_PATH, or the explicit API) and converts the .rawtrace it wrote
 * with the real core. The program prints every event it made (JSON lines); the trace must hold exactly those, with
 * the same names, correlation ids and timestamps, from one thread or eight. Also checks the container itself (chunk
 * order, STRINGS before the ACTIVITY that needs them, KIND_SIZES = the real struct sizes, DROPPED reasons, LOG chunks),
 * the memory cap, CUPTI's own losses and the cost per buffer. Setup and helpers: cuda_harness.ts; the exit, signals
 * and stalled outputs: cuda_collector_exit.test.ts; settings, outputs and errors: cuda_collector_config.test.ts.
 *
 * Needs build/rawtrace.wasm (npm run build:wasm; scripts/test.sh builds it).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { readDumpChunks } from "../helpers/dump_chunks.js";
import { ChunkType, DropReason } from "../../src/format/container.js";
import {
  APP, TAGS, lib, dir, runSync, outPath, ok, one, convert, byCat, assertTimes, T, chunks, readKindSizes, readLog,
  cudaSuite,
} from "./cuda_harness.js";
import type { Tag, Run, Chunk } from "./cuda_harness.js";


/** CUPTI API version of each header set (cupti_version.h), as the fake reports it. */
const CUPTI_VERSION: Record<Tag, number> = { cu12: 28, cu13: 130001, cu135: 130500 };
/** sizeof of the structs the fake writes, per kind (the real CUDA 12.9 / 13.0U1 / 13.5 structs). */
const SIZES: Record<Tag, Record<number, number>> = {
  cu12: { 1: 96, 2: 88, 3: 208, 4: 40, 5: 40, 8: 184, 9: 32, 10: 208, 11: 32, 12: 56, 13: 32, 17: 56, 22: 96,
    36: 56, 37: 24, 38: 56, 39: 24, 48: 40 },
  cu13: { 1: 96, 2: 88, 3: 216, 4: 40, 5: 40, 8: 184, 9: 32, 10: 216, 11: 32, 12: 56, 13: 40, 17: 56, 22: 96,
    36: 56, 37: 24, 38: 56, 39: 24, 48: 40 },
  cu135: { 1: 112, 2: 104, 3: 248, 4: 40, 5: 40, 8: 192, 9: 40, 10: 248, 11: 32, 12: 56, 13: 40, 17: 56, 22: 96,
    36: 80, 37: 24, 38: 56, 39: 24, 48: 40 },
};

// ---- reading the container directly ----------------------------------------------------------------------------

function readStrings(p: Buffer): Array<[bigint, string]> {
  const n = p.readUInt32LE(0);
  const out: Array<[bigint, string]> = [];
  let o = 4;
  for (let i = 0; i < n; i++) {
    const ptr = p.readBigUInt64LE(o);
    const len = p.readUInt32LE(o + 8);
    out.push([ptr, p.subarray(o + 12, o + 12 + len).toString("utf8")]);
    o += 12 + len;
  }
  return out;
}

/** Sum of DROPPED counts per reason. */
function dropped(cs: Chunk[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const c of cs.filter((c) => c.type === T.DROPPED)) {
    const reason = c.p.readUInt32LE(8);
    out[reason] = (out[reason] ?? 0) + Number(c.p.readBigUInt64LE(0));
  }
  return out;
}

/**
 * Every pointer field the collector must resolve (kernel names, NVTX names and domains) appears in a STRINGS chunk
 * written before the ACTIVITY chunk holding the record. Returns the strings in force for each pointer, in order.
 */
function assertStringsBeforeActivity(cs: Chunk[]): Map<bigint, string[]> {
  const sizes = readKindSizes(cs.find((c) => c.type === T.KIND_SIZES)!.p);
  const known = new Map<bigint, string[]>();
  let checked = 0;
  for (const c of cs) {
    if (c.type === T.STRINGS) {
      for (const [ptr, s] of readStrings(c.p)) known.set(ptr, [...(known.get(ptr) ?? []), s]);
    } else if (c.type === T.ACTIVITY) {
      let o = 0;
      while (o + 4 <= c.p.length) {
        const kind = c.p.readUInt32LE(o);
        const size = sizes.get(kind);
        assert.ok(size, `record of kind ${kind} without a size in KIND_SIZES`);
        const ptrs: bigint[] = [];
        if ((kind === 3 || kind === 10) && size! >= 112) ptrs.push(c.p.readBigUInt64LE(o + 104));
        if (kind === 12 && size! >= 56) ptrs.push(c.p.readBigUInt64LE(o + 40), c.p.readBigUInt64LE(o + 48));
        if (kind === 11 && size! >= 32) ptrs.push(c.p.readBigUInt64LE(o + 24));
        for (const ptr of ptrs) {
          if (ptr === 0n) continue;
          assert.ok(known.has(ptr), `pointer 0x${ptr.toString(16)} (kind ${kind}, chunk ${c.seq}) used before any STRINGS`);
          checked++;
        }
        o += size!;
      }
      assert.is(o, c.p.length, `ACTIVITY chunk ${c.seq} is not a whole number of records`);
    }
  }
  assert.ok(checked > 0, "no pointer field checked");
  return known;
}

// ---- setup -----------------------------------------------------------------------------------------------------

cudaSuite(test);

test("the collector library exports only its entry points", () => {
  for (const tag of TAGS) {
    const syms = execFileSync("nm", ["-D", "--defined-only", lib(tag)], { encoding: "utf8" })
      .split("\n").map((l) => l.trim().split(/\s+/)[2]).filter(Boolean).sort();
    assert.equal(syms, ["InitializeInjection", "InitializeInjectionNvtx2", "rawtrace_flush", "rawtrace_get_stats", "rawtrace_pop_external_id",
      "rawtrace_push_external_id", "rawtrace_start", "rawtrace_stop"], tag);
    const needed = execFileSync("readelf", ["-d", lib(tag)], { encoding: "utf8" });
    assert.not.match(needed, /libcupti|libcuda/, `${tag}: must not link CUPTI or the driver`);
  }
});

// ---- basic: exact events -----------------------------------------------------------------------------------------

async function checkBasic(tag: Tag, load: string, extra: Record<string, string> = {}): Promise<{ run: Run; cs: Chunk[] }> {
  const name = `basic-${load}`;
  const run = runSync(tag, "basic", name, {
    RT_APP_LOAD: load, LD_PRELOAD: load === "preload" || load === "both" ? lib(tag) : undefined,
    RAWTRACE_ACTIVITIES: "default,nvtx", RANK: "3", WORLD_SIZE: "8",
    RAWTRACE_OUTPUT: join(dir, `${tag}-${name}-%r-%h-%p.rawtrace`), ...extra,
  });
  ok(run, `${tag} basic (${load})`);
  const loaded = one(run, "loaded");
  assert.is(one(run, "fake").loaded_by_collector, true, "the collector loads libcupti itself");
  const path = join(dir, `${tag}-${name}-3-${hostname()}-${run.pid}.rawtrace`);
  assert.ok(readdirSync(dir).includes(`${tag}-${name}-3-${hostname()}-${run.pid}.rawtrace`), "RAWTRACE_OUTPUT %r %h %p");
  const c = await convert(path);
  const { r, trace, base } = c;

  // header facts
  assert.is(r.info.vendor, "cuda");
  assert.is(r.info.vendorVersion, CUPTI_VERSION[tag]);
  assert.is(r.info.runtimeVersion, 12090);
  assert.is(r.info.driverVersion, 13000);
  assert.is(r.info.pid, run.pid);
  assert.is(r.info.rank, 3);
  assert.is(r.info.worldSize, 8);
  assert.is(r.info.hostname, hostname());
  assert.equal(r.info.commandLine, [APP, "basic"]);
  assert.is(r.info.complete, true);
  assert.is(r.info.droppedRecords, 5);
  assert.is(trace.rawtrace.dropped_records, 5);
  assert.is(r.info.devices.length, 1);
  assert.is(r.info.devices[0].name, "Fake H100 80GB HBM3");
  assert.is(r.info.devices[0].multiprocessors, 132);
  assert.is(r.info.devices[0].memoryBandwidth, 2619000 * 1000 * (5120 / 8) * 2);
  assert.is(r.info.devices[0].computeCapability, "9.0");
  assert.is(r.info.devices[0].uuid, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
  assert.is(trace.deviceProperties[0].sharedMemPerBlockOptin, 232448);
  assert.equal(r.info.warnings.map((w) => w.code), ["DROPPED_RECORDS"]);

  // exactly the kernels the program made: names, correlation ids, streams, timestamps
  const kernels = byCat(c, "kernel");
  const want = run.events.filter((e) => e.ev === "kernel");
  assert.is(kernels.length, want.length, "kernel count");
  for (const w of want) {
    const k = kernels.filter((e) => e.args.correlation === w.corr);
    assert.is(k.length, 1, `kernel for correlation ${w.corr}`);
    assert.is(k[0].name, w.name);
    assert.is(k[0].tid, w.stream);
    assert.is(k[0].pid, 0);
    assertTimes(k[0], w.start, w.end, base, `kernel ${w.name}`);
  }
  assert.ok(kernels.some((k) => k.name === "mutable_kernel_v1") && kernels.some((k) => k.name === "mutable_kernel_v2"),
    "a name pointer reused with other bytes resolves to both names");

  const runtime = byCat(c, "cuda_runtime");
  const wantRt = run.events.filter((e) => e.ev === "runtime");
  for (const w of wantRt) {
    const e = runtime.find((x) => x.args.correlation === w.corr);
    assert.ok(e, `runtime call ${w.corr}`);
    assert.is(e!.name, "cudaLaunchKernel");
    assert.is(e!.pid, run.pid);
    assert.is(e!.tid, loaded.tid, "thread ids are system tids (cuptiSetThreadIdType)");
    assertTimes(e!, w.start, w.end, base, "cudaLaunchKernel");
  }
  assert.equal(runtime.map((e) => e.name).sort(), [
    ...wantRt.map(() => "cudaLaunchKernel"), "cudaDeviceSynchronize", "cudaMemcpy", "cudaMemset"].sort(),
  "runtime calls (cudaGetDevice is turned off in CUPTI, as Kineto does)");
  assert.is(r.info.records.RUNTIME, wantRt.length + 3, "no cudaGetDevice record at all");

  const drv = one(run, "driver");
  const cu = byCat(c, "cuda_driver");
  assert.is(cu.length, 1);
  assert.is(cu[0].name, "cuLaunchKernel");
  assert.is(cu[0].args.correlation, drv.corr);
  assertTimes(cu[0], drv.start, drv.end, base, "cuLaunchKernel");

  const mc = one(run, "memcpy");
  const memcpys = byCat(c, "gpu_memcpy");
  assert.is(memcpys.length, 1);
  assert.is(memcpys[0].name, "Memcpy HtoD (Pageable -> Device)");
  assert.is(memcpys[0].args.bytes, mc.bytes);
  assert.is(memcpys[0].args.correlation, mc.corr);
  assertTimes(memcpys[0], mc.start, mc.end, base, "memcpy");
  const ms = one(run, "memset");
  const memsets = byCat(c, "gpu_memset");
  assert.is(memsets.length, 1);
  assert.is(memsets[0].args.correlation, ms.corr);
  assertTimes(memsets[0], ms.start, ms.end, base, "memset");
  const sy = one(run, "sync");
  const syncs = byCat(c, "cuda_sync");
  assert.is(syncs.length, 1);
  assert.is(syncs[0].name, "Context Sync");
  assert.is(syncs[0].args.correlation, sy.corr);
  assertTimes(syncs[0], sy.start, sy.end, base, "sync");

  const ext = one(run, "external");
  for (const e of trace.traceEvents.filter((x) => x.args?.correlation === ext.corr && x.ph === "X")) {
    assert.is(e.args["External id"], 4242, `${e.cat} of the pushed external id`);
  }
  assert.is(trace.traceEvents.filter((x) => x.args?.["External id"] === 4242).length, 2);
  // A sync with no CPU op of its own carries its correlation id as External id, as Kineto writes it.
  assert.is(syncs[0].args["External id"], sy.corr);
  assert.is(trace.traceEvents.filter((x) => x.args?.["External id"] !== undefined).length, 3);

  const rg = one(run, "range");
  const ranges = byCat(c, "user_annotation");
  assert.is(ranges.length, 1);
  assert.is(ranges[0].name, "step 1");
  assert.is(ranges[0].args.domain, "train");
  assert.is(ranges[0].tid, loaded.tid);
  assertTimes(ranges[0], rg.start, rg.end, base, "NVTX range");

  const meta = trace.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name").map((e) => e.args.name);
  assert.ok(meta.includes(`thread ${loaded.tid} (cuda_app)`), `THREAD_NAMES: ${meta}`);
  assert.ok(meta.includes("stream 7 (compute-stream)"), `NVTX stream name: ${meta}`);

  // flows: every launch starts one, every GPU op ends one
  const flows = trace.traceEvents.filter((e) => e.cat === "ac2g");
  assert.is(flows.filter((e) => e.ph === "s").length, wantRt.length + 1 + 3);
  assert.is(flows.filter((e) => e.ph === "f").length, want.length + 3);

  // the container as written
  const cs = chunks(path);
  assert.is(cs[0].type, T.HEADER);
  assert.is(cs[1].type, T.CLOCK);
  assert.is(cs[1].p.readUInt32LE(0), 0, "START anchor");
  assert.is(cs.filter((x) => x.type === T.HEADER).length, 1, "started once");
  assert.is(cs[cs.length - 1].type, T.END);
  assert.is(cs.filter((x) => x.type === T.END).length, 1, "one END (the forked child wrote nothing)");
  assert.is(cs[cs.length - 2].type, T.CLOCK);
  assert.is(cs[cs.length - 2].p.readUInt32LE(0), 1, "END anchor");
  cs.forEach((x, i) => assert.is(x.seq, i, "sequence numbers"));
  const sizes = readKindSizes(cs.find((x) => x.type === T.KIND_SIZES)!.p);
  assert.equal(Object.fromEntries(sizes), SIZES[tag], "KIND_SIZES measured with cuptiActivityGetNextRecord");
  const apiNames = cs.find((x) => x.type === T.API_NAMES)!.p;
  assert.ok(apiNames.includes(Buffer.from("cudaLaunchKernel_v7000")) && apiNames.includes(Buffer.from("cuLaunchKernel")));
  const known = assertStringsBeforeActivity(cs);
  const mutable = [...known.values()].find((v) => v.includes("mutable_kernel_v1"));
  assert.equal(mutable, ["mutable_kernel_v1", "mutable_kernel_v2"], "same pointer written again with its new bytes");
  const allStrings = [...known.values()].flat();
  assert.is(new Set(allStrings).size, allStrings.length, "each string written once");
  assert.equal(dropped(cs), { 1: 5 });
  assert.is(cs.filter((x) => x.type === T.DEVICES).length, 1);
  assert.is(cs.filter((x) => x.type === T.THREAD_NAMES).length, 1);
  assert.not.match(run.stderr, /: error: /);
  return { run, cs };
}

test("basic, CUDA 13 headers, loaded by InitializeInjection: every event exactly as made", async () => {
  await checkBasic("cu13", "inject");
});

test("basic, CUDA 13.5 headers (Kernel13, Memcpy7, Memset5), LD_PRELOAD: every event exactly as made", async () => {
  await checkBasic("cu135", "preload");
});

test("basic, CUDA 12 headers, LD_PRELOAD plus InitializeInjection: starts once; a kind CUPTI refuses is logged", async () => {
  const { cs, run } = await checkBasic("cu12", "both", { FAKE_CUPTI_FAIL: "cuptiActivityEnable:22" });
  const logs = cs.filter((x) => x.type === T.LOG).map((x) => readLog(x.p));
  const refused = logs.filter((l) => /cuptiActivityEnable\(kind 22\)/.test(l.msg));
  assert.is(refused.length, 1, JSON.stringify(logs));
  assert.is(refused[0].level, 1, "a warning");
  assert.match(run.stderr, /warning: cuptiActivityEnable\(kind 22\) failed/);
});

test("explicit API: rawtrace_start from a dlopen'ed collector", async () => {
  const run = runSync("cu13", "plain", "api", { RT_APP_LOAD: "api" });
  ok(run, "api");
  assert.is(one(run, "loaded").rc, 0);
  const { r } = await convert(outPath("cu13", "api", run.pid));
  assert.is(r.info.records.CONCURRENT_KERNEL, 100);
  assert.is(r.info.records.RUNTIME, 100);
  assert.is(r.info.complete, true);
});

test("NVTX_INJECTION64_PATH = the collector: NVTX's init reaches the libcupti the collector records through", async () => {
  const run = runSync("cu13", "plain", "nvtx", { RT_APP_LOAD: "inject", RT_APP_NVTX: "1", RAWTRACE_ACTIVITIES: "default,nvtx" });
  ok(run, "nvtx");
  const n = one(run, "nvtx");
  assert.is(n.rc, 1, "CUPTI's answer passed back to NVTX");
  assert.is(n.cupti_calls, 1);
  assert.is(n.cupti_arg, 0x5eed, "NVTX's export table handed over unchanged");
  assert.is(one(run, "fake").loaded_by_collector, true, "the same libcupti instance");
  const { r } = await convert(outPath("cu13", "nvtx", run.pid));
  assert.is(r.info.complete, true);
});

// ---- many threads --------------------------------------------------------------------------------------------------

for (const tag of TAGS) {
  test(`${tag}: 8 threads × 10k launches at once`, async () => {
    const run = runSync(tag, "threads", "threads", { RAWTRACE_BUFFER_SIZE: "1M" });
    ok(run, "threads");
    const threads = run.events.filter((e) => e.ev === "thread");
    assert.is(threads.length, 8);
    const c = await convert(outPath(tag, "threads", run.pid));
    assert.is(c.r.info.complete, true);
    assert.equal(c.r.info.warnings, []);
    const kernels = byCat(c, "kernel");
    const launches = byCat(c, "cuda_runtime");
    assert.is(kernels.length, 80000);
    assert.is(launches.length, 80000);
    const kc = new Set(kernels.map((k) => k.args.correlation));
    const rc = new Set(launches.map((k) => k.args.correlation));
    assert.is(kc.size, 80000, "unique correlation ids");
    for (const id of kc) assert.ok(rc.has(id), `kernel ${id} has its launch`);
    for (const t of threads) {
      const mine = launches.filter((e) => e.tid === t.tid);
      assert.is(mine.length, 10000, `launches of ${t.name}`);
      assert.ok(kernels.filter((k) => k.tid === 100 + t.index).length === 10000, `kernels on stream ${100 + t.index}`);
    }
    const meta = c.trace.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name").map((e) => e.args.name);
    for (const t of threads) assert.ok(meta.includes(`thread ${t.tid} (${t.name})`), `thread name of ${t.name}`);
    const names = new Set(kernels.map((k) => k.name));
    assert.equal([...names].sort(), ["gemm_f16", "layernorm", "relu", "softmax"]);
    assertStringsBeforeActivity(chunks(outPath(tag, "threads", run.pid)));
  });
}

// ---- memory cap ----------------------------------------------------------------------------------------------------

test("memory cap, CUPTI that takes a NULL buffer (≥ 27): refused buffers and CUPTI's lost records are counted", async () => {
  const run = runSync("cu13", "exhaust", "cap", { RAWTRACE_BUFFER_SIZE: "64K", RAWTRACE_MAX_MEMORY: "300K" });
  ok(run, "exhaust");
  const em = one(run, "emitted");
  const st = one(run, "stats");
  const per = em.per_buffer;
  assert.is(st.refused, 6);
  assert.is(st.fake_refusals, 6);
  const path = outPath("cu13", "cap", run.pid);
  const cs = chunks(path);
  assert.equal(dropped(cs), { 1: 6 * per, 2: 6 }, "reason 1: records CUPTI lost; reason 2: buffers refused");
  const { r, trace } = await convert(path);
  assert.is(r.info.records.CONCURRENT_KERNEL, 4 * per, "the 4 buffers under the cap are all there");
  // Records and whole buffers apart (the buffers' records were never counted): they were summed as records before.
  assert.is(r.info.droppedRecords, 6 * per);
  assert.is(r.info.droppedBuffers, 6);
  assert.is(trace.rawtrace.dropped_records, 6 * per);
  assert.is(trace.rawtrace.dropped_buffers, 6);
  assert.equal(r.info.warnings.filter((w) => /^DROPPED_/.test(w.code)).map((w) => [w.code, w.detail]),
    [["DROPPED_RECORDS", 6 * per], ["DROPPED_BUFFERS", 6]]);
});

test("memory cap, older CUPTI (no NULL buffers): emergency reserve, never NULL, overflow discarded and counted", async () => {
  const run = runSync("cu13", "exhaust", "cap-old", {
    RAWTRACE_BUFFER_SIZE: "64K", RAWTRACE_MAX_MEMORY: "300K", FAKE_CUPTI_VERSION: "18",
  });
  ok(run, "exhaust on CUPTI 18 (the fake aborts on a NULL buffer)");
  const per = one(run, "emitted").per_buffer;
  const st = one(run, "stats");
  assert.is(st.refused, 0);
  assert.is(st.fake_refusals, 0);
  assert.is(st.discarded, 6);
  const path = outPath("cu13", "cap-old", run.pid);
  assert.equal(dropped(chunks(path)), { 2: 6 });
  const { r } = await convert(path);
  assert.is(r.info.vendorVersion, 18);
  assert.is(r.info.records.CONCURRENT_KERNEL, 4 * per);
  assert.is(r.info.droppedRecords, 0);
  assert.is(r.info.droppedBuffers, 6, "6 buffers, not 6 records");
});

// ---- records CUPTI lost -------------------------------------------------------------------------------------------

test("CUPTI losing records at every buffer: every loss in a DROPPED chunk, but one line for the first and one summing the rest", async () => {
  const run = runSync("cu13", "drops", "drops");
  ok(run, "drops");
  const lines = run.stderr.split("\n").filter((l) => /CUPTI dropped/.test(l));
  assert.is(lines.length, 2, run.stderr);
  assert.match(lines[0], /CUPTI dropped 3 activity records/);
  assert.match(lines[1], /CUPTI dropped 147 more activity records \(150 in all/);
  const dumps = readDumpChunks(outPath("cu13", "drops", run.pid));
  const drops = dumps.filter((c) => c.type === ChunkType.DROPPED && c.p.readUInt32LE(8) === DropReason.VENDOR);
  assert.is(drops.reduce((n, c) => n + Number(c.p.readBigUInt64LE(0)), 0), 150);
  // The same two lines as LOG chunks, the last one before END.
  const logs = dumps.filter((c) => c.type === ChunkType.LOG).map((c) => c.p.subarray(8, 8 + c.p.readUInt32LE(4)).toString("utf8"));
  assert.equal(logs.filter((l) => /CUPTI dropped/.test(l)).length, 2, logs.join("\n"));
  assert.is(dumps[dumps.length - 1].type, ChunkType.END);
});

// ---- cost ------------------------------------------------------------------------------------------------------

test("cost per delivered 8 MiB buffer (printed, not asserted)", async () => {
  const run = runSync("cu13", "bench", "bench", {});
  ok(run, "bench");
  const b = one(run, "bench");
  const st = one(run, "stats");
  assert.ok(st.written >= 24, `${st.written} buffers written`);
  const cb = st.callback_ns / st.completed / 1000;
  const wr = st.writer_ns / st.written / 1000;
  const mbs = st.activity_bytes / (st.writer_ns / 1e9) / 1e6;
  console.log(`collector cost: bufferCompleted ${cb.toFixed(2)} µs/buffer, writer ${wr.toFixed(0)} µs/buffer `
    + `(${mbs.toFixed(0)} MB/s) over ${st.written} buffers of ${b.records / 24 | 0} kernel records`);
  const { r } = await convert(outPath("cu13", "bench", run.pid));
  assert.is(r.info.records.CONCURRENT_KERNEL, b.records);
});

test.run();
