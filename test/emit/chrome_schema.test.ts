/**
 * A strict schema for the Chrome JSON we write, checked on every event of every output the tests can make: the
 * sample dump, the golden CUPTI fixtures of three CUDA versions and the real-trace round trips. What Kineto's
 * readers (Perfetto, chrome://tracing, HTA) rely on: key sets and types per phase and category, µs with exactly
 * three decimals, flows with matching ids, metadata shapes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { toChrome } from "../helpers/convert.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { convertKineto, readKinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const DATA = `${ROOT}../shared/data/real/kineto-cuda/`;

const isInt = (v: unknown) => typeof v === "number" && Number.isInteger(v);
const isNum = (v: unknown) => typeof v === "number" && Number.isFinite(v);
const isStr = (v: unknown) => typeof v === "string";

const CATS = new Set([
  "kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "cuda_sync", "cuda_event", "overhead",
  "user_annotation", "gpu_user_annotation", "cuda_graph",
]);
const ARGS: Record<string, Record<string, (v: unknown) => boolean>> = {
  kernel: { queued: isNum, device: isInt, context: isInt, stream: isInt, correlation: isInt, "registers per thread": isInt, "shared memory": isInt, grid: (v) => Array.isArray(v) && v.length === 3 && v.every(isInt), block: (v) => Array.isArray(v) && v.length === 3 && v.every(isInt) },
  gpu_memcpy: { stream: isInt, correlation: isInt, bytes: isInt },
  gpu_memset: { device: isInt, context: isInt, stream: isInt, correlation: isInt, bytes: isInt },
  cuda_runtime: { cbid: isInt, correlation: isInt },
  cuda_driver: { cbid: isInt, correlation: isInt },
  cuda_sync: { "External id": isInt, cuda_sync_kind: isStr, stream: isInt, correlation: isInt, device: isInt, context: isInt },
  cuda_event: { "External id": isInt, event_id: isInt, stream: isInt, correlation: isInt, device: isInt, context: isInt },
  cuda_graph: { device: isInt, context: isInt, stream: isInt, correlation: isInt, "graph id": isInt },
};

/** Validates one whole trace (parsed) and its text; returns the number of events checked. */
function validate(text: string, what: string): number {
  const t = JSON.parse(text);
  const top = Object.keys(t);
  assert.is(top[0], "schemaVersion", what);
  assert.is(t.schemaVersion, 1);
  for (const k of ["deviceProperties", "displayTimeUnit", "baseTimeNanoseconds", "traceEvents", "rawtrace"]) assert.ok(k in t, `${what}: ${k}`);
  assert.ok(isInt(t.baseTimeNanoseconds) || typeof t.baseTimeNanoseconds === "number");
  assert.ok(Array.isArray(t.deviceProperties));
  for (const d of t.deviceProperties) for (const k of ["id", "totalGlobalMem", "computeMajor", "computeMinor", "numSms", "warpSize"]) assert.ok(isInt(d[k]), `${what}: device ${k}`);
  const flowsS = new Set<number>();
  const flowsF: number[] = [];
  for (const e of t.traceEvents) {
    const where = `${what}: ${JSON.stringify(e).slice(0, 160)}`;
    switch (e.ph) {
      case "X": {
        assert.equal(Object.keys(e).slice(0, 7), ["ph", "cat", "name", "pid", "tid", "ts", "dur"], where);
        assert.ok(CATS.has(e.cat), where);
        assert.ok(isStr(e.name), where);
        assert.ok(isInt(e.pid) && isInt(e.tid), where);
        assert.ok(isNum(e.ts) && e.ts >= 0 && isNum(e.dur) && e.dur >= 0, where);
        // As Kineto: no stream on GPU annotations (HTA counts every event with args.stream as a kernel).
        if (e.cat === "gpu_user_annotation") assert.is(e.args?.stream, undefined, where);
        const want = ARGS[e.cat];
        if (want) {
          assert.type(e.args, "object", where);
          for (const [k, ok] of Object.entries(want)) assert.ok(ok(e.args[k]), `${where}: args.${k}`);
          if ("External id" in e.args) assert.ok(isInt(e.args["External id"]), where);
          if ("memory bandwidth (GB/s)" in e.args) assert.ok(isNum(e.args["memory bandwidth (GB/s)"]), where);
        }
        break;
      }
      case "s":
      case "f":
        assert.equal(Object.keys(e).slice(0, 7), ["ph", "id", "pid", "tid", "ts", "cat", "name"], where);
        assert.ok(isInt(e.id) && isInt(e.pid) && isInt(e.tid) && isNum(e.ts), where);
        assert.is(e.cat, "ac2g");
        assert.is(e.name, "ac2g");
        if (e.ph === "f") {
          assert.is(e.bp, "e", where);
          flowsF.push(e.id);
        } else {
          assert.is(e.bp, undefined, where);
          flowsS.add(e.id);
        }
        break;
      case "i":
        assert.ok(isStr(e.name) && isNum(e.ts) && (e.s === "t" || e.s === "g"), where);
        break;
      case "M":
        assert.ok(["process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"].includes(e.name), where);
        assert.ok(isInt(e.pid) && isInt(e.tid), where);
        assert.type(e.args, "object", where);
        if (e.name.endsWith("sort_index")) assert.ok(isInt(e.args.sort_index), where);
        else if (e.name === "process_labels") assert.ok(isStr(e.args.labels), where);
        else assert.ok(isStr(e.args.name), where);
        break;
      default:
        assert.unreachable(`${where}: phase ${e.ph}`);
    }
  }
  // Every ts and dur in the text has exactly three decimals (Kineto's fmtTs), never exponent notation.
  for (const m of text.matchAll(/"(ts|dur)":([^,}]+)/g)) assert.match(m[2], /^\d+\.\d{3}$/, `${what}: ${m[0]}`);
  assert.not.match(text, /NaN|Infinity/);
  // Every flow end sits on a slice with its correlation id at the same row and start (Perfetto binds a flow to the
  // slice that encloses it): an "s" on its launch call, an "f" on its device work.
  const slices = new Set<string>();
  for (const e of t.traceEvents) if (e.ph === "X" && e.args && "correlation" in e.args) slices.add(`${e.args.correlation}/${e.pid}/${e.tid}/${e.ts}`);
  for (const e of t.traceEvents) {
    if (e.ph === "s" || e.ph === "f") assert.ok(slices.has(`${e.id}/${e.pid}/${e.tid}/${e.ts}`), `${what}: flow ${e.ph} ${e.id} has its slice`);
  }
  void flowsS;
  void flowsF;
  return t.traceEvents.length;
}

test("the sample dump's JSON follows the schema", async () => {
  const { text } = await toChrome(sampleDump());
  validate(text, "sample");
  validate((await toChrome(sampleDump(), { allApi: true })).text, "sample allApi");
});

test("the golden CUPTI fixtures' JSON (CUDA 11.8, 12.9, 13.0) follows the schema", async () => {
  execFileSync("bash", [`${ROOT}test/fixtures/cupti/make.sh`], { stdio: ["ignore", "ignore", "inherit"] });
  for (const tag of ["cu118", "cu12", "cu13"]) {
    const bytes = new Uint8Array(readFileSync(`${ROOT}build/fixtures/cupti/${tag}.rawtrace`));
    validate((await toChrome(bytes, { allApi: true })).text, tag);
  }
});

test("the real traces' round trips follow the schema", async () => {
  let n = 0;
  for (const f of ["alexnet_a100_rank0.json.gz", "triton_a100.json.gz"]) {
    const { bytes } = convertKineto(readKinetoTrace(DATA + f), { layout: "cuda13" });
    n += validate((await toChrome(bytes)).text, f);
  }
  assert.ok(n > 800);
});

test.run();
