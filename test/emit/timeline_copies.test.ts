/**
 * Byte counts of Gaudi copies and fills: a Synapse entry has no byte count but its extraArgs may carry
 * `bytes_moved` (docs/decoders/hpu.md). The decoder makes that the event's bytes (assembly/decode/synapse.ts), so the
 * Chrome JSON, the viewer's timeline records and `stats` agree: bytes and bandwidth where the dump has them, none
 * (not 0) where it has not.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { toChrome } from "../helpers/convert.js";
import { timelineOf } from "../helpers/timeline_digest.js";
import { Kind, decodeNames } from "../../src/core/timeline.js";
import { computeStats } from "../../src/core/stats.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";

test("gaudi2 sample: a copy's bytes are its bytes_moved argument in the JSON, the timeline and stats; without one, none", async () => {
  const bytes = new Uint8Array(readFileSync("samples/gaudi2_mlp_synapse.rawtrace"));
  const { trace } = await toChrome(bytes, {}, "t.rawtrace");
  const { meta, events: ev } = await timelineOf(bytes);
  const names = decodeNames(meta);
  // Per name, the byte counts in start order: the JSON's (bytes_moved, else 0) and the records'.
  const want = new Map<string, number[]>();
  const json = trace.traceEvents.filter((e) => e.ph === "X" && (e.cat === "gpu_memcpy" || e.cat === "gpu_memset"));
  let known = { n: 0, bytes: 0, ns: 0 };
  for (const e of json.sort((a, b) => a.ts - b.ts)) {
    const moved = e.args.bytes_moved;
    if (moved === undefined) {
      // No byte count anywhere in the entry: neither bytes nor bandwidth rather than 0 (EvFlag.BYTES_UNKNOWN).
      assert.is(e.args.bytes, undefined, e.name);
      assert.is(e.args["memory bandwidth (GB/s)"], undefined, e.name);
    } else {
      assert.is(e.args.bytes, moved, e.name);
      assert.ok(Math.abs(e.args["memory bandwidth (GB/s)"] - moved / (e.dur * 1000)) < 1e-6 * (moved / (e.dur * 1000)), e.name);
      if (e.cat === "gpu_memcpy") known = { n: known.n + 1, bytes: known.bytes + moved, ns: known.ns + e.dur * 1000 };
    }
    want.set(e.name, [...(want.get(e.name) ?? []), moved ?? 0]);
  }
  const got = new Map<string, Array<[number, number]>>();
  for (let i = 0; i < ev.length; i++) {
    if (ev.kind(i) !== Kind.MEMCPY && ev.kind(i) !== Kind.MEMSET) continue;
    const n = names[ev.name(i)];
    got.set(n, [...(got.get(n) ?? []), [ev.start(i), ev.word(i, 9) + ev.word(i, 10) * 2 ** 32]]);
  }
  const ordered = new Map([...got].map(([n, l]) => [n, l.sort((a, b) => a[0] - b[0]).map((x) => x[1])]));
  assert.equal(ordered, want);
  assert.equal(ordered.get("memcpy_host_to_device"), [8388608, 8388608, 8388608, 8388608]);
  // stats: the copies with bytes_moved are a row with their bytes; the others a row of unknown bytes; the device's
  // copy and fill sums unknown (some of each have no count).
  const { stats: s } = await computeStats(await createEngine(), memorySource(bytes, "t.rawtrace"));
  assert.equal(s.copies.map((c) => [c.count, c.bytes]), [[known.n, known.bytes], [json.filter((e) => e.cat === "gpu_memcpy").length - known.n, null]]);
  assert.ok(Math.abs(s.copies[0].bandwidthGBs! - known.bytes / known.ns) < 1e-6, "GB/s over the copies with a count");
  assert.is(s.devices[0].memcpyBytes, null);
  assert.is(s.devices[0].memsetBytes, null);
  // XSpace: memcpy_details / Memset_details give the size where the dump has it and no size (not size:0) elsewhere.
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const pl = fromBinary(XSpaceSchema, Buffer.concat(parts)).planes.find((p) => p.name === "/device:GPU:0")!;
  const statId = (n: string) => Object.values(pl.statMetadata).find((m) => m.name === n)?.id;
  // Per details stat, the sizes it gives (XSpace names every Gaudi copy MemcpyOther: the two kinds are told by size).
  const sizes = new Map<string, string[]>();
  for (const ln of pl.lines) for (const x of ln.events) {
    for (const st of x.stats) {
      const which = st.metadataId === statId("memcpy_details") ? "memcpy" : st.metadataId === statId("Memset_details") ? "memset" : "";
      if (!which) continue;
      assert.is(st.value.case, "refValue");
      const d = pl.statMetadata[String(st.value.value)].name;
      sizes.set(which, [...(sizes.get(which) ?? []), / (?:size|num_bytes):(\d+)/.exec(d)?.[1] ?? "none"].sort());
    }
  }
  assert.equal(sizes.get("memcpy"), ["8388608", "8388608", "8388608", "8388608", "none", "none", "none", "none"]);
  assert.equal(sizes.get("memset"), ["none", "none", "none", "none"]);
});

test.run();
