/**
 * API calls exactly as Kineto shows them, for every callback id of every pinned CUDA header set (11.8, 12.9, 13.0U1,
 * 13.5): the name, whether the call is hidden by default, whether it starts an ac2g flow.
 *
 * Expectations are generated at test time: test/helpers/cupti_headers.ts parses cupti_runtime_cbid.h and
 * cupti_driver_cbid.h of each set, test/helpers/kineto_api_rules.ts applies libkineto's rules (stated by enum name)
 * to them. Each dump is built the way the collector writes one: an API_NAMES entry (domain, cbid, the string
 * cuptiGetCallbackName returns = the enum name without its prefix) for every cbid, then one RUNTIME/DRIVER record per
 * cbid in that CUDA version's record layout. Prints one line of counts per header set.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { toChrome } from "../helpers/convert.js";
import { CUDA_TAGS, cbidTable, cudaDefine, ensureCudaHeaders, type Cbid, type CudaTag } from "../helpers/cupti_headers.js";
import { kinetoApiCalls, kinetoName } from "../helpers/kineto_api_rules.js";

/** The record layout of each header set (src/tools/cupti_records.ts). */
const LAYOUT: Record<CudaTag, C.CuptiLayout> = { cu118: "cuda11", cu12: "cuda12", cu13: "cuda13", cu135: "cuda135" };
const T0 = 1_780_000_000_123_456_789n;
const PID = 4242;
const TID = 4243;

test.before(() => ensureCudaHeaders());

/** A dump with one API record per cbid of `table` (correlation id = index + 1); API_NAMES unless `names` is false. */
function apiDump(tag: CudaTag, table: readonly Cbid[], names = true): Uint8Array {
  const L = LAYOUT[tag];
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: 1, vendorVersion: cudaDefine(tag, "cupti_version.h", "CUPTI_API_VERSION"),
    runtimeVersion: cudaDefine(tag, "cuda_runtime_api.h", "CUDART_VERSION"),
    driverVersion: cudaDefine(tag, "cuda.h", "CUDA_VERSION"), pid: PID, startNs: T0, hostname: "h", commandLine: "x",
  });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 5n, monotonicRawNs: 5n, boottimeNs: 5n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  if (names) w.apiNames(table.map((c) => [c.domain, c.cbid, c.name] as const));
  w.activity(C.concat(table.map((c, i) => C.apiRecord(L, {
    kind: c.domain === 1 ? C.CK.DRIVER : C.CK.RUNTIME, cbid: c.cbid, start: T0 + BigInt(i) * 100n,
    end: T0 + BigInt(i) * 100n + 40n, processId: PID, threadId: TID, correlationId: i + 1,
  }))));
  w.end();
  return w.bytes();
}

/** API events of a trace by correlation id, and the correlation ids that start a flow. */
function apiEvents(trace: { traceEvents: Array<Record<string, any>> }) {
  const calls = new Map<number, Record<string, any>>();
  const starts = new Set<number>();
  for (const e of trace.traceEvents) {
    if (e.ph === "X" && (e.cat === "cuda_runtime" || e.cat === "cuda_driver")) {
      assert.not.ok(calls.has(e.args.correlation), `one event per call (${e.args.correlation})`);
      calls.set(e.args.correlation, e);
    } else if (e.ph === "s" && e.cat === "ac2g") starts.add(e.id);
  }
  return { calls, starts };
}

test("Kineto's name rule, on its own examples", () => {
  assert.is(kinetoName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  assert.is(kinetoName("cudaStreamGetCaptureInfo_v2_v11030"), "cudaStreamGetCaptureInfo_v2");
  assert.is(kinetoName("cudaStreamGetCaptureInfo_v3_v12030"), "cudaStreamGetCaptureInfo_v3");
  assert.is(kinetoName("cuMemAlloc_v2"), "cuMemAlloc_v2");
  assert.is(kinetoName("cuCtxCreate_v4"), "cuCtxCreate_v4");
  assert.is(kinetoName("cuda559"), "cuda559");
  assert.is(kinetoName("_v3020"), "", "Kineto cuts even when nothing is left (the `v` only has to be at index ≥ 1)");
  assert.is(kinetoName("v3020"), "v3020");
  assert.is(kinetoName("x_v3020"), "x");
  assert.is(kinetoName("x_v302"), "x_v302");
});

test("callback ids never move between the pinned CUDA versions (the decoder keys Kineto's rules on them)", () => {
  const seen = new Map<string, [number, CudaTag]>();
  for (const tag of CUDA_TAGS) {
    for (const c of cbidTable(tag)) {
      const key = `${c.domain}:${c.name}`;
      const prev = seen.get(key);
      if (prev) assert.is(c.cbid, prev[0], `${key}: ${prev[1]} ${prev[0]}, ${tag} ${c.cbid}`);
      else seen.set(key, [c.cbid, tag]);
    }
  }
});

for (const tag of CUDA_TAGS) {
  test(`${tag}: every runtime and driver cbid is named, hidden and linked as Kineto does`, async () => {
    const table = cbidTable(tag);
    const want = kinetoApiCalls(tag, table);
    const bytes = apiDump(tag, table);

    const all = await toChrome(bytes, { allApi: true }, `${tag}-names.rawtrace`);
    assert.equal(all.result.info.warnings, [], "no warnings");
    const a = apiEvents(all.trace);
    assert.is(a.calls.size, table.length, "--all-api shows every call");
    table.forEach((c, i) => {
      const e = a.calls.get(i + 1);
      assert.ok(e, `${c.name} shown with --all-api`);
      assert.is(e!.cat, c.domain === 1 ? "cuda_driver" : "cuda_runtime", c.name);
      assert.is(e!.args.cbid, c.cbid, c.name);
      assert.is(e!.name, want[i].name, `${tag} ${c.domain === 1 ? "driver" : "runtime"} cbid ${c.cbid} (${c.name})`);
      assert.is(a.starts.has(i + 1), want[i].flowStart, `${c.name}: flow start`);
    });
    assert.is(a.starts.size, want.filter((k) => k.flowStart).length, "no other flow starts");

    const def = await toChrome(bytes, {}, `${tag}-names.rawtrace`);
    const d = apiEvents(def.trace);
    table.forEach((c, i) => {
      assert.is(d.calls.has(i + 1), !want[i].hidden, `${c.name}: shown by default`);
      assert.is(d.starts.has(i + 1), want[i].flowStart && !want[i].hidden, `${c.name}: flow start by default`);
    });
    assert.is(def.result.apiCallsHidden, want.filter((k) => k.hidden).length, "hidden calls counted");
    for (const [corr, e] of d.calls) assert.equal(e, a.calls.get(corr), "a shown call is the same event either way");

    // Without API_NAMES the calls keep Kineto's hiding and flows (they go by cbid); only the names fall back.
    const bare = await toChrome(apiDump(tag, table, false), {}, `${tag}-bare.rawtrace`);
    const b = apiEvents(bare.trace);
    assert.equal([...b.calls.keys()], [...d.calls.keys()], "same calls shown without names");
    assert.equal([...b.starts], [...d.starts], "same flow starts without names");
    for (const [corr, e] of b.calls) {
      const c = table[corr - 1];
      assert.is(e.name, `${c.domain === 1 ? "cuda_driver" : "cuda_runtime"}_cbid_${c.cbid}`);
    }

    const count = (f: (c: Cbid, i: number) => boolean) => table.filter(f).length;
    const rt = (c: Cbid) => c.domain === 2;
    const kept = count((c, i) => !rt(c) && /_v\d{1,3}$/.test(want[i].name));
    assert.ok(kept > 0, "driver names that keep their _vN exist in every set");
    console.log(`${tag}: ${count(rt)} runtime + ${count((c) => !rt(c))} driver cbids; ` +
      `${count((c, i) => rt(c) && want[i].name !== c.name)} runtime names lose a _v<version> suffix, ` +
      `${kept} driver names keep their _vN; hidden by default ${count((c, i) => rt(c) && want[i].hidden)} runtime + ` +
      `${count((c, i) => !rt(c) && want[i].hidden)} driver; flow starts ${count((c, i) => rt(c) && want[i].flowStart)} runtime + ` +
      `${count((c, i) => !rt(c) && want[i].flowStart)} driver`);
  });
}

test.run();
