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

test.run();
