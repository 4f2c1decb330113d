/**
 * bench/tile_dump.ts, the large dump of real shape: one copy converts to the original's Chrome JSON events; three
 * copies give three times the complete events and flows (no correlation id, external id or NVTX range id shared
 * between copies: no warning), each copy's events those of the first moved by a whole multiple of the span.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { tileDump } from "../../bench/tile_dump.js";
import { convertFile } from "../../src/node/convert.js";

const dir = mkdtempSync(join(tmpdir(), "rt-tile-"));

interface Ev { ph: string; name?: string; ts?: number; dur?: number; pid: number; tid: number }

/** The Chrome JSON events of `dump` and the conversion's warnings. */
async function convert(dump: string): Promise<{ events: Ev[]; warnings: string[] }> {
  const out = join(dir, `${basename(dump)}.json`);
  const r = await convertFile(dump, out, { force: true });
  return { events: JSON.parse(readFileSync(out, "utf8")).traceEvents, warnings: r.info.warnings.map((w) => w.code) };
}

for (const input of ["test/fixtures/real/h100/torch_nvtx.rawtrace", "test/fixtures/real/h100/jax_step.rawtrace"]) {
  test(`${input}: one copy is the original, three are three runs one after the other`, async () => {
    const orig = await convert(input);
    const one = join(dir, "one.rawtrace");
    tileDump(input, 1, one);
    assert.equal((await convert(one)).events, orig.events);
    const three = join(dir, "three.rawtrace");
    const { spanNs } = tileDump(input, 3, three);
    const got = await convert(three);
    assert.equal(got.warnings, orig.warnings, "no new warning (no id shared between copies)");
    const kinds = (evs: Ev[], ph: string) => evs.filter((e) => e.ph === ph).length;
    for (const ph of ["X", "s", "f"]) assert.is(kinds(got.events, ph), 3 * kinds(orig.events, ph), `ph ${ph}`);
    // The first copy's complete events, moved by 0, 1 and 2 spans, are all there (times in ns from the JSON's µs with
    // 3 decimals, within 2 ns for the float parse).
    const ns = (e: Ev) => Math.round((e.ts ?? 0) * 1000);
    const at = new Map<string, number[]>();
    for (const e of got.events.filter((x) => x.ph === "X")) {
      const k = `${e.pid}/${e.tid}/${e.name}/${e.dur}`;
      at.set(k, [...(at.get(k) ?? []), ns(e)]);
    }
    for (const e of orig.events.filter((x) => x.ph === "X")) {
      const times = at.get(`${e.pid}/${e.tid}/${e.name}/${e.dur}`) ?? [];
      for (let k = 0; k < 3; k++) {
        const want = ns(e) + k * Number(spanNs);
        assert.ok(times.some((t) => Math.abs(t - want) <= 2), `copy ${k} of ${e.name} at ${e.ts}`);
      }
    }
  });
}

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
