/**
 * bench/generate.ts's record order (`launch-first`, the bench default, against `device-first`, the order of real
 * CUPTI dumps' device work, and `nested`, which also puts each driver call before the runtime call around it): the
 * same records in another order must give the same Chrome JSON events and the same stats — the
 * NVTX projection runs inside the emit pass for the first and as its own pass for the second (model/ranges.ts), so
 * this also checks the two projection paths against each other on the bench mix. The default order's bytes are
 * what every earlier bench figure measured (its bytes are unchanged by the option).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "../../bench/generate.js";
import { convertFile } from "../../src/node/convert.js";

const dir = mkdtempSync(join(tmpdir(), "rt-order-"));

/** The Chrome JSON events of `dump`, each as canonical JSON text, sorted. */
async function events(dump: string): Promise<string[]> {
  const out = `${dump}.json`;
  await convertFile(dump, out, { force: true });
  const doc = JSON.parse(readFileSync(out, "utf8"));
  const canon = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canon) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, canon(x)])) : v;
  return doc.traceEvents.map((e: unknown) => JSON.stringify(canon(e))).sort();
}

test("device-first and launch-first dumps of the same records give the same Chrome JSON events", async () => {
  const a = join(dir, "launch.rawtrace");
  const b = join(dir, "device.rawtrace");
  const ra = generate(30000, a, 1 << 20, "xxh32", "launch-first");
  const rb = generate(30000, b, 1 << 20, "xxh32", "device-first");
  assert.equal(rb, ra, "same counts");
  assert.is(statSync(a).size, statSync(b).size, "same records, only their order differs");
  const ea = await events(a);
  const eb = await events(b);
  assert.ok(ea.length > 40000);
  assert.ok(ea.some((e) => e.includes('"cat":"gpu_user_annotation"')), "NVTX ranges projected onto the streams");
  assert.equal(eb, ea);
  // Nested calls recorded on return (each driver call before the runtime call that made it, too): the same events.
  const c = join(dir, "nested.rawtrace");
  assert.equal(generate(30000, c, 1 << 20, "xxh32", "nested"), ra);
  assert.is(statSync(c).size, statSync(a).size);
  assert.equal(await events(c), ea);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
