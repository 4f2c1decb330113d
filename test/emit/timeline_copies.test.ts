/**
 * Byte counts of copies and fills in the viewer's timeline records (assembly/emit/timeline.ts copyBytes): the
 * record's own count, else the `bytes_moved` argument the event carries — a Gaudi copy's record has no byte count
 * (the Chrome JSON writes no `bytes` nor bandwidth for it, docs/decoders/hpu.md) but its extraArgs may — so the
 * viewer shows the bytes the dump has.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { toChrome } from "../helpers/convert.js";
import { timelineOf } from "../helpers/timeline_digest.js";
import { Kind, decodeNames } from "../../src/core/timeline.js";

test("gaudi2 sample: a copy's record holds its bytes_moved argument; copies and fills without one hold 0; the JSON writes no bytes", async () => {
  const bytes = new Uint8Array(readFileSync("samples/gaudi2_mlp_synapse.rawtrace"));
  const { trace } = await toChrome(bytes, {}, "t.rawtrace");
  const { meta, events: ev } = await timelineOf(bytes);
  const names = decodeNames(meta);
  // Per name, the byte counts in start order: the JSON's (bytes_moved, else its bytes) and the records'.
  const want = new Map<string, number[]>();
  const json = trace.traceEvents.filter((e) => e.ph === "X" && (e.cat === "gpu_memcpy" || e.cat === "gpu_memset"));
  for (const e of json.sort((a, b) => a.ts - b.ts)) {
    // Synapse entries have no byte count: the JSON writes neither bytes nor bandwidth rather than 0 (EvFlag.BYTES_UNKNOWN).
    assert.is(e.args.bytes, undefined, e.name);
    assert.is(e.args["memory bandwidth (GB/s)"], undefined, e.name);
    want.set(e.name, [...(want.get(e.name) ?? []), e.args.bytes_moved ?? 0]);
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
});

test.run();
