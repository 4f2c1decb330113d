/**
 * Where the NVTX projection runs (assembly/model/ranges.ts): inside pass 2 when every launch call precedes its device
 * ops in the file, in its own pass over the file when one comes after (the order real CUPTI dumps have). Both give
 * the same gpu_user_annotation spans; a conversion that does not want them reads the file twice either way.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Engine, memorySource, type ConvertOptions } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { events, type ChromeTrace } from "../helpers/convert.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { cudaWriter } from "../helpers/cuda_writer.js";
import * as C from "../../src/tools/cupti_records.js";

let shared: Engine | null = null;

/** Chrome JSON of `bytes` and the passes that read it (1 index, 3 projection, 2 emit). */
async function convert(bytes: Uint8Array, opts: ConvertOptions = {}): Promise<{ trace: ChromeTrace; passes: number[] }> {
  shared ??= await createEngine();
  const passes: number[] = [];
  const src = memorySource(bytes, "t.rawtrace");
  const counted = { ...src, open: (pass?: 1 | 2 | 3) => (passes.push(pass ?? 0), src.open(pass)) };
  const parts: Buffer[] = [];
  await shared.convert(counted, (b) => parts.push(Buffer.from(b)), opts);
  return { trace: JSON.parse(Buffer.concat(parts).toString("utf8")), passes };
}

/** The projected spans, in output order, as comparable text. */
function spans(t: ChromeTrace): string[] {
  return events(t, "gpu_user_annotation").map((e) => `${e.name} ${e.pid} ${e.tid} ${e.ts} ${e.dur}`);
}

test("launch calls before their device ops: projected in pass 2, the file read twice", async () => {
  const { trace, passes } = await convert(sampleDump());
  assert.equal(passes, [1, 2]);
  assert.is(spans(trace).length, 2, "forward and step");
});

test("a device op before its launch call: the projection pass runs, same spans", async () => {
  const inline = await convert(sampleDump());
  const late = await convert(sampleDump({ deviceFirst: true }));
  assert.equal(late.passes, [1, 3, 2]);
  assert.equal(spans(late.trace), spans(inline.trace));
});

test("without gpu_user_annotation nothing is projected in either order", async () => {
  for (const deviceFirst of [false, true]) {
    const { trace, passes } = await convert(sampleDump({ deviceFirst }), { gpuAnnotations: false });
    assert.equal(passes, [1, 2]);
    assert.is(spans(trace).length, 0, `deviceFirst ${deviceFirst}`);
  }
});

test("a second conversion on the same engine starts the order check afresh", async () => {
  await convert(sampleDump({ deviceFirst: true }));
  assert.equal((await convert(sampleDump())).passes, [1, 2]);
  assert.equal((await convert(sampleDump({ deviceFirst: true }))).passes, [1, 3, 2]);
});

/**
 * A loop of NVTX ranges on one thread, each around a few launches (sparse correlation ids, hidden calls between them
 * with ids of their own unless `hidden` is false, some launches outside every range), a kernel per launch on one of
 * three streams; `spread` moves every id that far apart at most. Returns the dump and, per (range name, stream), the span of its kernels and
 * the correlation id of the kernel that starts it.
 */
function rangedLoop(seed: number, spread: number, deviceFirst: boolean, hidden = true): { bytes: Uint8Array; want: Map<string, [bigint, bigint, number]> } {
  const L: C.CuptiLayout = "cuda13";
  const T = 1_780_000_000_000_000_000n;
  let x = seed;
  const rnd = () => ((x = (x * 1103515245 + 12345) >>> 0) >>> 8);
  const w = cudaWriter(L, T, 7);
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [2, 17, "cudaGetDevice_v3020"]]);
  const names: Array<[bigint, string]> = [[0x1000n, "k"]];
  for (let r = 0; r < 300; r++) names.push([0x10000n + BigInt(r), `r${r}`]);
  w.strings(names);
  const calls: Uint8Array[] = [];
  const kernels: Uint8Array[] = [];
  const want = new Map<string, [bigint, bigint, number]>();
  let id = 1;
  let t = 1000n;
  for (let r = 0; r < 300; r++) {
    const inRange = r % 10 !== 9; // every tenth group of launches is outside any range
    if (inRange) calls.push(C.markerRecord(L, 2, T + t, r + 1, 7, 7, 0x10000n + BigInt(r)));
    t += 10n;
    for (let k = 0; k < 1 + (rnd() % 5); k++) {
      if (hidden) {
        id += 1 + (rnd() % spread);
        calls.push(C.apiRecord(L, { kind: 5, cbid: 17, start: T + t, end: T + t + 5n, processId: 7, threadId: 7, correlationId: id }));
      }
      id += 1 + (rnd() % spread);
      calls.push(C.apiRecord(L, { kind: 5, cbid: 211, start: T + t + 10n, end: T + t + 50n, processId: 7, threadId: 7, correlationId: id }));
      const stream = rnd() % 3;
      const ks = T + t + 100n + BigInt(rnd() % 5000);
      const ke = ks + 1n + BigInt(rnd() % 3000);
      kernels.push(C.kernelRecord(L, { start: ks, end: ke, deviceId: 0, contextId: 1, streamId: stream, correlationId: id, namePtr: 0x1000n }));
      if (inRange) {
        const key = `r${r} ${stream}`;
        const s = want.get(key);
        want.set(key, s ? [s[0] <= ks ? s[0] : ks, s[1] > ke ? s[1] : ke, s[0] <= ks ? s[2] : id] : [ks, ke, id]);
      }
      t += 100n;
    }
    if (inRange) calls.push(C.markerRecord(L, 4, T + t, r + 1, 7, 7, 0n));
    t += 10n;
  }
  if (deviceFirst) w.activity(C.concat(kernels));
  w.activity(C.concat(calls));
  if (!deviceFirst) w.activity(C.concat(kernels));
  w.end();
  return { bytes: w.bytes(), want };
}

test("ranges over sparse correlation ids: exact spans in both orders, keyed by rank or (past the bits' cap) by id, at every budget", async () => {
  // spread 1 without hidden calls: one id per kernel (the launch map keyed by the id itself); with them, two (keyed
  // by rank among the kernels' ids, as the bench's dumps); 40: ≈ 40 ids per kernel, over ≈ 37,000 (one bit page);
  // 30,000: over ≈ 27M (52 bit pages, by rank); 600,000: over ≈ 540M, past the bits' 64 pages (keyed by the id).
  for (const [spread, hidden] of [[1, false], [1, true], [40, true], [30_000, true], [600_000, true]] as const) {
    for (const deviceFirst of [false, true]) {
      const { bytes, want } = rangedLoop(spread, spread, deviceFirst, hidden);
      for (const budget of [0, 1]) {
        shared ??= await createEngine();
        shared.pagedBudgetBytes = budget;
        let got: { trace: ChromeTrace; passes: number[] };
        try {
          got = await convert(bytes);
        } finally {
          shared.pagedBudgetBytes = 0;
        }
        const what = `spread ${spread} hidden ${hidden} deviceFirst ${deviceFirst} budget ${budget}`;
        // Past the bits' cap the order is not known: the projection pass runs.
        assert.equal(got.passes, deviceFirst || spread === 600_000 ? [1, 3, 2] : [1, 2], what);
        // Each span must be its kernels' [first start, last end]: it starts where the JSON puts the kernel that
        // starts it (µs, 3 decimals: within 2 ns) and lasts as long as the records say.
        const kernelTs = new Map<number, number>(events(got.trace, "kernel").map((e) => [e.args.correlation, e.ts]));
        const anns = events(got.trace, "gpu_user_annotation");
        assert.is(anns.length, want.size, `${what}: one span per (range, stream)`);
        for (const a of anns) {
          const span = want.get(`${a.name} ${a.tid}`);
          assert.ok(span, `${what}: ${a.name} on stream ${a.tid}`);
          assert.ok(Math.abs(a.ts - kernelTs.get(span![2])!) <= 0.002, `${what}: ${a.name} ${a.tid} ts ${a.ts}`);
          assert.ok(Math.abs(a.dur * 1000 - Number(span![1] - span![0])) <= 2.5, `${what}: ${a.name} ${a.tid} dur ${a.dur} want ${span![1] - span![0]}`);
        }
      }
    }
  }
});

test.run();
