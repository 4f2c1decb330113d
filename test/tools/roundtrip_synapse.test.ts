/**
 * Habana round trip: Kineto-style HPU events (the bundled Gaudi2 sample's input, src/tools/gaudi2_sample.ts) →
 * `.rawtrace` as the HPU collector writes it (src/tools/kineto_to_synapse.ts) → the engine → Chrome JSON, compared
 * event by event to the nanosecond: every device op (name, category, device, engine lane, start, duration), every
 * host call, every counter sample and value, the recipe arguments and extraArgs, and one ac2g arrow per recipe
 * launch. In every way the collector can write it: 208-byte 'X' entries, 'B'/'E' pairs split over many pulls (pairs
 * across buffers), the old 112-byte layout, extraArgs outside the buffer (STRINGS).
 *
 * The long doubles themselves: f80FromNs must give, byte for byte, what the C compiler's x87 arithmetic gives for
 * `(long double)ns / 1000.0L` (test/tools/f80_encode.c), and the core's decoder must give the ns back, for 10^5
 * values from a fixed seed over every magnitude up to 2^62 ns. The committed sample must be what the tool writes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { arch, tmpdir } from "node:os";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { f80FromNs, kinetoToSynapse, type SynapseOptions } from "../../src/tools/kineto_to_synapse.js";
import { SAMPLE_OPTIONS, gaudi2Sample, gaudi2SampleTrace } from "../../src/tools/gaudi2_sample.js";
import { microsToNs, parseKinetoJson, traceBaseNs, type KinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { rng } from "../../src/tools/rng.js";
import { wasmPath } from "../../src/node/wasm.js";
import { toChrome } from "../helpers/convert.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** 10^5 ns values: edges, then random bit lengths 1..62 with random bits (fixed seed). */
function nsValues(): bigint[] {
  const r = rng(0x5f80);
  const out = [1n, 2n, 499n, 500n, 501n, 999n, 1000n, 1001n, (1n << 53n) + 1n, (1n << 62n) - 1n, 1_779_840_000_000_000_000n];
  while (out.length < 100_000) {
    const bits = 1 + Math.floor(r() * 62);
    let v = 1n;
    for (let i = 1; i < bits; i++) v = (v << 1n) | (r() < 0.5 ? 1n : 0n);
    out.push(v);
  }
  return out;
}

interface F80Core {
  memory: WebAssembly.Memory;
  rt_alloc(n: number): number;
  rt_f80_to_ns_batch(src: number, n: number, dstNs: number, dstStatus: number): number;
}

test("f80FromNs = the C compiler's (long double)ns / 1000.0L, and the core decodes it back to ns, for 10^5 values", () => {
  const values = nsValues();
  const ours = new Uint8Array(values.length * 10);
  values.forEach((v, i) => ours.set(f80FromNs(v), i * 10));
  if (arch() === "x64") {
    const dir = mkdtempSync(join(tmpdir(), "rawtrace-f80enc-"));
    try {
      const exe = join(dir, "enc");
      execFileSync("cc", ["-O2", "-Wall", "-Werror", "-o", exe, join(ROOT, "test/tools/f80_encode.c")], { stdio: "pipe" });
      const inp = new Uint8Array(values.length * 8);
      const dv = new DataView(inp.buffer);
      values.forEach((v, i) => dv.setBigUint64(i * 8, v, true));
      writeFileSync(join(dir, "in.bin"), inp);
      execFileSync(exe, [join(dir, "in.bin"), join(dir, "out.bin")], { stdio: "pipe" });
      const c = new Uint8Array(readFileSync(join(dir, "out.bin")));
      assert.is(c.length, ours.length);
      for (let i = 0; i < values.length; i++) {
        const a = Buffer.from(ours.subarray(i * 10, i * 10 + 10)).toString("hex");
        const b = Buffer.from(c.subarray(i * 10, i * 10 + 10)).toString("hex");
        if (a !== b) assert.is(a, b, `ns ${values[i]}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } else console.log("f80 encode: C comparison skipped (needs x86-64 long double)");
  const inst = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmPath())), {
    env: { rt_write: () => {}, rt_spill_write: () => {}, rt_spill_read: () => {}, rt_split_segment: () => {}, abort: () => { throw new Error("core aborted"); } },
  });
  const x = inst.exports as unknown as F80Core;
  const src = x.rt_alloc(ours.length);
  const dst = x.rt_alloc(values.length * 8);
  const st = x.rt_alloc(values.length);
  new Uint8Array(x.memory.buffer, src, ours.length).set(ours);
  assert.is(x.rt_f80_to_ns_batch(src, values.length, dst, st), 0, "statuses");
  const back = new BigUint64Array(x.memory.buffer, dst, values.length);
  for (let i = 0; i < values.length; i++) if (back[i] !== values[i]) assert.is(back[i], values[i]);
});

interface Row { key: string; start: bigint; dur: bigint; args: Record<string, unknown> }

/** Rows of a trace: "cat|name|pid|tid" with absolute ns (input Kineto-style events or our Chrome JSON). */
function rows(t: KinetoTrace, out: boolean): Row[] {
  const base = traceBaseNs(t);
  const r: Row[] = [];
  for (const e of t.traceEvents) {
    if (e.ph === "X" && e.cat && ["kernel", "gpu_memcpy", "gpu_memset", "hpu_op"].includes(e.cat)) {
      r.push({ key: `${e.cat}|${e.name}|${e.pid}|${e.tid}`, start: microsToNs(e.ts!) + base, dur: microsToNs(e.dur!), args: e.args ?? {} });
    } else if (e.ph === "C") {
      r.push({ key: `C|${e.name}|${e.pid}`, start: microsToNs(e.ts!) + base, dur: 0n, args: e.args ?? {} });
    }
  }
  void out;
  return r.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The vendor arguments an event must carry back (the recipe fields in the 208-byte layout, dataType always). */
function expectedArgs(a: Record<string, unknown>, layout: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(a)) {
    if (k === "dataType") out[k] = v;
    else if (layout === 208) out[k] = v;
  }
  if (layout === 208 && (a.recipeId !== undefined && a.recipeId !== 0 || a.recipeName !== undefined)) {
    out.streamHandle ??= "0x0";
    out.eventHandle ??= "0x0";
  }
  if (out.recipeId === 0 && a.recipeName === undefined) {
    delete out.recipeId;
    delete out.streamHandle;
    delete out.eventHandle;
  }
  return out;
}

const NORMALIZED = ["device", "context", "stream", "correlation", "queued", "registers per thread", "shared memory", "grid",
  "block", "bytes", "memory bandwidth (GB/s)", "cbid"];

const CASES: Record<string, SynapseOptions> = {
  "208-byte X entries, sample pulls": SAMPLE_OPTIONS,
  "208-byte B/E pairs over 17-entry pulls": { beginEnd: true, perPull: 17 },
  "112-byte layout (SynapseAI_Core), B/E": { layout: 112, beginEnd: true, perPull: 150 },
  "extraArgs outside the buffer (STRINGS)": { externalArgs: true, perPull: 90 },
};

for (const [label, opts] of Object.entries(CASES)) {
  test(`round trip, ${label}: every device op, host call and counter to the ns, with its arguments and arrows`, async () => {
    const input = gaudi2SampleTrace();
    const { bytes, stats } = kinetoToSynapse(input, opts);
    const { text, result } = await toChrome(bytes);
    assert.equal(result.info.warnings.map((w) => w.code), []);
    const out = parseKinetoJson(text);
    const want = rows(input, false);
    const got = rows(out, true);
    assert.is(got.length, want.length);
    const layout = opts.layout ?? 208;
    for (let i = 0; i < want.length; i++) {
      const w = want[i];
      const g = got[i];
      assert.is(g.key, w.key, `event ${i}`);
      assert.is(g.start, w.start, `${w.key} start`);
      assert.is(g.dur, w.dur, `${w.key} dur`);
      if (w.key.startsWith("C|")) {
        assert.is(g.args.value, w.args.value);
        continue;
      }
      const ga: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(g.args)) if (!NORMALIZED.includes(k)) ga[k] = v;
      assert.equal(ga, expectedArgs(w.args, layout), `${w.key} args`);
    }
    // One arrow per recipe launch (208-byte layout: the old one has no recipeId): "s" on the launch call, "f" on the
    // first device op of the launch, same id.
    const s = out.traceEvents.filter((e) => e.ph === "s");
    const f = out.traceEvents.filter((e) => e.ph === "f");
    const launches = input.traceEvents.filter((e) => e.ph === "X" && String(e.name).includes("enqueueWithExternalEvents"));
    assert.is(s.length, layout === 208 ? launches.length : 0);
    assert.equal(s.map((e) => e.id).sort(), f.map((e) => e.id).sort());
    assert.ok(stats.pulls >= 1 && stats.deviceOps === want.filter((r) => !r.key.startsWith("C|") && !r.key.startsWith("hpu_op")).length);
  });
}

test("the committed sample is what src/tools/gaudi2_sample.ts writes (deterministic, < 200 KB)", () => {
  const committed = new Uint8Array(readFileSync(join(ROOT, "samples/gaudi2_mlp_synapse.rawtrace")));
  const fresh = gaudi2Sample();
  assert.ok(committed.length < 200 * 1024, `${committed.length} bytes`);
  assert.ok(Buffer.from(committed).equals(Buffer.from(fresh)), "regenerate with: tsx src/tools/gaudi2_sample.ts -o samples/gaudi2_mlp_synapse.rawtrace");
});

test.run();
