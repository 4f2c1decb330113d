// Tests for assembly/util/f80.ts (x87 80-bit long double µs → integer ns).
//
// test/util/f80_gen.c is compiled with the system C compiler and writes, from a fixed seed, 10^6+ long doubles
// (edge cases, random bit patterns, random finite values, exact ties, values next to integer/half ns and the 2^63 /
// 2^64 ns boundaries) with the ns and status the compiler's own x87 arithmetic gives for
// (uint64_t)roundl(x * 1000.0L). Every one goes through the built core's rt_f80_to_ns_batch and must match exactly;
// a sample also goes through the single-value export rt_f80_to_ns / rt_f80_status.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { arch } from "node:os";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { wasmPath } from "../../src/node/wasm.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SEED = "0x5eed80";
const COUNT = 1_000_000;
const REC = 19;
const BATCH = 1 << 16;

interface F80Exports {
  memory: WebAssembly.Memory;
  rt_reset(): void;
  rt_alloc(n: number): number;
  rt_f80_to_ns(p: number): bigint;
  rt_f80_status(): number;
  rt_f80_to_ns_batch(src: number, n: number, dstNs: number, dstStatus: number): number;
}

function core(): F80Exports {
  const mod = new WebAssembly.Module(readFileSync(wasmPath()));
  const inst = new WebAssembly.Instance(mod, {
    env: {
      rt_write: () => {},
      rt_spill_write: () => {},
      rt_spill_read: () => {},
      rt_split_segment: () => {},
      abort: () => { throw new Error("core aborted"); },
    },
  });
  return inst.exports as unknown as F80Exports;
}

function generate(): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-f80-"));
  try {
    const exe = join(dir, "f80_gen");
    const out = join(dir, "f80.bin");
    execFileSync("cc", ["-O2", "-Wall", "-Werror", "-o", exe, join(ROOT, "test/util/f80_gen.c"), "-lm"], { stdio: "pipe" });
    execFileSync(exe, [SEED, String(COUNT), out], { stdio: "pipe" });
    return new Uint8Array(readFileSync(out));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const x86 = arch() === "x64" || arch() === "ia32";

function hex(b: Uint8Array): string {
  return Array.from(b).reverse().map((v) => v.toString(16).padStart(2, "0")).join("");
}

test("every generated long double decodes to the C compiler's ns and status", () => {
  if (!x86) {
    console.log("f80: skipped, the expected values need an x86 C compiler (x87 long double)");
    return;
  }
  const data = generate();
  const n = data.length / REC;
  assert.ok(Number.isInteger(n) && n >= COUNT, `generator wrote ${n} records`);
  const x = core();
  x.rt_reset();
  const src = x.rt_alloc(BATCH * 10);
  const dstNs = x.rt_alloc(BATCH * 8);
  const dstSt = x.rt_alloc(BATCH);
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const seen = [0, 0, 0, 0, 0, 0];
  let checked = 0;
  for (let start = 0; start < n; start += BATCH) {
    const count = Math.min(BATCH, n - start);
    let mem = new Uint8Array(x.memory.buffer);
    for (let i = 0; i < count; i++) {
      const at = (start + i) * REC;
      mem.set(data.subarray(at, at + 10), src + i * 10);
    }
    let expectBad = 0;
    for (let i = 0; i < count; i++) if (data[(start + i) * REC + 18] !== 0) expectBad++;
    const bad = x.rt_f80_to_ns_batch(src, count, dstNs, dstSt);
    assert.is(bad, expectBad, `non-OK count of batch at ${start}`);
    mem = new Uint8Array(x.memory.buffer);
    const out = new DataView(x.memory.buffer);
    for (let i = 0; i < count; i++) {
      const at = (start + i) * REC;
      const wantNs = dv.getBigUint64(at + 10, true);
      const wantSt = data[at + 18];
      const gotNs = out.getBigUint64(dstNs + i * 8, true);
      const gotSt = mem[dstSt + i];
      if (gotNs !== wantNs || gotSt !== wantSt) {
        assert.unreachable(
          `record ${start + i}: bytes ${hex(data.subarray(at, at + 10))}: want ${wantNs} ns status ${wantSt}, got ${gotNs} ns status ${gotSt}`,
        );
      }
      seen[wantSt]++;
      checked++;
    }
  }
  assert.is(checked, n);
  for (let s = 0; s < seen.length; s++) assert.ok(seen[s] > 0, `status ${s} covered`);
  assert.ok(seen[0] > COUNT / 2, "most values are finite in range");
  console.log(`f80: ${checked} values bit-exact (status counts ${seen.join("/")})`);

  // The single-value export agrees with the batch on a sample (every 997th record).
  for (let r = 0; r < n; r += 997) {
    const at = r * REC;
    new Uint8Array(x.memory.buffer).set(data.subarray(at, at + 10), src);
    const ns = BigInt.asUintN(64, x.rt_f80_to_ns(src)); // i64 results arrive signed
    assert.is(ns, dv.getBigUint64(at + 10, true), `single ${r}`);
    assert.is(x.rt_f80_status(), data[at + 18], `single status ${r}`);
  }
});

test("hand-checked values: 1.5 µs, a 0.5 ns tie, −0, 2^64 ns, NaN", () => {
  const x = core();
  x.rt_reset();
  const p = x.rt_alloc(16);
  const put = (m: bigint, se: number): [bigint, number] => {
    const dv = new DataView(x.memory.buffer);
    dv.setBigUint64(p, m, true);
    dv.setUint16(p + 8, se, true);
    const ns = BigInt.asUintN(64, x.rt_f80_to_ns(p));
    return [ns, x.rt_f80_status()];
  };
  // 1.5 = 0.11b × 2^1: significand 0xC000…, exponent 16383.
  assert.equal(put(0xc000000000000000n, 16383), [1500n, 0]);
  // 1/16 µs × 1000 = 62.5 ns → 63 (half away from zero).
  assert.equal(put(0x8000000000000000n, 16383 - 4), [63n, 0]);
  // 3/16 µs → 187.5 → 188.
  assert.equal(put(0xc000000000000000n, 16383 - 3), [188n, 0]);
  assert.equal(put(0n, 0x8000), [0n, 0]);
  assert.equal(put(0x8000000000000000n, 0x8000 | 16383), [0n, 1]);
  // 2^55 µs → ≥ 2^64 ns.
  assert.equal(put(0x8000000000000000n, 16383 + 55), [0n, 5]);
  assert.equal(put(0xc000000000000000n, 0x7fff), [0n, 3]);
  assert.equal(put(0x8000000000000000n, 0x7fff), [0n, 2]);
  assert.equal(put(0x4000000000000000n, 16383), [0n, 4]);
});

test.run();
