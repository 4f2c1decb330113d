// SPDX-License-Identifier: MIT
/**
 * Node's spill stores (src/node/spill.ts): the tiered store keeps its first bytes in memory and makes the temporary
 * file only when they are exceeded; every byte reads back from either side (and across the two); a conversion that
 * spills less than the memory part needs no writable temporary folder, one that spills more names the folder it
 * could not write.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileSpill, tieredSpill, SPILL_MEMORY_BYTES } from "../../src/node/spill.js";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import type { Engine } from "../../src/core/engine.js";

const dir = mkdtempSync(join(tmpdir(), "rawtrace-node-spill-"));
const nvtx = "samples/h100_torch_train_nvtx.rawtrace";

/** Deterministic bytes: `n` of them from seed `seed` (xorshift32). */
function bytes(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

test("tiered: writes up to the memory part make no file; the write past it and all later ones go to the file", () => {
  const folder = mkdtempSync(join(dir, "t-"));
  const files = () => readdirSync(folder).length;
  const store = tieredSpill(folder, 1000);
  const parts = [bytes(400, 1), bytes(600, 2), bytes(10, 3), bytes(5, 4), bytes(2000, 5)];
  store.write(parts[0]);
  store.write(parts[1]); // exactly 1000: still in memory
  assert.is(files(), 0);
  // The file (unlinked as soon as it is open, so never listed) is made here: the next test sees it by its folder.
  store.write(parts[2]);
  store.write(parts[3]); // would fit in memory again (none is left): goes to the file, as every later write
  store.write(parts[4]);
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.length;
  }
  // Whole parts, pieces inside each side, and pieces across the boundary at 1000 and across later writes.
  const reads: Array<[number, number]> = [[0, 400], [400, 600], [1000, 10], [1010, 5], [1015, 2000], [3, 7], [990, 20],
    [999, 1], [1000, 1], [0, all.length], [1005, 500], [2500, 515]];
  for (const [off, len] of reads) {
    const dst = new Uint8Array(len);
    store.read(off, dst);
    assert.equal(dst, all.subarray(off, off + len), `read ${off}+${len}`);
  }
  store.close();
  assert.is(files(), 0, "nothing left in the folder");
});

test("tiered: a folder that cannot be written is only needed past the memory part, then named in the error", () => {
  const missing = join(dir, "no-such-folder");
  const store = tieredSpill(missing, 64);
  store.write(bytes(64, 7));
  const back = new Uint8Array(64);
  store.read(0, back);
  assert.equal(back, bytes(64, 7));
  assert.throws(() => store.write(bytes(1, 8)), (e: Error) => e.message.includes(missing) && e.message.includes("TMPDIR"));
  store.close();
});

/** SHA-256 of the XSpace of `path`, lines spilled in runs of `spill` bytes, and the bytes spilled. */
async function xspace(engine: Engine, path: string, spill: number): Promise<{ hash: string; spilled: number }> {
  engine.xspaceSpillBytes = spill;
  const h = createHash("sha256");
  const src = fileSource(path);
  try {
    await engine.convert(src, (b) => h.update(b), { format: "xspace" });
  } finally {
    src.close();
    engine.xspaceSpillBytes = 0;
  }
  return { hash: h.digest("hex"), spilled: engine.spilledBytes };
}

test("the Node engine's default store: a real trace's spilled lines stay in memory, no temporary folder needed", async () => {
  const engine = await createEngine();
  const kept = await xspace(engine, nvtx, 0xffffffff);
  const saved = process.env.TMPDIR;
  const folder = mkdtempSync(join(dir, "tmp-"));
  try {
    // os.tmpdir() reads TMPDIR at each call: a file would be made in this folder, which does not exist.
    process.env.TMPDIR = join(folder, "missing");
    const got = await xspace(engine, nvtx, 1024);
    assert.ok(got.spilled > 0 && got.spilled < SPILL_MEMORY_BYTES, `spilled ${got.spilled}`);
    assert.is(got.hash, kept.hash);
    // The same spill through the file alone needs the folder, and says which one.
    engine.spillFactory = () => fileSpill();
    let err: unknown = null;
    try {
      await xspace(engine, nvtx, 1024);
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof Error && err.message.includes(join(folder, "missing")), String(err));
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test.run();
