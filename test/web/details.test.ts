/**
 * What the viewer's details panel reads from the timeline tables (assembly/emit/timeline.ts, record words x3..x6),
 * checked for every kernel, copy and API call of real dumps against the other outputs of the same dump: registers
 * and shared memory (static + dynamic) against the Chrome JSON's args, static/dynamic shared memory and theoretical
 * occupancy against XSpace's kernel_details (XProf's calculation), context and devices of copies, 64-bit external
 * ids; and the step flag and number of step ranges.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { basename } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { Flag, Kind, TimelineEvents, TimelineParser } from "../../src/core/timeline.js";
import { chromeOf, convert } from "./viewer_helpers.js";

const DUMPS = ["test/fixtures/real/h100/cuda_sample.rawtrace", "samples/h100_torch_train_nvtx.rawtrace", "samples/alexnet_a100_rank0.rawtrace"];

async function timeline(path: string, steps?: string): Promise<TimelineEvents> {
  const engine = await createEngine();
  const events = new TimelineEvents();
  const parser = new TimelineParser((chunk) => events.add(chunk));
  await engine.convert(fileSource(path), parser.sink, { format: "timeline", traceName: basename(path), steps });
  parser.finish();
  return events;
}

/** kernel_details of every XSpace kernel event, by correlation id. */
async function kernelDetails(path: string): Promise<Map<number, string>> {
  const space = fromBinary(XSpaceSchema, await convert(path, "xspace"));
  const out = new Map<number, string>();
  for (const p of space.planes) {
    const name = (id: bigint | number) => p.statMetadata[String(id)]?.name;
    for (const l of p.lines) {
      for (const e of l.events) {
        let corr = -1;
        let det = "";
        for (const s of e.stats) {
          const n = name(s.metadataId);
          if (n === "correlation_id") corr = Number(s.value.value);
          if (n === "kernel_details") det = s.value.case === "refValue" ? name(s.value.value as bigint) ?? "" : String(s.value.value);
        }
        if (corr >= 0 && det) out.set(corr, det);
      }
    }
  }
  return out;
}

for (const path of DUMPS) {
  test(`${basename(path)}: kernel registers, shared memory, occupancy; copy context and devices; API external ids`, async () => {
    const ev = await timeline(path);
    const t = await chromeOf(path);
    const det = await kernelDetails(path);
    const byCorr = new Map<string, Record<string, any>>();
    for (const e of t.traceEvents) if (e.ph === "X" && e.args?.correlation !== undefined) byCorr.set(`${e.cat}/${e.args.correlation}`, e);
    let kernels = 0;
    let copies = 0;
    let apis = 0;
    let externals = 0;
    for (let i = 0; i < ev.length; i++) {
      const k = ev.kind(i);
      const corr = ev.correlation(i);
      if (k === Kind.KERNEL) {
        const j = byCorr.get(`kernel/${corr}`)!;
        assert.ok(j, `kernel ${corr} in the JSON`);
        const regs = ev.word(i, 13) & 0xffff;
        const st = ev.word(i, 14);
        const dy = ev.word(i, 15);
        assert.is(ev.word(i, 12), j.args.context, `kernel ${corr} context`);
        assert.is(regs, j.args["registers per thread"], `kernel ${corr} registers`);
        assert.is(st + dy, j.args["shared memory"], `kernel ${corr} shared memory`);
        const m = /regs:(\d+) static_shared:(\d+) dynamic_shared:(\d+) .* occ_pct:([\d.]+)$/.exec(det.get(corr) ?? "");
        assert.ok(m, `kernel ${corr} kernel_details: ${det.get(corr)}`);
        assert.is(regs, Number(m![1]));
        assert.is(st, Number(m![2]), `kernel ${corr} static shared`);
        assert.is(dy, Number(m![3]), `kernel ${corr} dynamic shared`);
        assert.is(ev.word(i, 13) >>> 16, Math.round(Number(m![4]) * 100), `kernel ${corr} occupancy`);
        kernels++;
      } else if (k === Kind.MEMCPY) {
        const j = byCorr.get(`gpu_memcpy/${corr}`)!;
        assert.is(ev.word(i, 12), j.args.context, `copy ${corr} context`);
        assert.is(ev.word(i, 13), j.args.device, `copy ${corr} source device (same-device copy)`);
        copies++;
      } else if (k === Kind.API_RUNTIME || k === Kind.API_DRIVER) {
        const j = byCorr.get(`cuda_runtime/${corr}`) ?? byCorr.get(`cuda_driver/${corr}`);
        if (j?.args["External id"] !== undefined && ev.flags(i) & Flag.EXTERNAL) {
          assert.is(BigInt(ev.word(i, 10)) + (BigInt(ev.word(i, 12)) << 32n), BigInt(j.args["External id"]), `api ${corr} external id`);
          externals++;
        }
        apis++;
      }
    }
    assert.ok(kernels > 10 && apis > 10, `${kernels} kernels, ${copies} copies, ${apis} API calls checked`);
    if (path.includes("alexnet")) assert.is(externals, apis, "PyTorch's dump: every API call has an external id");
  });
}

test("step ranges carry the STEP flag and their number (--steps pattern), others none", async () => {
  const ev = await timeline(DUMPS[1], "train_step");
  const steps: number[] = [];
  for (let i = 0; i < ev.length; i++) if (ev.flags(i) & Flag.STEP) steps.push(ev.word(i, 11));
  assert.equal(steps.sort((a, b) => a - b), Array.from({ length: steps.length }, (_, k) => k + 1));
  assert.ok(steps.length >= 3);
  const none = await timeline(DUMPS[1]);
  for (let i = 0; i < none.length; i++) assert.not.ok(none.flags(i) & Flag.STEP, "no step without a matching pattern");
});

test("event syncs and stream waits carry the recording they wait on (x4 call, x5 stream, x6 = 1), as the Chrome JSON's wait_on_* args", async () => {
  for (const path of ["test/fixtures/real/h100/jax_step.rawtrace", "test/fixtures/real/h100/torch_graph.rawtrace"]) {
    const ev = await timeline(path);
    const t = await chromeOf(path);
    const want = new Map<number, { stream: number; corr: number }>();
    for (const e of t.traceEvents) {
      if (e.cat === "cuda_sync" && e.args.wait_on_stream !== undefined) {
        want.set(e.args.correlation, { stream: e.args.wait_on_stream, corr: e.args.wait_on_cuda_event_record_corr_id });
      }
    }
    let waits = 0;
    for (let i = 0; i < ev.length; i++) {
      if (ev.kind(i) !== Kind.SYNC) continue;
      const w = want.get(ev.correlation(i));
      if (w === undefined || w.corr === -1) {
        assert.is(ev.word(i, 15), 0, `${path}: sync ${ev.correlation(i)} has no known recording`);
        continue;
      }
      assert.is(ev.word(i, 15), 1, `${path}: sync ${ev.correlation(i)} known`);
      assert.is(ev.word(i, 13), w.corr, `${path}: recording call of sync ${ev.correlation(i)}`);
      assert.is(ev.word(i, 14), w.stream, `${path}: recording stream of sync ${ev.correlation(i)}`);
      waits++;
    }
    assert.is(waits, want.size, `${path}: every wait with a recording`);
    assert.ok(waits >= 2, `${path}: ${waits} waits`);
  }
});

test.run();
