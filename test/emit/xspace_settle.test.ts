// SPDX-License-Identifier: MIT
/**
 * XSpace's late records (emit/xspace_plane.ts lineSettle): a record that arrives a few places before the last one of
 * its line — nested NVTX ranges, recorded when they end; nested calls recorded on return — is put among the line's
 * last records instead of marking the whole line out of order. The XSpace bytes must be those of the sort at the
 * end (the test-only `xspaceSettle = false`), whatever the chunk and spill boundaries; and the bench loop with nested
 * calls must stay an in-order dump (no more spilled than the same records in launch order).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memorySource, type Engine, type ByteSource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { cudaWriter } from "../helpers/cuda_writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { rng } from "../../src/tools/rng.js";
import { generate } from "../../bench/generate.js";

const dir = mkdtempSync(join(tmpdir(), "rawtrace-settle-"));
// The same records with nested calls recorded on return (device work first, each driver call before the runtime call
// that made it) and in the bench's launch order.
const nested = join(dir, "nested.rawtrace");
const launch = join(dir, "launch.rawtrace");
generate(40000, nested, 1 << 20, "xxh32", "nested");
generate(40000, launch, 1 << 20, "xxh32", "launch-first");

/**
 * One thread's runtime calls (distinct names by cbid), 1 µs apart, where about one in three arrives late: with the
 * start of a call 1 to 12 places back (past the settling window too), and the same, a shorter or a longer duration
 * than that one's, so ties on start and on both start and duration (arrival order decides) come up often.
 */
function lateCallsDump(n: number, seed: number): Uint8Array {
  const L: C.CuptiLayout = "cuda13";
  const T = 1_780_000_000_000_000_000n;
  const w = cudaWriter(L, T, 1);
  const rand = rng(seed);
  const starts: bigint[] = [];
  const durs: bigint[] = [];
  const recs: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    let start = T + BigInt(i) * 1000n;
    let dur = 200n + BigInt(Math.floor(rand() * 600));
    if (i > 12 && rand() < 0.35) {
      const back = 1 + Math.floor(rand() * 12);
      start = starts[i - back];
      const pick = rand();
      dur = pick < 0.4 ? durs[i - back] : pick < 0.7 ? durs[i - back] - 50n : durs[i - back] + 50n;
    }
    starts.push(start);
    durs.push(dur);
    recs.push(C.apiRecord(L, { kind: 5, cbid: 300 + (i % 97), start, end: start + dur, processId: 1, threadId: 2, correlationId: i + 1 }));
  }
  w.activity(C.concat(recs));
  w.end();
  return w.bytes();
}

const crafted = [lateCallsDump(3000, 1), lateCallsDump(3000, 2)];

const inputs: Array<string | Uint8Array> = [
  ...crafted,
  nested,
  "samples/h100_torch_train_nvtx.rawtrace",
  "samples/alexnet_a100_rank0.rawtrace",
  "test/fixtures/real/h100/torch.rawtrace",
  "test/fixtures/real/h100/jax_step.rawtrace",
  "test/fixtures/real/h100/torch_graph.rawtrace",
  "test/fixtures/real/h100/torch_profilerstep.rawtrace",
  "test/fixtures/real/h100/cuda_sample.rawtrace",
];

interface Run {
  settle: boolean;
  /** Spill threshold (0: 1 MiB, the default). */
  spill: number;
  /** Bytes kept past each line's largest chunk (−1: the default). */
  keep: number;
}

/** SHA-256 of the XSpace of `path` (a file, or a dump's bytes) and the bytes spilled, under `run`'s settings. */
async function xspace(engine: Engine, path: string | Uint8Array, run: Run): Promise<{ hash: string; spilled: number }> {
  engine.xspaceSettle = run.settle;
  engine.xspaceSpillBytes = run.spill;
  engine.xspaceKeepBytes = run.keep;
  const h = createHash("sha256");
  const file = typeof path === "string" ? fileSource(path) : null;
  const src: ByteSource = file ?? memorySource(path as Uint8Array);
  try {
    await engine.convert(src, (b) => h.update(b), { format: "xspace" });
  } finally {
    file?.close();
    engine.xspaceSettle = true;
    engine.xspaceSpillBytes = 0;
    engine.xspaceKeepBytes = -1;
  }
  return { hash: h.digest("hex"), spilled: engine.spilledBytes };
}

test("settled lines give the bytes of lines sorted at the end, whatever the chunk, spill and budget", async () => {
  const engine = await createEngine();
  // Default chunks; 1 KiB chunks (32 records: a late record often lands first in a new chunk) spilled at once
  // (budget 0: every spill keeps the line's last records back) or kept (1 GiB); 4 KiB chunks.
  const runs: Array<Omit<Run, "settle">> = [
    { spill: 0, keep: -1 }, { spill: 1024, keep: 0 }, { spill: 1024, keep: 1 << 30 }, { spill: 4096, keep: 0 },
  ];
  for (const path of inputs) {
    for (const r of runs) {
      const sorted = await xspace(engine, path, { ...r, settle: false });
      const settled = await xspace(engine, path, { ...r, settle: true });
      const what = typeof path === "string" ? path : `crafted ${crafted.indexOf(path)}`;
      assert.is(settled.hash, sorted.hash, `${what}: chunks ${r.spill}, budget ${r.keep}`);
    }
  }
});

test("a dump with nested calls stays in order: it spills what the same records in launch order spill", async () => {
  const engine = await createEngine();
  // 1 KiB chunks, in-order lines kept (1 GiB): only lines out of order spill (at their next full chunk).
  const run = { spill: 1024, keep: 1 << 30 };
  const inOrder = await xspace(engine, launch, { ...run, settle: true });
  const settled = await xspace(engine, nested, { ...run, settle: true });
  const sorted = await xspace(engine, nested, { ...run, settle: false });
  assert.is(settled.spilled, inOrder.spilled);
  // Without settling the host thread's line (about half the records, 32 bytes each) spills whole.
  assert.ok(sorted.spilled > inOrder.spilled + 500000, `${sorted.spilled} against ${inOrder.spilled}`);
  // A real trace: cuda_sample's NVTX ranges, nested two deep and recorded when they end, no longer leave its line
  // out of order (its device streams, whose records come in blocks out of order, still are).
  const real = "test/fixtures/real/h100/cuda_sample.rawtrace";
  assert.is((await xspace(engine, real, { ...run, settle: true })).spilled, 0);
  assert.ok((await xspace(engine, real, { ...run, settle: false })).spilled > 0);
  // At the defaults (1 MiB chunks, 32 MiB kept) nothing of either spills but what is out of order in both.
  assert.is((await xspace(engine, nested, { spill: 0, keep: -1, settle: true })).spilled,
    (await xspace(engine, launch, { spill: 0, keep: -1, settle: true })).spilled);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test.run();
