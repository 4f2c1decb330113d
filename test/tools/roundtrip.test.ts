/**
 * Round trip of real Kineto traces: original JSON → `.rawtrace` of raw CUPTI records (src/tools/kineto_to_rawtrace.ts,
 * CUDA 12 and CUDA 13 layouts) → the engine → Chrome JSON, compared with the original's GPU side to the nanosecond:
 * every kernel, memcpy and memset (name, ts, dur, device, stream, correlation, External id, grid, block, registers,
 * shared memory, bytes), every API call rawtrace keeps, every sync event, and the ac2g flows ("f" on GPU events,
 * "s" on API calls). Prints one line of matched/total counts per file and layout.
 *
 * Inputs: ../shared/data/real/kineto-cuda (alexnet and triton on A100, the 8 ranks of a DLRM run on V100, read
 * straight out of their tar.gz). A small synthetic trace adds what the real ones lack: timestamps near the end of
 * Kineto's 3-month time base (past double precision), every memcpy/memset/sync kind, hidden API calls.
 */
import { test } from "uvu";
import { untar } from "../helpers/dlrm.js";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import type { CuptiLayout } from "../../src/tools/cupti_records.js";
import {
  compareViews, convertKineto, expectedRoundTripView, kinetoToRawtrace, kinetoView, microsToNs, parseKinetoJson,
  readKinetoTrace, traceBaseNs,
  type CategoryMatch, type KinetoTrace, type TraceView, type ViewFlow, type ViewMatch,
} from "../../src/tools/kineto_to_rawtrace.js";
import { Engine, memorySource, type ConvertResult } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";

const DATA = fileURLToPath(new URL("../../../shared/data/real/kineto-cuda/", import.meta.url));
const LAYOUTS: CuptiLayout[] = ["cuda12", "cuda13"];


/** The real traces: [short name, JSON text]. */
function realTraces(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [name, file] of [["alexnet", "alexnet_a100_rank0.json.gz"], ["triton", "triton_a100.json.gz"]]) {
    out.push([name, gunzipSync(readFileSync(DATA + file)).toString("utf8")]);
  }
  const ranks = [...untar(readFileSync(DATA + "dlrm_v100_8ranks.tar.gz"))]
    .filter(([p]) => p.endsWith(".json"))
    .map(([p, bytes]) => [`dlrm rank ${/worker(\d+)/.exec(basename(p))?.[1] ?? p}`, bytes.toString("utf8")] as [string, string])
    .sort((a, b) => a[0].localeCompare(b[0], "en", { numeric: true }));
  assert.is(ranks.length, 8, "dlrm archive holds 8 rank traces");
  return [...out, ...ranks];
}

let engine: Engine | null = null;

/** Original → rawtrace → engine: the output trace (exact ts) and the conversion result. */
async function roundTrip(
  original: KinetoTrace, layout: CuptiLayout, recordsPerChunk?: number,
): Promise<{ ours: KinetoTrace; result: ConvertResult; stats: ReturnType<typeof convertKineto>["stats"] }> {
  const { bytes, stats } = convertKineto(original, { layout, recordsPerChunk });
  engine ??= await createEngine();
  const parts: Buffer[] = [];
  const result = await engine.convert(memorySource(bytes, "roundtrip.rawtrace"), (b) => parts.push(Buffer.from(b)));
  const text = Buffer.concat(parts).toString("utf8");
  JSON.parse(text); // valid JSON as a whole
  return { ours: parseKinetoJson(text), result, stats };
}

const fmt = (m: CategoryMatch) => `${m.matched}/${m.total}`;

/** The closing-note line for one file and layout. */
function summary(name: string, layout: string, m: ViewMatch): string {
  return `roundtrip ${name} ${layout}: kernels ${fmt(m.kernels)}, memcpy ${fmt(m.memcpy)}, memset ${fmt(m.memset)}, ` +
    `api ${fmt(m.api)}, sync ${fmt(m.syncs)}, flows f ${fmt(m.flowEnds)}, flows s ${fmt(m.flowStarts)}` +
    (m.flowStarts.extra ? ` (+${m.flowStarts.extra} s on sync calls Kineto did not link)` : "");
}

/** Calls where rawtrace starts a flow as current Kineto does, while older traces have no "s" there. */
const SYNC_CALLS = new Set(["cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaStreamWaitEvent", "cudaEventSynchronize"]);

function assertAllMatched(label: string, m: ViewMatch, ours: TraceView): void {
  for (const [cat, c] of Object.entries(m) as Array<[string, CategoryMatch]>) {
    assert.is(c.matched, c.total, `${label} ${cat}: ${c.matched}/${c.total} matched\n  ${c.problems.join("\n  ")}`);
    if (cat !== "flowStarts") assert.is(c.extra, 0, `${label} ${cat}: ${c.extra} events not in the original`);
  }
  // Extra "s" flows are allowed on sync calls only.
  const callOf = new Map(ours.api.map((a) => [`${a.pid}/${a.tid}/${a.ts}/${a.correlation}`, a.name]));
  for (const f of m.flowStarts.extraItems as ViewFlow[]) {
    const call = callOf.get(`${f.pid}/${f.tid}/${f.ts}/${f.id}`) ?? "(no call)";
    assert.ok(SYNC_CALLS.has(call), `${label}: extra "s" flow ${f.id} on ${call}`);
  }
}

for (const [name, text] of realTraces()) {
  const original = parseKinetoJson(text);
  const expected = expectedRoundTripView(original);
  for (const layout of LAYOUTS) {
    test(`round trip ${name} (${layout})`, async () => {
      // cuda12 runs split the records over many small ACTIVITY chunks, cuda13 over the default 4096.
      const perChunk = layout === "cuda12" ? 97 : undefined;
      const { ours, result, stats } = await roundTrip(original, layout, perChunk);
      const view = kinetoView(ours);
      const m = compareViews(expected, view);
      console.log(summary(name, layout, m));
      assert.equal(result.info.warnings, [], `${name}: engine warnings`);
      assert.is(result.info.complete, true);
      assert.is(result.info.activityChunks, stats.activityChunks);
      assert.is(result.info.records.CONCURRENT_KERNEL ?? 0, stats.kernels);
      assert.is(result.info.records.MEMCPY ?? 0, stats.memcpys);
      assert.is(result.info.records.MEMSET ?? 0, stats.memsets);
      assert.is(result.info.records.EXTERNAL_CORRELATION ?? 0, stats.externals);
      assert.is(stats.skipped + stats.externalConflicts + stats.apiNameConflicts + stats.peerCopies, 0);
      assert.is(result.apiCallsHidden, stats.runtime + stats.driver - expected.api.length);
      assertAllMatched(`${name} ${layout}`, m, view);
      // Device table and rank survive too.
      const props = (t: KinetoTrace) => Object.fromEntries((t.deviceProperties ?? []).map((d) => [d.id, d]));
      const theirs = props(original);
      for (const [id, d] of Object.entries(props(ours))) {
        for (const [k, v] of Object.entries(d)) assert.is(v, (theirs[id] as unknown as Record<string, unknown>)[k], `device ${id} ${k}`);
      }
      assert.is(Object.keys(props(ours)).length, Object.keys(theirs).length);
      assert.is(ours.distributedInfo?.rank, original.distributedInfo?.rank);
    });
  }
}

// ---- The tool's own edge cases -----------------------------------------------------------------------------------

test("µs text converts to ns exactly", () => {
  assert.is(microsToNs("7889237999999.999"), 7889237999999999n);
  assert.is(microsToNs(1695835572943613), 1695835572943613000n);
  assert.is(microsToNs("2413669097444.592"), 2413669097444592n);
  assert.is(microsToNs("1.5e3"), 1500000n);
  assert.is(microsToNs("0.0005"), 1n);
  assert.is(microsToNs("-1.25"), -1250n);
  assert.is(microsToNs(0), 0n);
  assert.throws(() => microsToNs("1,5"));
  assert.is(microsToNs("1695835572943613.123"), 1695835572943613123n);
  // JSON.parse alone cannot do this: absolute µs with a ns fraction (older traces) are past double precision.
  assert.is.not(BigInt(Math.round(JSON.parse("1695835572943613.123") * 1000)), 1695835572943613123n);
  const t = parseKinetoJson('{"baseTimeNanoseconds": 1727743122000000001, "traceEvents": [{"name": "x\\"ts\\": 1", "ts": 7889237999999.999, "dur":0.001}]}');
  assert.is(t.traceEvents[0].ts, "7889237999999.999");
  assert.is(t.traceEvents[0].dur, "0.001");
  assert.is(t.traceEvents[0].name, 'x"ts": 1');
  assert.is(traceBaseNs(t), 1727743122000000001n);
});

/**
 * A small Kineto trace with what the real ones lack. `relative`: newer format, µs with 3 decimals relative to
 * baseTimeNanoseconds, near the end of the 3-month base (where a double keeps just enough digits); otherwise no
 * base and absolute µs with 3 decimals, which no double holds (> 2^53 ns).
 */
function synthetic(relative: boolean): string {
  const base = 1727743122000000000n;
  const late = 7889237000000n; // µs after the base
  const ts = (us: number, frac: string) => `${(relative ? 0n : base / 1000n) + late + BigInt(us)}.${frac}`;
  const ev: string[] = [];
  const x = (cat: string, name: string, pid: number, tid: number, t: string, dur: string, args: string) =>
    ev.push(`{"ph": "X", "cat": "${cat}", "name": ${JSON.stringify(name)}, "pid": ${pid}, "tid": ${tid}, ` +
      `"ts": ${t}, "dur": ${dur}, "args": {${args}}}`);
  const flow = (ph: string, id: number, pid: number, tid: number, t: string) =>
    ev.push(`{"ph": "${ph}", "id": ${id}, "pid": ${pid}, "tid": ${tid}, "ts": ${t}, "cat": "ac2g", "name": "ac2g"${ph === "f" ? ', "bp": "e"' : ""}}`);
  const P = 777;
  const T = 778;
  ev.push(`{"name": "process_labels", "ph": "M", "ts": 0, "pid": ${P}, "tid": 0, "args": {"labels": "CPU"}}`);
  ev.push(`{"name": "process_name", "ph": "M", "ts": 0, "pid": ${P}, "tid": 0, "args": {"name": "python3.12"}}`);
  ev.push(`{"name": "thread_name", "ph": "M", "ts": 0, "pid": ${P}, "tid": ${T}, "args": {"name": "thread ${T} (trainer)"}}`);
  x("cuda_runtime", "cudaLaunchKernel", P, T, ts(1, "001"), "4.999", `"External id": 9, "cbid": 211, "correlation": 100`);
  flow("s", 100, P, T, ts(1, "001"));
  x("kernel", 'void k<"q">(float/x)', 1, 7, ts(10, "123"), "0.001",
    `"External id": 9, "queued": 0, "device": 1, "context": 5, "stream": 7, "correlation": 100, "registers per thread": 255, ` +
    `"shared memory": 102400, "grid": [65535, 3, 2], "block": [32, 8, 4]`);
  flow("f", 100, 1, 7, ts(10, "123"));
  x("cuda_runtime", "cudaGetDevice", P, T, ts(20, "000"), "0.250", `"cbid": 17, "correlation": 101`);
  x("cuda_driver", "cuCtxGetCurrent", P, T, ts(21, "000"), "0.250", `"cbid": 400, "correlation": 102`);
  x("cuda_driver", "cuLaunchKernel", P, T, ts(22, "999"), "1.000", `"cbid": 307, "correlation": 103`);
  flow("s", 103, P, T, ts(22, "999"));
  x("kernel", "triton_fused_0", 1, 7, ts(30, "500"), "2.500",
    `"queued": 0, "device": 1, "context": 5, "stream": 7, "correlation": 103, "registers per thread": 16, "shared memory": 0, "grid": [1, 1, 1], "block": [128, 1, 1]`);
  flow("f", 103, 1, 7, ts(30, "500"));
  const copies = [["DtoH", "Device", "Pinned"], ["DtoD", "Device", "Device"], ["HtoH", "Pageable", "Managed"], ["HtoA", "Pinned", "Array"]];
  copies.forEach(([k, s, d], i) => {
    x("cuda_runtime", "cudaMemcpyAsync", P, T, ts(40 + i * 10, "000"), "1.000", `"cbid": 41, "correlation": ${200 + i}`);
    flow("s", 200 + i, P, T, ts(40 + i * 10, "000"));
    x("gpu_memcpy", `Memcpy ${k} (${s} -> ${d})`, 1, 9, ts(42 + i * 10, "007"), `${i}.${i}00`,
      `"device": 1, "context": 5, "stream": 9, "correlation": ${200 + i}, "bytes": ${2 ** 33 + i}`);
    flow("f", 200 + i, 1, 9, ts(42 + i * 10, "007"));
  });
  ["Device", "Managed", "Pinned"].forEach((k, i) => {
    x("gpu_memset", `Memset (${k})`, 1, 9, ts(100 + i, "333"), "0.667",
      `"device": 1, "context": 5, "stream": 9, "correlation": ${300 + i}, "bytes": ${4096 * (i + 1)}`);
    flow("f", 300 + i, 1, 9, ts(100 + i, "333"));
  });
  const syncs: Array<[string, number, string]> = [
    ["Stream Sync", 7, ""],
    ["Event Sync", 7, `"wait_on_stream": 9, "wait_on_cuda_event_record_corr_id": 250, "wait_on_cuda_event_id": 4, `],
    ["Stream Wait Event", 9, `"wait_on_stream": -1, "wait_on_cuda_event_record_corr_id": -1, "wait_on_cuda_event_id": 5, `],
    ["Context Sync", -1, ""],
  ];
  syncs.forEach(([k, stream, extra], i) => {
    const tid = stream === -1 ? -1 : stream + 1000000;
    x("cuda_sync", k, 1, tid, ts(200 + i, "250"), "3.000",
      // Kineto gives a sync with no CPU op its own correlation id as External id.
      `"External id": ${400 + i}, "cuda_sync_kind": "${k}", ${extra}"stream": ${stream}, "correlation": ${400 + i}, "device": 1, "context": 5`);
    flow("f", 400 + i, 1, tid, ts(200 + i, "250"));
  });
  return `{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 5, "world_size": 6}, ` +
    `"deviceProperties": [{"id": 1, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85520809984, "computeMajor": 9, ` +
    `"computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, ` +
    `"warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132, "regsPerMultiprocessor": 65536, ` +
    `"sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472}], "cuda_runtime_version": 12080, ` +
    `"displayTimeUnit": "ms", ${relative ? `"baseTimeNanoseconds": ${base}, ` : ""}"traceEvents": [\n${ev.join(",\n")}\n], "traceName": "synthetic"}`;
}

for (const [layout, relative] of [["cuda12", true], ["cuda13", true], ["cuda13", false]] as Array<[CuptiLayout, boolean]>) {
  const form = relative ? "relative µs near the end of the time base" : "absolute µs with ns fractions";
  test(`synthetic trace, ${form}, round-trips exactly (${layout})`, async () => {
    const original = parseKinetoJson(synthetic(relative));
    const expected = expectedRoundTripView(original);
    assert.is(expected.api.length, 6, "cudaGetDevice and cuCtxGetCurrent are hidden by default");
    const { ours, result, stats } = await roundTrip(original, layout, 3);
    assert.is(stats.activityChunks, Math.ceil((stats.kernels + stats.memcpys + stats.memsets + stats.runtime +
      stats.driver + stats.syncs + stats.cudaEvents + stats.externals) / 3));
    assert.is(stats.cudaEvents, 1, "the Event Sync's recording (the Stream Wait Event's is unknown)");
    assert.is(result.apiCallsHidden, 2);
    const view = kinetoView(ours);
    const m = compareViews(expected, view);
    console.log(summary(`synthetic ${relative ? "relative" : "absolute"}`, layout, m));
    assertAllMatched(`synthetic ${layout}`, m, view);
    assert.is(m.kernels.total, 2);
    assert.is(m.memcpy.total, 4);
    assert.is(m.memset.total, 3);
    assert.is(m.syncs.total, 4);
    assert.is(m.flowEnds.total, 13);
    // The last sync ends 7889237000206.250 + 3 µs after the base: exact to the ns on both sides.
    const last = kinetoView(ours).syncs.find((s) => s.name === "Context Sync");
    assert.is(last?.ts, 1727743122000000000n + 7889237000203250n);
    assert.is(ours.distributedInfo?.rank, 5);
    assert.equal(result.info.commandLine, ["python3.12"]);
  });
}

test("the tool refuses what it cannot write", () => {
  const t = parseKinetoJson('{"traceEvents": []}');
  assert.throws(() => convertKineto(t, { layout: "cuda10" as CuptiLayout }), /layout/);
  assert.throws(() => convertKineto(t, { layout: "cuda13", recordsPerChunk: 0 }), /recordsPerChunk/);
  assert.throws(() => parseKinetoJson('{"events": []}'), /traceEvents/);
});

test("the command line writes a dump the engine reads", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-roundtrip-"));
  try {
    const out = join(dir, "triton.rawtrace");
    const msg = execFileSync(process.execPath, [
      "--import", "tsx", fileURLToPath(new URL("../../src/tools/kineto_to_rawtrace.ts", import.meta.url)),
      DATA + "triton_a100.json.gz", "-o", out, "--layout", "cuda12", "--records-per-chunk", "2",
    ], { encoding: "utf8" });
    assert.match(msg, /kernels 1, memcpy 0, memset 0, runtime 1, driver 1, sync 0, external 1, 2 activity chunks/);
    const bytes = readFileSync(out);
    const opts = { layout: "cuda12", recordsPerChunk: 2 } as const;
    assert.equal(bytes, Buffer.from(kinetoToRawtrace(readKinetoTrace(DATA + "triton_a100.json.gz"), opts)));
    // A plainly parsed trace gives the same bytes while its numbers fit doubles (they do within Kineto's time base).
    const text = gunzipSync(readFileSync(DATA + "triton_a100.json.gz")).toString("utf8");
    assert.equal(bytes, Buffer.from(kinetoToRawtrace(JSON.parse(text), opts)));
    engine ??= await createEngine();
    const info = await engine.info(memorySource(bytes));
    assert.is(info.vendorVersion, 28);
    assert.is(info.hostname, "roundtrip");
    assert.is(info.pid, 1670242);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
