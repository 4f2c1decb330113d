/**
 * Device counters in the viewer's timeline (assembly/emit/timeline.ts, emit/timeline_rows.ts GPU_COUNTER): every
 * Chrome `"ph":"C"` sample is a COUNTER record on its device's row for that counter name, below the device's
 * streams, with its value; the tables then hold what the Chrome JSON holds, and the statistics stay without them.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { toChrome } from "../helpers/convert.js";
import { timelineOf } from "../helpers/timeline_digest.js";
import { Kind, RowClass, decodeNames } from "../../src/core/timeline.js";
import { decodeStats } from "../../src/core/stats.js";

test("gaudi2 sample: each counter sample on its counter's row with its value; the tables count what the JSON holds", async () => {
  const bytes = new Uint8Array(readFileSync("samples/gaudi2_mlp_synapse.rawtrace"));
  const { trace } = await toChrome(bytes, {}, "t.rawtrace");
  const { meta, events: ev } = await timelineOf(bytes);
  const names = decodeNames(meta);
  const held = trace.traceEvents.filter((e) => (e.ph === "X" || e.ph === "i" || e.ph === "C") && e.pid !== "");
  assert.is(meta.header.events, held.length, "every event the JSON holds");
  const want = trace.traceEvents.filter((e) => e.ph === "C").map((e) => `${e.pid} ${e.name} ${e.args.value}`).sort();
  const got: string[] = [];
  const rows = new Map<number, string>();
  for (let i = 0; i < ev.length; i++) {
    if (ev.kind(i) !== Kind.COUNTER) continue;
    const r = ev.row(i);
    const w = (k: number) => meta.rows[r * 8 + k];
    assert.is(w(0), RowClass.GPU_COUNTER);
    assert.is(names[w(3)], names[ev.name(i)], "the row is named by its counter");
    rows.set(r, names[ev.name(i)]);
    assert.is(ev.dur(i), 0);
    got.push(`${w(1)} ${names[ev.name(i)]} ${ev.word(i, 9) + ev.word(i, 10) * 2 ** 32}`);
  }
  assert.equal(got.sort(), want);
  assert.is(rows.size, new Set(want.map((x) => x.split(" ")[1])).size, "a row per counter name");
  // The counter rows come last: after the device's streams.
  const classes = Array.from({ length: meta.header.rows }, (_, r) => meta.rows[r * 8]);
  assert.equal(classes.slice(-rows.size), Array(rows.size).fill(RowClass.GPU_COUNTER));
  assert.is(decodeStats(meta.trailer).events, meta.header.events - want.length, "the statistics leave the samples out");
});

test.run();
