/**
 * The viewer says what the Chrome JSON says, for every event of every bundled dump (the samples of each vendor —
 * CUDA, ROCm, XPU, Gaudi — and the real H100 fixtures, which add CUDA event records, event syncs and graphs): the
 * name it shows (web/model.ts eventName over the timeline tables, as the page gets them) is the Chrome JSON's name of
 * the same event — the event at the same time on the same Chrome row (pid, tid).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { basename } from "node:path";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { RowClass, TimelineEvents, TimelineParser } from "../../src/core/timeline.js";
import { eventName, makeLoadedFile, rowWord, type LoadedFile } from "../../web/model.js";
import { chromeOf, type Chrome } from "./viewer_helpers.js";

/** One dump per vendor (samples/) and the real H100 fixtures with CUDA event records, event waits and graphs. */
export const DUMPS = [
  "samples/alexnet_a100_rank0.rawtrace",
  "samples/h100_torch_train_nvtx.rawtrace",
  "samples/mi250_minitoy_rocprof.rawtrace",
  "samples/xpu_train_pti.rawtrace",
  "samples/gaudi2_mlp_synapse.rawtrace",
  "test/fixtures/real/h100/jax_step.rawtrace",
  "test/fixtures/real/h100/torch_graph.rawtrace",
  "test/fixtures/real/h100/cuda_sample.rawtrace",
];

/** The file as the page holds it after a load (web/worker.ts load, web/model.ts makeLoadedFile). */
export async function loaded(path: string): Promise<LoadedFile> {
  const engine = await createEngine();
  const events = new TimelineEvents();
  const parser = new TimelineParser((chunk) => events.add(chunk));
  const res = await engine.convert(fileSource(path), parser.sink, { format: "timeline", traceName: basename(path) });
  return makeLoadedFile(1, basename(path), res.info, parser.finish(), events, 0, 0);
}

/** The Chrome (pid, tid) of viewer row `r` (Kineto's rows: web/layout.ts and emit/chrome_json.ts). */
export function chromeRowOf(f: LoadedFile, r: number): string {
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
export function pair(f: LoadedFile, t: Chrome): Array<Record<string, any> | undefined> {
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

test.run();
