// Tests for assembly/util/paged.ts: the paged direct array with a resident-page budget, whose cold pages go to the
// host's spill storage (util/spill.ts) and come back on access. Through the built core's test-only exports
// (rt_paged_new, rt_paged_slot, rt_set_paged_budget), every access pattern below is run against a plain JavaScript
// model with a budget of two pages (an eviction on almost every page change) and with the default budget (none):
// the values read, the ids refused (the page cap, ids beyond u32, pages never created) and the final contents must
// be the same.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { wasmPath } from "../../src/node/wasm.js";
import { memorySpill, type SpillStore } from "../../src/core/engine.js";

interface PagedExports {
  memory: WebAssembly.Memory;
  rt_reset(): void;
  rt_set_paged_budget(bytes: number): void;
  rt_paged_new(elemShift: number, pageBits: number, maxPages: number): number;
  rt_paged_new_sized(elemShift: number, pageBits: number, maxPages: number): number;
  rt_paged_reserve(a: number, pages: number): void;
  rt_paged_slot(a: number, id: bigint, create: number): number;
  rt_paged_spilled(a: number): number;
  rt_paged_epoch(a: number): number;
}

let mod: WebAssembly.Module | undefined;

/** A fresh core whose spill storage is a JavaScript store; `written` counts the bytes appended. */
function core(): { x: PagedExports; written: () => number } {
  let store: SpillStore = memorySpill();
  let bytes = 0;
  let x: PagedExports;
  mod ??= new WebAssembly.Module(readFileSync(wasmPath()));
  const inst = new WebAssembly.Instance(mod, {
    env: {
      rt_write: () => {},
      rt_spill_write: (ptr: number, len: number) => {
        store.write(new Uint8Array(x.memory.buffer, ptr, len));
        bytes += len;
      },
      rt_spill_read: (off: bigint, ptr: number, len: number) => store.read(Number(off), new Uint8Array(x.memory.buffer, ptr, len)),
      rt_split_segment: () => {},
      abort: () => { throw new Error("core aborted"); },
    },
  });
  x = inst.exports as unknown as PagedExports;
  x.rt_reset();
  store = memorySpill();
  return { x, written: () => bytes };
}

/** One access: `id` read (create false) or read then overwritten with `value` (create true). */
interface Op { id: bigint; create: boolean; value: number }

/** Deterministic pseudo-random numbers (LCG, fixed seed). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

/**
 * Runs `ops` on a new array (elements of 2^shift bytes, 2^bits a page, at most `maxPages` pages; with `sized`,
 * directories grown with the pages used: pagedNewSized, pagedReserve before each op) under `budget` bytes and checks
 * each answer against the model; returns the answers and the pages spilled.
 */
function run(budget: number, shift: number, bits: number, maxPages: number, ops: Op[], sized = false): { answers: string[]; spilled: number } {
  const { x } = core();
  x.rt_set_paged_budget(budget);
  const a = sized ? x.rt_paged_new_sized(shift, bits, maxPages) : x.rt_paged_new(shift, bits, maxPages);
  const size = 1 << shift;
  const mask = size === 1 ? 0xff : 0xffffffff;
  const model = new Map<bigint, number>();
  const pages = new Set<bigint>();
  const answers: string[] = [];
  const wrong: string[] = [];
  let dv = new DataView(x.memory.buffer);
  const view = () => (dv.buffer === x.memory.buffer ? dv : (dv = new DataView(x.memory.buffer)));
  const big = BigInt(bits);
  for (const op of ops) {
    const page = op.id >> big;
    const inRange = op.id <= 0xffffffffn;
    const exists = inRange && pages.has(page);
    const canCreate = inRange && op.create && (exists || pages.size < maxPages);
    if (sized) x.rt_paged_reserve(a, Number(page) + 1);
    const p = x.rt_paged_slot(a, op.id, op.create ? 1 : 0);
    if (!exists && !canCreate) {
      if (p !== 0) wrong.push(`id ${op.id} create ${op.create}: an address where none was expected`);
      answers.push("-");
      continue;
    }
    if (p === 0) {
      wrong.push(`id ${op.id} create ${op.create}: refused`);
      answers.push("0-");
      continue;
    }
    if (canCreate) pages.add(page);
    const d = view();
    const got = size === 1 ? d.getUint8(p) : d.getUint32(p, true);
    const want = model.get(op.id) ?? 0;
    if (got !== want) wrong.push(`id ${op.id}: read ${got}, expected ${want}`);
    answers.push(String(got));
    if (op.create) {
      const v = (op.value & mask) >>> 0;
      if (size === 1) d.setUint8(p, v);
      else d.setUint32(p, v, true);
      if (size === 8) d.setUint32(p + 4, 0, true);
      model.set(op.id, v);
    }
  }
  // Every id ever written still holds its last value.
  for (const [id, v] of model) {
    const p = x.rt_paged_slot(a, id, 0);
    const got = p === 0 ? -1 : size === 1 ? view().getUint8(p) : view().getUint32(p, true);
    if (got !== v) wrong.push(`id ${id}: final value ${got}, expected ${v}`);
  }
  assert.equal(wrong.slice(0, 5), [], `${wrong.length} wrong answers`);
  return { answers, spilled: x.rt_paged_spilled(a) };
}

/** The access patterns: each a list of ops over ids of pages of 2^bits elements. */
function patterns(bits: number): Array<[string, Op[]]> {
  const page = 1 << bits;
  const r = rng(0x9a6ed);
  const seq: Op[] = [];
  for (let i = 1; i <= 12 * page; i++) seq.push({ id: BigInt(i), create: true, value: i * 7 });
  for (let i = 1; i <= 12 * page; i += 3) seq.push({ id: BigInt(i), create: false, value: 0 });
  const desc: Op[] = [];
  for (let i = 12 * page; i >= 1; i--) desc.push({ id: BigInt(i), create: i % 2 === 0, value: i });
  const strided: Op[] = [];
  for (let k = 0; k < 6; k++) for (let p = 0; p < 30; p++) strided.push({ id: BigInt(p * page + k), create: true, value: p * 100 + k });
  const random: Op[] = [];
  for (let i = 0; i < 3000; i++) random.push({ id: BigInt(r() % (24 * page)), create: r() % 3 !== 0, value: r() });
  // Two windows far apart used alternately (launch calls ahead of their device work), plus a lagging reader.
  const windows: Op[] = [];
  for (let i = 0; i < 8 * page; i += 61) {
    windows.push({ id: BigInt(i), create: true, value: i + 1 });
    windows.push({ id: BigInt(1_000_000 + i), create: true, value: i + 2 });
    if (i >= 3 * page) windows.push({ id: BigInt(i - 3 * page), create: false, value: 0 });
  }
  // Sparse crafted ids over the u32 range and beyond: the page cap refuses the later pages.
  const sparse: Op[] = [];
  for (let i = 0; i < 1500; i++) {
    const id = (BigInt(r()) << 8n) ^ BigInt(r() & 0xff);
    sparse.push({ id: i % 50 === 0 ? id + 0x100000000n : id & 0xffffffffn, create: r() % 4 !== 0, value: r() });
  }
  // Reads of pages never created, between writes that evict.
  const holes: Op[] = [];
  for (let i = 0; i < 50; i++) {
    holes.push({ id: BigInt(i * 2 * page), create: true, value: i + 5 });
    holes.push({ id: BigInt((i * 2 + 1) * page), create: false, value: 0 });
  }
  return [["sequential", seq], ["descending", desc], ["strided", strided], ["random", random], ["two windows", windows],
    ["sparse", sparse], ["holes", holes]];
}

// Page sizes as the real tables use them (2^13..2^16 elements); a directory is 2^(34 - bits) bytes.
for (const [shift, bits, maxPages] of [[0, 14, 64], [2, 12, 100], [3, 13, 16]]) {
  test(`elements of ${1 << shift} B, pages of ${1 << bits}, cap ${maxPages}: a two-page budget reads what no budget reads`, () => {
    for (const [name, ops] of patterns(bits)) {
      const all = run(0, shift, bits, maxPages, ops);
      const tiny = run(1, shift, bits, maxPages, ops);
      assert.equal(tiny.answers, all.answers, name);
      assert.is(all.spilled, 0, `${name}: the default budget keeps these pages`);
      if (name !== "sparse" || maxPages > 2) assert.ok(tiny.spilled > 0, `${name}: pages were evicted`);
    }
  });
}

test("directories grown with the pages used (pagedNewSized, pagedReserve): no directory over every u32 id", () => {
  // 4 KiB pages of 16-byte elements (the XSpace metadata entries): a directory over the u32 range would be 64 MiB.
  const [shift, bits, maxPages] = [4, 8, 64];
  const limit = BigInt(maxPages << bits);
  for (const [name, ops] of patterns(bits)) {
    // Callers keep ids below the pages reserved: the ops past the cap are left out.
    const inside = ops.filter((op) => op.id < limit);
    const all = run(0, shift, bits, maxPages, inside, true);
    const tiny = run(1, shift, bits, maxPages, inside, true);
    assert.equal(tiny.answers, all.answers, name);
    assert.is(all.spilled, 0, name);
    // The sparse ids fall below the limit too rarely to fill more than two pages.
    if (name !== "sparse") assert.ok(tiny.spilled > 0, `${name}: pages were evicted`);
  }
  // Directories doubled (64 → 512 pages) while pages are being evicted and read back: 300 pages of 16 elements
  // written in order, then read in strides, then rewritten at random.
  const r = rng(0x51ed);
  const growing: Op[] = [];
  for (let i = 0; i < 300 * 16; i++) growing.push({ id: BigInt(i), create: true, value: i * 3 + 1 });
  for (let i = 0; i < 300 * 16; i += 5) growing.push({ id: BigInt(i), create: false, value: 0 });
  for (let i = 0; i < 2000; i++) growing.push({ id: BigInt(r() % (300 * 16)), create: r() % 2 === 0, value: r() });
  const all = run(0, 2, 4, 512, growing, true);
  const tiny = run(1, 2, 4, 512, growing, true);
  assert.equal(tiny.answers, all.answers, "growing");
  assert.ok(tiny.spilled > 250, `growing: ${tiny.spilled} pages spilled`);
  const { x } = core();
  const before = x.memory.buffer.byteLength;
  const a = x.rt_paged_new_sized(shift, bits, 1 << 20);
  x.rt_paged_reserve(a, maxPages);
  assert.ok(x.rt_paged_slot(a, limit - 1n, 1) !== 0);
  assert.ok(x.memory.buffer.byteLength - before < 1 << 20, "no u32-wide directory allocated");
});

test("a budget of whole pages keeps that many resident: a loop over them never spills", () => {
  const { x, written } = core();
  x.rt_set_paged_budget(8 * 16384); // 8 pages of 4096 u32
  const a = x.rt_paged_new(2, 12, 100);
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 8 * 4096; i += 7) assert.ok(x.rt_paged_slot(a, BigInt(i), 1) !== 0);
  }
  assert.is(written(), 0);
  // A ninth page evicts the first (first in, first out), written once.
  assert.ok(x.rt_paged_slot(a, BigInt(8 * 4096), 1) !== 0);
  assert.is(written(), 16384);
  assert.is(x.rt_paged_spilled(a), 1);
});

test("the eviction epoch: unchanged by hits and new pages under the budget, changed by every eviction", () => {
  // Callers keep a page's address between calls (last-page caches in model/session.ts and model/ranges.ts) only
  // while pagedEpoch is the value they took it under: an evicted page's frame is reused, and a page read back may
  // land in another frame.
  const { x } = core();
  x.rt_set_paged_budget(2 * 16384); // two pages of 4096 u32
  const a = x.rt_paged_new(2, 12, 100);
  const mem = () => new Uint32Array(x.memory.buffer);
  const p0 = x.rt_paged_slot(a, 5n, 1);
  mem()[p0 >> 2] = 111;
  const e0 = x.rt_paged_epoch(a);
  assert.ok(x.rt_paged_slot(a, 4096n + 5n, 1) !== 0); // second page: a new frame, no eviction
  assert.is(x.rt_paged_slot(a, 7n, 0), p0 + 8); // a hit
  assert.is(x.rt_paged_epoch(a), e0, "no eviction yet");
  const p2 = x.rt_paged_slot(a, 2n * 4096n + 5n, 1); // third page: evicts page 0, whose frame it takes
  assert.is(p2, p0, "the evicted page's frame is reused: an address cached for page 0 now points into page 2");
  assert.is(x.rt_paged_epoch(a), e0 + 1);
  mem()[p2 >> 2] = 222;
  const back = x.rt_paged_slot(a, 5n, 0); // page 0 read back (evicting page 1)
  assert.is(mem()[back >> 2], 111, "page 0 kept its value through the spill");
  assert.is(x.rt_paged_epoch(a), e0 + 2);
  // A page read back through a lookup is not marked written: only a `create` slot may be written through (a write
  // through the lookup's address would be lost at the next eviction, as the spilled copy counts as current).
  const w = x.rt_paged_slot(a, 5n, 1);
  mem()[w >> 2] = 333;
  assert.ok(x.rt_paged_slot(a, 3n * 4096n, 1) !== 0); // evicts page 2
  assert.ok(x.rt_paged_slot(a, 4n * 4096n, 1) !== 0); // evicts page 0: written out again, as marked
  assert.is(mem()[x.rt_paged_slot(a, 5n, 0) >> 2], 333);
});

test.run();
