/**
 * Correlation ids shared by API calls of several processes (assembly/model/session.ts noteApiProcess): while the
 * dump has shown one process its ids are kept as bits, and the second process turns them into the byte-per-id table
 * (corrExpand). Whatever the order, the page spread and the paged budget (pages evicted to the spill storage and
 * read back, also during the expansion), exactly the ids used by two or more processes lose their launch → kernel
 * arrows and are counted in CORRELATION_PROCESSES; the expected set is computed here from the records.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as C from "../../src/tools/cupti_records.js";
import { memorySource, type Engine } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { cudaWriter } from "../helpers/cuda_writer.js";

const L: C.CuptiLayout = "cuda13";
const T = 1_780_000_000_000_000_000n;

/** A dump: the usual preamble, the launch call's name, one kernel name, then `activity`. */
function dump(activity: Uint8Array[]): Uint8Array {
  const w = cudaWriter(L, T, 100);
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"]]);
  w.strings([[0x1000n, "k"]]);
  w.activity(C.concat(activity));
  w.end();
  return w.bytes();
}

/** A deterministic generator (xorshift32). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

interface Case { dump: Uint8Array; ids: Set<number>; ambiguous: Set<number>; firstAmbiguous: number }

/**
 * Launch calls by `pids` in phases (each phase one process), ids drawn from sparse spreads over several bit pages
 * (512 Ki ids) and byte pages (64 Ki ids), page edges included, some drawn again from earlier phases; a kernel for
 * every id.
 */
function build(seed: number, pids: number[]): Case {
  const r = rng(seed);
  const edges = [1, 7, 8, 65535, 65536, 524287, 524288, 524289, 1048575, 3_000_000, 3_000_001];
  const owners = new Map<number, Set<number>>();
  const order: number[] = [];
  const recs: Uint8Array[] = [];
  let t = 0n;
  let firstAmbiguous = 0;
  for (const pid of pids) {
    const n = 300 + (r() % 300);
    for (let i = 0; i < n; i++) {
      let id: number;
      const k = r() % 10;
      if (k < 2 && order.length) id = order[r() % order.length]; // an id some process used before
      else if (k === 2) id = edges[r() % edges.length];
      else id = 1 + (r() % 4_000_000); // sparse: ≈ 8 bit pages, ≈ 60 byte pages
      let s = owners.get(id);
      if (!s) {
        s = new Set();
        owners.set(id, s);
        order.push(id);
      }
      if (s.size === 1 && !s.has(pid) && firstAmbiguous === 0) firstAmbiguous = id;
      s.add(pid);
      recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: T + t, end: T + t + 50n, processId: pid, threadId: pid, correlationId: id }));
      t += 100n;
    }
  }
  const ids = new Set(order);
  for (const id of order) {
    recs.push(C.kernelRecord(L, { start: T + t, end: T + t + 10n, deviceId: 0, contextId: 1, streamId: 7, correlationId: id, namePtr: 0x1000n }));
    t += 20n;
  }
  const ambiguous = new Set([...owners].filter(([, s]) => s.size > 1).map(([id]) => id));
  return { dump: dump(recs), ids, ambiguous, firstAmbiguous };
}

async function chrome(engine: Engine, bytes: Uint8Array, budget: number): Promise<any> {
  engine.pagedBudgetBytes = budget;
  const parts: Buffer[] = [];
  try {
    await engine.convert(memorySource(bytes, "corr.rawtrace"), (b) => parts.push(Buffer.from(b)), { format: "chrome" });
  } finally {
    engine.pagedBudgetBytes = 0;
  }
  return JSON.parse(Buffer.concat(parts).toString("utf8"));
}

function check(trace: any, c: Case, what: string): void {
  const starts = new Set<number>(trace.traceEvents.filter((e: any) => e.cat === "ac2g" && e.ph === "s").map((e: any) => Number(e.id)));
  const expected = [...c.ids].filter((id) => !c.ambiguous.has(id)).sort((a, b) => a - b);
  assert.equal([...starts].sort((a, b) => a - b), expected, `${what}: arrows for exactly the ids one process used`);
  const w = trace.rawtrace.warnings.find((x: any) => x.code === "CORRELATION_PROCESSES");
  if (c.ambiguous.size === 0) {
    assert.not.ok(w, `${what}: no warning`);
    return;
  }
  assert.ok(w, `${what}: ${JSON.stringify(trace.rawtrace.warnings)}`);
  assert.is(w.count, c.ambiguous.size, `${what}: one count per shared id`);
  assert.is(w.detail, c.firstAmbiguous, `${what}: the first id found shared`);
}

test("ids shared by processes: exactly those lose their arrows, through the bits' expansion, at every budget", async () => {
  const engine = await createEngine();
  const cases: Array<[number, number[]]> = [
    [1, [100]], // one process: bits only, never expanded
    [2, [100, 200]],
    [3, [100, 200, 100, 300]],
    [4, [100, 100, 200, 300, 200, 100]],
    [5, [300, 100]],
  ];
  for (const [seed, pids] of cases) {
    const c = build(seed, pids);
    if (new Set(pids).size > 1) assert.ok(c.ambiguous.size > 10, `seed ${seed}: the case shares ids`);
    // Default budget, then pages of one frame's worth (each access evicts: the expansion reads spilled bit pages).
    for (const budget of [0, 1]) check(await chrome(engine, c.dump, budget), c, `seed ${seed} pids ${pids} budget ${budget}`);
  }
});

test("one process over sparse ids: no warning and no page of the id table spilled at the default budget", async () => {
  const engine = await createEngine();
  // 16,000 ids spread over 48M: a byte per id touched every 64 KiB page of 48 MB (40 MB spilled past the 8 MiB
  // budget); their bits fit in 6 MB.
  const r = rng(9);
  const recs: Uint8Array[] = [];
  const ids = new Set<number>();
  for (let i = 0; i < 16_000; i++) {
    const id = 1 + (r() % 48_000_000);
    if (ids.has(id)) continue;
    ids.add(id);
    recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: T + BigInt(i) * 100n, end: T + BigInt(i) * 100n + 50n, processId: 1, threadId: 1, correlationId: id }));
  }
  const bytes = dump(recs);
  await engine.info(memorySource(bytes, "sparse.rawtrace"));
  assert.is(engine.spilledBytes, 0, "bits for 48M ids: 6 MB, resident");
});

test("the expansion keeps the tables within one budget: a late second process adds no second 8 MiB", async () => {
  // Process 100's calls over 80M ids (one per 6,000): its bits take the whole 8 MiB budget (153 pages of 512 Ki ids);
  // then process 200. The byte table made at the expansion gets the budget less the bits' frames, which the heap
  // cannot take back: the core's memory stays that of the one-process dump (before: 16 → 32 MiB).
  const calls = (pids: number[]) => {
    const recs: Uint8Array[] = [];
    let t = 0n;
    for (let i = 1; i <= 13_000; i++) {
      recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: T + t, end: T + t + 5n, processId: pids[0], threadId: 1, correlationId: i * 6000 }));
      t += 10n;
    }
    for (const pid of pids.slice(1)) {
      for (let i = 1; i <= 1000; i++) {
        recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: T + t, end: T + t + 5n, processId: pid, threadId: 2, correlationId: i * 12_000 }));
        t += 10n;
      }
    }
    return dump(recs);
  };
  const one = await createEngine();
  await one.info(memorySource(calls([100]), "one.rawtrace"));
  const two = await createEngine();
  const i2 = await two.info(memorySource(calls([100, 200]), "two.rawtrace"));
  assert.ok(i2.warnings.some((w) => w.code === "CORRELATION_PROCESSES"), "ids shared (multiples of 12,000)");
  assert.ok(two.memoryBytes <= one.memoryBytes, `${two.memoryBytes} vs ${one.memoryBytes}`);
});

test.run();
