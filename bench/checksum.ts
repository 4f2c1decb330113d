/**
 * Raw speed of the three payload checksums (docs/format.md, "Payload checksums"), where each one runs:
 * - in the WebAssembly core (the reader's index pass verifies every payload): the core's exported `rt_crc32`,
 *   `rt_xxh32` and `rt_xxh64` over an 8 MiB buffer at an unaligned address, in turn, CPU time per call;
 * - in the C writer (the collector's writer thread, inside the profiled process): bench/writer_sums.c, built here
 *   against build/c/librawtrace_common.a (`make -C collectors common`), `rt_crc32` / `rt_xxh32` / `rt_xxh64` alone and
 *   whole `rt_writer_activity` calls of 8 MiB buffers to /dev/null with each checksum.
 *
 *   tsx bench/checksum.ts [--wasm build/rawtrace.wasm] [--rounds 15]
 *
 * Prints MB/s (10^6 bytes per CPU second), the median of the rounds, and each one's ratio to CRC-32.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { wasm: { type: "string", default: "build/rawtrace.wasm" }, rounds: { type: "string", default: "15" } },
});
const rounds = Number(values.rounds);
const SIZE = 8 << 20;

interface Core {
  memory: WebAssembly.Memory;
  rt_reset(): void;
  rt_alloc(n: number): number;
  rt_crc32(p: number, n: number): number;
  rt_xxh32(p: number, n: number): number;
  rt_xxh64(p: number, n: number): bigint;
}

const inst = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(values.wasm!)), {
  env: { rt_write: () => {}, rt_spill_write: () => {}, rt_spill_read: () => {}, rt_split_segment: () => {}, abort: () => { throw new Error("core aborted"); } },
});
const core = inst.exports as unknown as Core;
core.rt_reset();
const p = core.rt_alloc(SIZE + 16) + 3;
const mem = new Uint8Array(core.memory.buffer, p, SIZE);
let x = 0x5eed;
for (let i = 0; i < SIZE; i++) {
  x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
  mem[i] = x & 0xff;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** MB/s of one call of `f` over the buffer, by CPU time. */
function rate(f: (p: number, n: number) => unknown): number {
  const c0 = process.cpuUsage();
  f(p, SIZE);
  const c = process.cpuUsage(c0);
  return SIZE / ((c.user + c.system) / 1e6) / 1e6;
}
const sums: Array<[string, (p: number, n: number) => unknown]> = [["crc32", core.rt_crc32], ["xxh32", core.rt_xxh32], ["xxh64", core.rt_xxh64]];
// Warm-up (V8 tiers the core up), then in turn.
for (let i = 0; i < 3; i++) for (const [, f] of sums) f(p, SIZE);
const rates = sums.map(() => [] as number[]);
for (let i = 0; i < rounds; i++) sums.forEach(([, f], k) => rates[k].push(rate(f)));
const med = rates.map(median);
console.log(`WebAssembly (${values.wasm}): ` + sums.map(([name], k) => `${name} ${med[k].toFixed(0)} MB/s ×${(med[k] / med[0]).toFixed(2)}`).join(", "));

const dir = mkdtempSync(join(tmpdir(), "rawtrace-sums-"));
try {
  execFileSync("make", ["-s", "-C", "collectors", "common"], { stdio: "inherit" });
  const exe = join(dir, "writer_sums");
  execFileSync("cc", ["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", "collectors/common", "bench/writer_sums.c",
    "build/c/librawtrace_common.a", "-pthread", "-o", exe], { stdio: "inherit" });
  const r = JSON.parse(execFileSync(exe, [String(rounds)], { encoding: "utf8" }).trim());
  console.log(`C rt_crc32 ${r.crc32MBs} MB/s, rt_xxh32 ${r.xxh32MBs} MB/s ×${(r.xxh32MBs / r.crc32MBs).toFixed(2)}, ` +
    `rt_xxh64 ${r.xxh64MBs} MB/s ×${(r.xxh64MBs / r.crc32MBs).toFixed(2)}; rt_writer_activity to /dev/null: ` +
    `CRC-32 ${r.writerCrc32MBs} MB/s, XXH32 ${r.writerXxh32MBs} MB/s, XXH64 ${r.writerXxh64MBs} MB/s`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
