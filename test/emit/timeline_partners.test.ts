/**
 * The viewer's launch ↔ device work links (assembly/emit/timeline.ts, partners): every piece of device work that
 * carries a launch's correlation id names that launch, whatever the vendor's Chrome arrows do. A Synapse launch
 * (Gaudi) draws one ac2g arrow, to its first device op (decode/synapse.ts), yet each of its ops links back to it in
 * the timeline, as each kernel of a CUDA graph launch does.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { timelineOf } from "../helpers/timeline_digest.js";
import { Flag, Kind, TL_NONE } from "../../src/core/timeline.js";

const DEVICE_WORK = new Set([Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET, Kind.GRAPH]);

for (const file of ["samples/gaudi2_mlp_synapse.rawtrace", "test/fixtures/real/h100/torch_graph.rawtrace"]) {
  test(`${file}: every device op of a launch's correlation has that launch as partner`, async () => {
    const { events: ev } = await timelineOf(new Uint8Array(readFileSync(file)));
    const launch = new Map<number, number>();
    for (let i = 0; i < ev.length; i++) {
      if ((ev.flags(i) & Flag.FLOW_START) && ev.correlation(i) !== 0 && !launch.has(ev.correlation(i))) launch.set(ev.correlation(i), i);
    }
    let linked = 0;
    const perLaunch = new Map<number, number>();
    for (let i = 0; i < ev.length; i++) {
      const c = ev.correlation(i);
      if (c === 0 || !DEVICE_WORK.has(ev.kind(i)) || !launch.has(c)) continue;
      assert.is(ev.partner(i), launch.get(c), `device op ${i} (correlation ${c})`);
      assert.ok(ev.flags(i) & Flag.FLOW_END, `device op ${i}: flagged as a flow's end`);
      perLaunch.set(c, (perLaunch.get(c) ?? 0) + 1);
      linked++;
    }
    assert.ok([...perLaunch.values()].some((n) => n > 1), "some launch has several device ops");
    // A launch's own partner stays its earliest device op.
    for (const [c, l] of launch) {
      const p = ev.partner(l);
      if (p === TL_NONE) continue;
      assert.is(ev.correlation(p), c);
      for (let i = 0; i < ev.length; i++) {
        if (ev.correlation(i) === c && DEVICE_WORK.has(ev.kind(i))) assert.ok(ev.start(i) >= ev.start(p), `launch ${l}`);
      }
    }
    assert.ok(linked > 40, `${linked} linked`);
  });
}

test.run();
