// SPDX-License-Identifier: MIT
/**
 * XSpace spill storage (assembly/emit/xspace_spill.ts, src/node/spill.ts) and the 2 GiB limit
 * (assembly/emit/xspace_limit.ts): with lines spilled in small runs (the test-only `xspaceSpillBytes`) the XSpace
 * bytes are those of a conversion that keeps everything in memory, for real traces (nested API calls that arrive
 * out of order, NVTX ranges) and a generated training loop, through the Node temporary file, the Node default (memory,
 * then the file) and the in-memory store; an XSpace over the limit (lowered through the test-only `xspaceMaxBytes`) stops before any output. The
 * paged correlation tables (assembly/util/paged.ts) with a two-page resident budget (the test-only
 * `pagedBudgetBytes`: cold pages spilled and read back) give the Chrome JSON, XSpace and viewer-timeline bytes of the
 * default budget. A small spill threshold also shrinks XSpace's capture buffer (emit/xspace_capture.ts), so the
 * events beyond a full buffer (sized, then encoded when written) are compared with all-captured ones too.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memorySpill, type Engine } from "../../src/core/engine.js";
import { RawtraceError } from "../../src/core/codes.js";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { fileSpill, tieredSpill } from "../../src/node/spill.js";
import { convertFile } from "../../src/node/convert.js";
import { generate } from "../../bench/generate.js";
import { tileDump } from "../../bench/tile_dump.js";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";

const dir = mkdtempSync(join(tmpdir(), "rawtrace-spill-test-"));
const generated = join(dir, "loop.rawtrace");
generate(20000, generated);
// Correlation ids over several pages of every table (8,192 ids a page for the external ids).
const wide = join(dir, "wide.rawtrace");
generate(150000, wide);

const inputs = [
  "samples/h100_torch_train_nvtx.rawtrace",
  "samples/alexnet_a100_rank0.rawtrace",
  "samples/mi250_minitoy_rocprof.rawtrace",
  "test/fixtures/real/h100/jax_step.rawtrace",
  "test/fixtures/real/h100/torch.rawtrace",
  "test/fixtures/real/h100/torch_graph.rawtrace",
  "test/fixtures/real/h100/torch_profilerstep.rawtrace",
  generated,
];

/** SHA-256 and size of the XSpace of `path` converted by `engine` with spill threshold `spill`. */
async function xspaceHash(engine: Engine, path: string, spill: number): Promise<{ hash: string; bytes: number; spilled: number }> {
  engine.xspaceSpillBytes = spill;
  const h = createHash("sha256");
  let bytes = 0;
  const src = fileSource(path);
  try {
    await engine.convert(src, (b) => {
      h.update(b);
      bytes += b.length;
    }, { format: "xspace" });
  } finally {
    src.close();
  }
  return { hash: h.digest("hex"), bytes, spilled: engine.spilledBytes };
}

test("spilled runs (temporary file; memory, then the file) give the bytes of an all-in-memory conversion", async () => {
  const engine = await createEngine();
  // The file alone, and the Node default with its memory part cut to 4 KiB so that runs land on both sides.
  for (const [what, factory] of [["file", () => fileSpill(dir)], ["tiered", () => tieredSpill(dir, 4096)]] as const) {
    engine.spillFactory = factory;
    for (const path of inputs) {
      const kept = await xspaceHash(engine, path, 0xffffffff);
      assert.is(kept.spilled, 0, path);
      for (const spill of [1024, 4096]) {
        const got = await xspaceHash(engine, path, spill);
        // The ROCm sample's lines hold fewer than 1 KiB of records each: nothing to spill.
        if (!path.includes("mi250")) assert.ok(got.spilled > 0, `${path}: spilled at ${spill}`);
        assert.is(got.hash, kept.hash, `${what} ${path}: spill at ${spill} bytes`);
        assert.is(got.bytes, kept.bytes, path);
      }
    }
  }
  // The default threshold (1 MiB per line) with the default budget (32 MiB kept past it) spills nothing of the
  // 20,000-record loop: its host thread's 1.3 MB of records stay in memory.
  const def = await xspaceHash(engine, generated, 0);
  assert.is(def.spilled, 0, "nothing spilled by default");
  assert.is(def.hash, (await xspaceHash(engine, generated, 0xffffffff)).hash);
});

/** {@link xspaceHash} with a budget of `keep` bytes kept past each line's largest chunk. */
async function keptHash(engine: Engine, path: string, spill: number, keep: number) {
  engine.xspaceKeepBytes = keep;
  try {
    return await xspaceHash(engine, path, spill);
  } finally {
    engine.xspaceKeepBytes = -1;
  }
}

test("lines kept in memory past their largest chunk under a shared budget, then spilled: the same bytes", async () => {
  const engine = await createEngine();
  for (const path of inputs) {
    const kept = await xspaceHash(engine, path, 0xffffffff);
    const none = await keptHash(engine, path, 1024, 0);
    // Some chunks kept (16 KiB), the lines that fill one past it spilled; and every in-order line kept.
    const some = await keptHash(engine, path, 1024, 16 << 10);
    const all = await keptHash(engine, path, 1024, 1 << 30);
    for (const [what, r] of [["none", none], ["some", some], ["all", all]] as const) {
      assert.is(r.hash, kept.hash, `${path}: budget ${what}`);
    }
    // Lines out of order spill whatever the budget (the real traces have some: nested ranges and calls arrive by end).
    assert.ok(some.spilled <= none.spilled && all.spilled <= some.spilled, `${path}: ${none.spilled}, ${some.spilled}, ${all.spilled}`);
  }
  // The loop's lines are in order: a budget that holds some of them whole spills less (a line that outgrows the
  // budget spills whole), and with room for all of them nothing.
  const [none, some, all] = [await keptHash(engine, generated, 1024, 0), await keptHash(engine, generated, 1024, 256 << 10),
    await keptHash(engine, generated, 1024, 1 << 30)];
  assert.ok(some.spilled > 0 && some.spilled < none.spilled, `${some.spilled} of ${none.spilled}`);
  assert.is(all.spilled, 0);
});

test("a device stream whose records come in interleaved blocks (a real trace, tiled) spills merged runs: the same bytes", async () => {
  // torch.rawtrace's stream 7 holds two ascending stretches of 1,600 and 1,650 kernels interleaved in time; 40 copies
  // one after the other. Runs of 4 KiB hold one or two stretches, runs of 1 MiB (budget 0) about twenty: both are
  // merged stretch by stretch (emit/xspace_spill.ts sortRunIndex), the in-memory conversion sorts the line whole.
  const tiled = join(dir, "torch_x40.rawtrace");
  tileDump("test/fixtures/real/h100/torch.rawtrace", 40, tiled);
  const engine = await createEngine();
  const kept = await xspaceHash(engine, tiled, 0xffffffff);
  for (const [spill, keep] of [[4096, -1], [1024, -1], [0, 0]] as const) {
    engine.xspaceKeepBytes = keep;
    try {
      const got = await xspaceHash(engine, tiled, spill);
      assert.ok(got.spilled > 0, `spilled at ${spill}`);
      assert.is(got.hash, kept.hash, `runs of ${spill || "1 MiB"}, budget ${keep}`);
    } finally {
      engine.xspaceKeepBytes = -1;
    }
  }
});

test("the in-memory spill store (browser default) gives the same bytes", async () => {
  const engine = await createEngine();
  const kept = await xspaceHash(engine, generated, 0xffffffff);
  engine.spillFactory = memorySpill;
  const got = await xspaceHash(engine, generated, 2048);
  assert.ok(got.spilled > 100000);
  assert.is(got.hash, kept.hash);
});

test("an engine converts file after file (state of the previous XSpace reset)", async () => {
  const engine = await createEngine();
  const a = await xspaceHash(engine, "samples/h100_torch_train_nvtx.rawtrace", 1024);
  const b = await xspaceHash(engine, generated, 1024);
  const a2 = await xspaceHash(engine, "samples/h100_torch_train_nvtx.rawtrace", 1024);
  assert.is(a2.hash, a.hash);
  assert.is((await xspaceHash(engine, generated, 1024)).hash, b.hash);
});

test("the spill file is never visible in its folder: unlinked as soon as it is open (nothing left whatever ends the process)", async () => {
  const spillDir = mkdtempSync(join(dir, "spills-"));
  const engine = await createEngine();
  let made = 0;
  let seen = -1;
  engine.spillFactory = () => {
    made++;
    const store = fileSpill(spillDir);
    seen = readdirSync(spillDir).length;
    return store;
  };
  await xspaceHash(engine, generated, 1024);
  assert.is(made, 1);
  assert.is(seen, 0, "empty while the spill file is in use");
  assert.equal(readdirSync(spillDir), []);
});

test("an XSpace over the limit stops before any output, naming the file and the size", async () => {
  const engine = await createEngine();
  const path = "samples/h100_torch_train_nvtx.rawtrace";
  const full = await xspaceHash(engine, path, 0);
  engine.xspaceMaxBytes = full.bytes - 1;
  const out = join(dir, "host.xplane.pb");
  let err: unknown = null;
  let written = 0;
  const src = fileSource(path);
  try {
    await engine.convert(src, (b) => {
      written += b.length;
    }, { format: "xspace" });
  } catch (e) {
    err = e;
  } finally {
    src.close();
  }
  assert.ok(err instanceof RawtraceError);
  const e = err as RawtraceError;
  assert.is(e.name, "XSPACE_TOO_LARGE");
  assert.is(written, 0);
  assert.ok(e.message.startsWith(`${path}: `), e.message); // the input as given
  assert.match(e.message, /the XSpace would be \d+ bytes, over protobuf's 2 GiB message limit/);
  const estimate = Number(/would be (\d+) bytes/.exec(e.message)![1]);
  // Exact for the planes, an upper bound for the diagnostics: at least the real size, at most a few KiB more.
  assert.ok(estimate >= full.bytes && estimate < full.bytes + 65536, `${estimate} vs ${full.bytes}`);
  // Through convertFile: nothing is left at the output path.
  let fileErr = "";
  await convertFile(path, out, { format: "xspace", engine }).catch((x: Error) => {
    fileErr = x.message;
  });
  assert.match(fileErr, /XSpace would be/);
  assert.not.ok(existsSync(out));
  // At the estimate itself the file is written.
  engine.xspaceMaxBytes = estimate;
  const ok = await xspaceHash(engine, path, 0);
  assert.is(ok.hash, full.hash);
});

/** SHA-256 of the `format` output of `path` with paged tables of `budget` resident bytes (0: the default). */
async function pagedHash(engine: Engine, path: string, format: "chrome" | "xspace" | "timeline", budget: number): Promise<{ hash: string; spilled: number }> {
  engine.pagedBudgetBytes = budget;
  engine.xspaceSpillBytes = 0xffffffff; // only the tables spill
  const h = createHash("sha256");
  const src = fileSource(path);
  try {
    await engine.convert(src, (b) => { h.update(b); }, { format });
  } finally {
    src.close();
    engine.pagedBudgetBytes = 0;
    engine.xspaceSpillBytes = 0;
  }
  return { hash: h.digest("hex"), spilled: engine.spilledBytes };
}

test("paged correlation tables evicted to the spill storage give the bytes of the default budget", async () => {
  const engine = await createEngine();
  for (const path of [...inputs, wide]) {
    // The timeline: its partner walk keeps the correlation table's last page while no page was evicted.
    for (const format of ["chrome", "xspace", "timeline"] as const) {
      const kept = await pagedHash(engine, path, format, 0);
      // By default no page spills (XSpace's detail-string pool may: 64 KiB blocks).
      if (format === "chrome") assert.is(kept.spilled, 0, `${path}: nothing spilled by default`);
      const tiny = await pagedHash(engine, path, format, 1);
      assert.is(tiny.hash, kept.hash, `${path} ${format}`);
      if (path === wide) assert.ok(tiny.spilled > kept.spilled, `${format}: pages of the 150,000-record loop spilled`);
    }
  }
});

test("the timeline pass's end spills nothing: its partner table is sized by the events, whatever the budget", async () => {
  // The end of the pass resolves partners row by row, each row sweeping every correlation id: under the paged budget
  // the table's pages were evicted and spilled again once per row (366 MiB at 10.4M events).
  const engine = await createEngine();
  engine.pagedBudgetBytes = 1;
  try {
    let atLastWindow = -1;
    const h = createHash("sha256");
    const src = fileSource(wide);
    try {
      await engine.convert(src, (b) => { h.update(b); }, {
        format: "timeline",
        onProgress: (_d, _t, pass) => {
          if (pass === 2) atLastWindow = engine.spilledBytes;
        },
      });
    } finally {
      src.close();
    }
    assert.ok(atLastWindow > 0, "the decoder's tables spilled during the pass (the budget is tiny)");
    assert.is(engine.spilledBytes, atLastWindow, "nothing more at the end of the pass");
  } finally {
    engine.pagedBudgetBytes = 0;
  }
});

test("pages and XSpace runs interleaved in one spill store (both spilling) give the same bytes", async () => {
  const engine = await createEngine();
  const kept = await xspaceHash(engine, wide, 0xffffffff);
  engine.pagedBudgetBytes = 1;
  try {
    for (const spillFactory of [() => fileSpill(dir), memorySpill]) {
      engine.spillFactory = spillFactory;
      const both = await xspaceHash(engine, wide, 4096);
      assert.is(both.hash, kept.hash);
      assert.ok(both.spilled > (await xspaceHash(engine, wide, 0xffffffff)).spilled, "records and pages spilled");
    }
  } finally {
    engine.pagedBudgetBytes = 0;
  }
});

test("evicted pages through the in-memory store (browser default), and no spill file left by info()", async () => {
  const engine = await createEngine();
  const kept = await pagedHash(engine, wide, "chrome", 0);
  engine.spillFactory = memorySpill;
  const got = await pagedHash(engine, wide, "chrome", 1);
  assert.ok(got.spilled > 0);
  assert.is(got.hash, kept.hash);
  // Pass 1 alone (Engine.info) spills cold pages too: its store is closed (the file removed) at its end.
  const spillDir = mkdtempSync(join(dir, "info-spills-"));
  let made = 0;
  engine.spillFactory = () => {
    made++;
    return fileSpill(spillDir);
  };
  engine.pagedBudgetBytes = 1;
  const src = fileSource(wide);
  try {
    await engine.info(src);
  } finally {
    src.close();
    engine.pagedBudgetBytes = 0;
  }
  assert.is(made, 1);
  assert.equal(readdirSync(spillDir), []);
});

/** A CUDA 13 dump being written in memory: its header, a clock anchor at T and the kind sizes written. */
function cuda13Writer(): { w: RawtraceWriter; L: C.CuptiLayout; T: bigint } {
  const L: C.CuptiLayout = "cuda13";
  const T = 1_780_000_000_000_000_000n;
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 12080, driverVersion: 12080, pid: 1, startNs: T, hostname: "h", commandLine: "x" });
  w.clock({ which: 0, vendorNs: T, realtimeNs: T, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, v]) => [Number(k), v] as const));
  return { w, L, T };
}

/**
 * A CUDA 13 dump of `n` memcpys, 1 µs apart, dealt round-robin over `streams` streams, except that copy `late`
 * starts before its predecessor on its stream: 20 copies back, past where a late record settles among the last ones
 * of its line (emit/xspace_plane.ts lineSettle), so that its line is out of order.
 */
function lateCopyDump(n: number, late: number, streams = 1): Uint8Array {
  const { w, L, T } = cuda13Writer();
  const recs: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const start = T + BigInt(i === late ? i - 20 : i) * 1000n + (i === late ? 1n : 0n);
    const streamId = 7 + (i % streams);
    recs.push(C.memcpyRecord(L, { start, end: start + 500n, deviceId: 0, contextId: 1, streamId, correlationId: i + 1, bytes: 4096n, copyKind: 1, srcKind: 2, dstKind: 3, async: true }));
  }
  w.activity(C.concat(recs));
  w.end();
  return w.bytes();
}

/** SHA-256 of the XSpace of the dump `bytes` with spill threshold `spill` and budget `keep` (then the defaults again). */
async function bytesHash(engine: Engine, bytes: Uint8Array, spill: number, keep: number): Promise<{ hash: string; spilled: number }> {
  engine.xspaceSpillBytes = spill;
  engine.xspaceKeepBytes = keep;
  try {
    const h = createHash("sha256");
    await engine.convert(memorySource(bytes), (b) => { h.update(b); }, { format: "xspace" });
    return { hash: h.digest("hex"), spilled: engine.spilledBytes };
  } finally {
    engine.xspaceSpillBytes = 0;
    engine.xspaceKeepBytes = -1;
  }
}

test("a line kept past its largest chunk that turns out of order is spilled (sorted runs), at its next full chunk or at the end", async () => {
  const engine = await createEngine();
  const xs = (bytes: Uint8Array, spill: number, keep: number) => bytesHash(engine, bytes, spill, keep);
  // 3,000 copies: 96 KB of 32-byte records on the stream's line, in 1 KiB chunks with the test threshold.
  for (const late of [2990, 1500, 40]) {
    const dump = lateCopyDump(3000, late);
    const ref = await xs(dump, 0xffffffff, 0);
    const kept = await xs(dump, 1024, 1 << 30);
    assert.is(kept.hash, ref.hash, `late copy ${late}`);
    // Out of order past its largest chunk: the whole line goes to sorted runs (≈ 96 KB), not kept and sorted whole.
    assert.ok(kept.spilled >= 90_000, `late copy ${late}: ${kept.spilled} bytes spilled`);
    const inOrder = await xs(lateCopyDump(3000, -1), 1024, 1 << 30);
    assert.is(inOrder.spilled, 0, "the same line in order stays in memory");
  }
});

test("with the default 1 MiB chunks, a spilled line's kept chunks are reused by the next line the budget keeps", async () => {
  // 4 streams × 100,000 copies in order: 3.2 MB of records per line, past its 1 MiB chunk. With 1 MiB of budget the
  // first line to fill its chunk keeps one more, the others spill; when the first fills that one it spills and gives
  // its 1 MiB chunks back, and the lines that fill theirs next keep one again, from the free list.
  const engine = await createEngine();
  const dump = lateCopyDump(400_000, -1, 4);
  const run = (spill: number, keep: number) => bytesHash(engine, dump, spill, keep);
  const ref = await run(0xffffffff, 0);
  const spilled: number[] = [];
  for (const keep of [0, 1 << 20, 3 << 20, -1]) {
    const r = await run(0, keep);
    assert.is(r.hash, ref.hash, `budget ${keep}`);
    spilled.push(r.spilled);
  }
  // A line that outgrows the budget spills whole, so 1 MiB keeps none of the four in the end; 3 MiB keeps one.
  assert.ok(spilled[0] >= spilled[1] && spilled[1] > spilled[2], spilled.join(", "));
  assert.is(spilled[3], 0, "the default budget keeps the 12.8 MB of records");
});

test("detail strings wait in the spilled text pool: each written once, equal strings of different tuples shared", async () => {
  // 3000 memcpys of distinct sizes (≈ 200 KB of memcpy_details: pool blocks of 64 KiB spilled and read back), with
  // "unknown" memory kinds 8, 9 and 0 for one size: three tuples, one string, the first in a block already spilled.
  const { w, L, T } = cuda13Writer();
  const recs: Uint8Array[] = [];
  let corr = 1;
  const copy = (bytes: bigint, srcKind: number) => {
    const start = T + BigInt(corr) * 1000n;
    recs.push(C.memcpyRecord(L, { start, end: start + 500n, deviceId: 0, contextId: 1, streamId: 7, correlationId: corr++, bytes, copyKind: 1, srcKind, dstKind: 3, async: true }));
  };
  copy(777n, 8);
  for (let i = 0; i < 3000; i++) copy(4096n + BigInt(i), 2);
  copy(777n, 9);
  copy(777n, 0);
  w.activity(C.concat(recs));
  w.end();
  const engine = await createEngine();
  const parts: Buffer[] = [];
  await engine.convert(memorySource(w.bytes()), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const space = fromBinary(XSpaceSchema, Buffer.concat(parts));
  const dev = space.planes.find((p) => p.name === "/device:GPU:0")!;
  const names = Object.values(dev.statMetadata).map((m) => m.name);
  assert.is(new Set(names).size, names.length, "stat names unique");
  assert.is(names.filter((n) => n.startsWith("kind_src:")).length, 3001);
  const byId = new Map(Object.entries(dev.statMetadata).map(([k, m]) => [BigInt(k), m.name]));
  const detailId = BigInt(Object.entries(dev.statMetadata).find(([, m]) => m.name === "memcpy_details")![0]);
  const details = dev.lines.flatMap((l) => l.events).map((e) => {
    const st = e.stats.find((x) => BigInt(x.metadataId) === detailId)!;
    return byId.get(st.value.value as bigint)!;
  });
  assert.is(details.length, 3003);
  const unknown = "kind_src:unknown kind_dst:device size:777 dest:0 async:1";
  assert.equal([details[0], details[3001], details[3002]], [unknown, unknown, unknown]);
  for (let i = 0; i < 3000; i++) assert.is(details[1 + i], `kind_src:pinned kind_dst:device size:${4096 + i} dest:0 async:1`);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
