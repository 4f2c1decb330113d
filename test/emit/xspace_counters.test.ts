/**
 * Device counter samples in XSpace (Synapse 'C' entries): every sample of a device on its plane's `_counters_` line
 * (XProf's counter line, drawn as counter tracks by trace_viewer@: test/interop/hpu_collector_interop.test.ts), named
 * by its counter, with the u64 `value` stat and no duration — the same samples, names, times and values as the Chrome
 * JSON counter events of the bundled Gaudi2 sample.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { toChrome } from "../helpers/convert.js";

test("Gaudi2 sample: every counter sample on the device plane's _counters_ line, as in the Chrome JSON", async () => {
  const bytes = new Uint8Array(readFileSync("samples/gaudi2_mlp_synapse.rawtrace"));
  const { trace } = await toChrome(bytes);
  // Times relative to the first sample (both outputs have their own time base).
  const cs = trace.traceEvents.filter((e) => e.ph === "C" && e.pid === 0);
  const c0 = Math.min(...cs.map((e) => Math.round(e.ts * 1000)));
  const chrome = cs.map((e) => `${e.name} ${Math.round(e.ts * 1000) - c0} ${e.args.value}`).sort();
  assert.ok(chrome.length > 0, "the sample has counters");
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const s = fromBinary(XSpaceSchema, Buffer.concat(parts));
  const pl = s.planes.find((p) => p.name === "/device:GPU:0")!;
  const lines = pl.lines.filter((l) => l.name === "_counters_");
  assert.is(lines.length, 1);
  const valueId = Object.values(pl.statMetadata).find((m) => m.name === "value")!.id;
  const ln = lines[0];
  const x0 = ln.events.reduce((m, ev) => (ev.data.value as bigint) < m ? ev.data.value as bigint : m, 1n << 62n);
  const xs = ln.events.map((ev) => {
    assert.is(ev.durationPs, 0n);
    const v = ev.stats.find((x) => x.metadataId === valueId)!.value;
    assert.is(v.case, "uint64Value");
    return `${pl.eventMetadata[String(ev.metadataId)].name} ${((ev.data.value as bigint) - x0) / 1000n} ${v.value}`;
  }).sort();
  assert.equal(xs, chrome);
});

test.run();
