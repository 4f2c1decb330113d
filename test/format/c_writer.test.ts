/**
 * The C container writer (collectors/common/rawtrace_writer.c) writes the same bytes as src/format/writer.ts.
 *
 * Builds test/format/writer_equiv.c with `make -C collectors test-writer`, runs it, makes the same calls through the
 * TypeScript writer and compares the files byte for byte (XXH64 payload checksums, the default, and XXH32 and CRC-32
 * ones); then checks every CRC with node:zlib and every XXH32 / XXH64 with src/format/xxh32.ts / xxh64.ts, that a
 * write cut after N chunks is a prefix, that interrupted and short writes change nothing, and the writer's error
 * paths.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { crc32 } from "node:zlib";
import {
  CHUNK_FLAG_CRC, CHUNK_FLAG_XXH32, CHUNK_FLAG_XXH64, CHUNK_HEADER_SIZE, CHUNK_SYNC, ChunkType, MAGIC, PREAMBLE_SIZE,
} from "../../src/format/container.js";
import { RawtraceWriter, type DeviceInfo, type WriterOptions } from "../../src/format/writer.js";
import { xxh32 } from "../../src/format/xxh32.js";
import { xxh64Low } from "../../src/format/xxh64.js";
import { CHUNK_FLAG_SUMS } from "../../src/format/checksum.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "build/c/writer_equiv");
const ACT_BIG = 1 << 20;

/** Byte i of the activity pattern, as `pattern()` in writer_equiv.c. */
function bigBuffer(): Uint8Array {
  const b = new Uint8Array(ACT_BIG);
  for (let i = 0; i < ACT_BIG; i++) b[i] = (i * 131 + (i >>> 9)) & 0xff;
  return b;
}

const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** The calls of `write_sequence()` in writer_equiv.c, in the same order with the same inputs. */
function writeSequence(w: RawtraceWriter, big: Uint8Array): void {
  w.header({
    vendor: 1, pointerSize: 8, vendorVersion: 130001, runtimeVersion: 12080, driverVersion: 13000, pid: 4242,
    rank: 3, localRank: 1, worldSize: 8, collectorVersion: 0x010203, startNs: 1780000000123456789n,
    hostname: "höst-节点", commandLine: "python3\0train.py\0--lr=0.1\0", vendorVersionText: "CUPTI 13.0.85",
  });
  w.header({ vendor: 2, vendorVersion: 7, pid: 1, startNs: 0n, hostname: "", commandLine: "" });

  w.clock({ which: 0, vendorNs: 1780000000000000000n - 1000n, realtimeNs: 1780000000000000000n,
    monotonicNs: 123456789012n, monotonicRawNs: 123456789000n, boottimeNs: 223456789012n });
  w.clock({ which: 1, vendorNs: 0xffffffffffffffffn, realtimeNs: 9007199254740993n, monotonicNs: 0n,
    monotonicRawNs: 1n, boottimeNs: 0x8000000000000000n });
  w.clock({ which: 2, vendorNs: 1n, realtimeNs: 2n, monotonicNs: 3n, monotonicRawNs: 4n, boottimeNs: 5n });

  w.kindSizes([[1, 96], [2, 88], [3, 216], [4, 40], [5, 40], [10, 216], [0xffffffff, 0]]);
  w.kindSizes([]);

  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [1, 307, "cuLaunchKernel"], [2, 0, ""], [1, 0xffffffff, "λ-api"]]);

  w.activity(new Uint8Array(0));
  w.activity(big);
  w.activity(big.subarray(7, 20));
  w.activity(big.subarray(100, 108));

  w.strings([
    [0x00007f0012345678n, ascii("a\0b\0")],
    [0xffffffffffffffffn, Uint8Array.from([0x6b, 0xff, 0xc3, 0x28, 0x5c, 0x22, 0x0a, 0x09])],
    [0n, ""],
    [1n, new Uint8Array(0)],
    [0x00007f00deadbeefn, "核函数 🚀"],
    [0x0000555500000001n,
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_"],
  ]);

  const devices: DeviceInfo[] = [0, 1, 2].map((i) => ({
    id: i, multiprocessors: 132 + i, globalMemoryBytes: 85899345920n + BigInt(i),
    memoryBandwidth: 3352320000000n + BigInt(i), coreClockKhz: 1980000 + i, ccMajor: 9, ccMinor: i,
    maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536, regsPerMultiprocessor: 65536 + i,
    warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 233472, sharedMemPerBlockOptin: 232448,
    maxBlocksPerMultiprocessor: 32,
    uuid: i === 1 ? undefined : Uint8Array.from({ length: 16 }, (_, k) => 0xa0 + 16 * i + k),
    name: ["NVIDIA H100 80GB HBM3", "", "GéForce ™"][i],
  }));
  w.devices(devices);

  w.dropped(7, 1);
  w.dropped((1n << 40n) + 5n, 2);

  w.threadNames([[4242, 4242, "python3"], [4242, 4250, ""], [4242, 0xffffffff, "pt_autograd_0 ✓"]]);

  w.log(0, "collector started");
  w.log(2, "disk full: ü\0tail");
  w.log(1, "");

  w.chunk(200, Uint8Array.from([1, 2, 3, 4, 5]), false);
  w.chunk(0xffff, Uint8Array.from([1, 2, 3]));

  w.end();
}

const big = bigBuffer();
let tmp = "";

/** The TypeScript file and the byte offset where each chunk ends (index n = end of chunk n). */
function tsFile(opts: WriterOptions = {}): { bytes: Uint8Array; ends: number[] } {
  const mem = RawtraceWriter.inMemory(opts);
  writeSequence(mem, big);
  const ends: number[] = [];
  let at = 0;
  let first = true;
  const w = new RawtraceWriter((b) => {
    at += b.length;
    if (first) first = false;
    else ends.push(at);
  }, opts);
  writeSequence(w, big);
  const bytes = mem.bytes();
  assert.is(at, bytes.length);
  return { bytes, ends };
}

/** Byte equality without uvu's element-by-element diff (too slow for a megabyte): reports the first difference. */
function sameBytes(actual: Uint8Array, expected: Uint8Array, what: string): void {
  const n = Math.min(actual.length, expected.length);
  let i = 0;
  while (i < n && actual[i] === expected[i]) i++;
  if (i === n && actual.length === expected.length) return;
  assert.unreachable(`${what}: ${actual.length} vs ${expected.length} bytes, first difference at byte ${i}`);
}

function runC(...args: string[]): string {
  return execFileSync(BIN, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

interface ParsedChunk { offset: number; type: number; flags: number; seq: number; payload: Uint8Array }

/**
 * Walks a file chunk by chunk, checking every framing rule of docs/format.md: header CRCs and CRC-32 payloads with
 * node:zlib's crc32, XXH32 and XXH64 payloads with src/format/xxh32.ts and xxh64.ts; a header with two checksum bits
 * fails.
 */
function parseStrict(file: Uint8Array): ParsedChunk[] {
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength);
  sameBytes(file.subarray(0, 8), MAGIC, "magic");
  assert.is(dv.getUint16(8, true), 1, "major");
  assert.is(dv.getUint16(10, true), 2, "minor");
  assert.is(dv.getUint32(12, true), 0, "preamble flags");
  const out: ParsedChunk[] = [];
  let off = PREAMBLE_SIZE;
  while (off < file.length) {
    assert.is(off % 8, 0, `chunk at ${off} is 8-aligned`);
    assert.ok(off + CHUNK_HEADER_SIZE <= file.length, `header at ${off} complete`);
    assert.is(dv.getUint32(off, true), CHUNK_SYNC, `sync at ${off}`);
    const type = dv.getUint16(off + 4, true);
    const flags = dv.getUint16(off + 6, true);
    const seq = dv.getUint32(off + 8, true);
    const len = dv.getUint32(off + 12, true);
    assert.is(dv.getUint32(off + 20, true), crc32(file.subarray(off, off + 20)) >>> 0, `header crc at ${off}`);
    const payload = file.subarray(off + CHUNK_HEADER_SIZE, off + CHUNK_HEADER_SIZE + len);
    assert.is(payload.length, len, `payload at ${off} complete`);
    const sum = dv.getUint32(off + 16, true);
    const sums = flags & CHUNK_FLAG_SUMS;
    if (sums === CHUNK_FLAG_CRC) assert.is(sum, crc32(payload) >>> 0, `payload crc at ${off}`);
    else if (sums === CHUNK_FLAG_XXH32) assert.is(sum, xxh32(payload), `payload xxh32 at ${off}`);
    else if (sums === CHUNK_FLAG_XXH64) assert.is(sum, xxh64Low(payload), `payload xxh64 at ${off}`);
    else if (sums === 0) assert.is(sum, 0, `no payload checksum at ${off}`);
    else assert.unreachable(`chunk at ${off} flags two checksums or more`);
    const padded = (len + 7) & ~7;
    const pad = file.subarray(off + CHUNK_HEADER_SIZE + len, off + CHUNK_HEADER_SIZE + padded);
    assert.is(pad.length, padded - len, `padding at ${off} complete`);
    assert.ok(pad.every((x) => x === 0), `padding at ${off} is zero`);
    out.push({ offset: off, type, flags, seq, payload });
    off += CHUNK_HEADER_SIZE + padded;
  }
  assert.is(off, file.length, "no trailing bytes");
  return out;
}

test.before(() => {
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors"), "test-writer"], { stdio: ["ignore", "pipe", "inherit"] });
  tmp = mkdtempSync(join(tmpdir(), "rawtrace-cwriter-"));
});

test.after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test("C writer output is byte-identical to RawtraceWriter.inMemory()", () => {
  const out = join(tmp, "full.rawtrace");
  runC("write", out);
  sameBytes(new Uint8Array(readFileSync(out)), tsFile().bytes, "C file vs TS file");
});

for (const [cmd, checksum, flag] of [["write-crc", "crc32", CHUNK_FLAG_CRC], ["write-xxh32", "xxh32", CHUNK_FLAG_XXH32]] as const) {
  test(`C writer with rt_writer_set_checksum(${checksum}) is byte-identical to the TS writer with checksum ${checksum}`, () => {
    const out = join(tmp, `full-${checksum}.rawtrace`);
    runC(cmd, out);
    const file = new Uint8Array(readFileSync(out));
    sameBytes(file, tsFile({ checksum }).bytes, `C file vs TS file (${checksum})`);
    const chunks = parseStrict(file);
    assert.is(chunks.length, 23);
    assert.is(chunks[20].flags, 0, "chunk written without checksum");
    chunks.filter((_, i) => i !== 20).forEach((c) => assert.is(c.flags, flag, `${checksum} flag`));
    // Same chunks as the default (XXH64) file apart from the flag and checksum fields of each header.
    const x = parseStrict(new Uint8Array(readFileSync(join(tmp, "full.rawtrace"))));
    chunks.forEach((c, i) => sameBytes(c.payload, x[i].payload, `payload ${i}`));
  });
}

test("every chunk of the C file passes the format's checks (node:zlib crc32, xxh64.ts)", () => {
  const out = join(tmp, "full.rawtrace");
  const chunks = parseStrict(new Uint8Array(readFileSync(out)));
  assert.is(chunks.length, 23);
  chunks.forEach((c, i) => assert.is(c.seq, i, "seq"));
  assert.equal(chunks.map((c) => c.type), [
    ChunkType.HEADER, ChunkType.HEADER, ChunkType.CLOCK, ChunkType.CLOCK, ChunkType.CLOCK, ChunkType.KIND_SIZES,
    ChunkType.KIND_SIZES, ChunkType.API_NAMES, ChunkType.ACTIVITY, ChunkType.ACTIVITY, ChunkType.ACTIVITY,
    ChunkType.ACTIVITY, ChunkType.STRINGS, ChunkType.DEVICES, ChunkType.DROPPED, ChunkType.DROPPED,
    ChunkType.THREAD_NAMES, ChunkType.LOG, ChunkType.LOG, ChunkType.LOG, 200, 0xffff, ChunkType.END,
  ]);
  assert.is(chunks[20].flags, 0, "chunk written without checksum");
  chunks.filter((_, i) => i !== 20).forEach((c) => assert.is(c.flags, CHUNK_FLAG_XXH64, "XXH64 flag (the default)"));
  sameBytes(chunks[9].payload, big, "1 MiB activity buffer");
  assert.is(chunks[8].payload.length, 0, "empty activity buffer");
  const end = new DataView(chunks[22].payload.buffer, chunks[22].payload.byteOffset, 24);
  assert.is(end.getBigUint64(0, true), 22n, "END: chunks before");
  assert.is(end.getBigUint64(8, true), BigInt(ACT_BIG + 13 + 8), "END: activity bytes");
  assert.is(end.getBigUint64(16, true), 7n + (1n << 40n) + 5n, "END: dropped total");
  const clockEnd = new DataView(chunks[3].payload.buffer, chunks[3].payload.byteOffset, 48);
  assert.is(clockEnd.getBigUint64(8, true), 0xffffffffffffffffn, "u64 max survives");
  assert.is(clockEnd.getBigUint64(16, true), 9007199254740993n, "2^53 + 1 survives");
});

test("rt_crc32 equals node:zlib crc32 for every alignment and length", () => {
  const lines = runC("crc").trim().split("\n");
  assert.ok(lines.length > 100);
  for (const line of lines) {
    const [where, lenText, crcText] = line.split(" ");
    const len = Number(lenText);
    const expected = where === "split"
      ? crc32(big.subarray(12345), crc32(big.subarray(0, 12345)))
      : crc32(big.subarray(Number(where), Number(where) + len));
    assert.is(Number(crcText), expected >>> 0, line);
  }
});

test("a write stopped after N chunks is a prefix ending on a chunk boundary", () => {
  const { bytes, ends } = tsFile();
  assert.is(ends.length, 23);
  for (const n of [0, 1, 2, 8, 9, 10, 13, 22]) {
    const out = join(tmp, `cut-${n}.rawtrace`);
    runC("write", out, String(n));
    const c = new Uint8Array(readFileSync(out));
    const want = n === 0 ? PREAMBLE_SIZE : ends[n - 1];
    assert.is(c.length, want, `length after ${n} chunks`);
    sameBytes(c, bytes.subarray(0, want), `prefix after ${n} chunks`);
    assert.is(parseStrict(c).length, n);
  }
});

test("interrupted and short writes (pipe drained slowly, SIGALRM without SA_RESTART) change nothing", () => {
  const out = join(tmp, "interrupted.rawtrace");
  const report = runC("interrupted", out);
  assert.match(report, /^signals \d+/);
  sameBytes(new Uint8Array(readFileSync(out)), tsFile().bytes, "interrupted C file vs TS file");
});

test("error paths: full device, closed pipe, size limit, bad arguments, clocks, rt_buf", () => {
  const report = runC("selftest", tmp);
  const ok = report.trim().split("\n");
  for (const name of [
    "crc32 check value", "xxh32 empty", "xxh32 abc", "xxh32 seed", "xxh64 empty", "xxh64 abc", "unknown checksum -EINVAL",
    "preamble readable", "open /dev/full fails with ENOSPC", "oversized payload -EMSGSIZE", "writer still usable",
    "write to closed pipe -EPIPE", "error is sticky", "chunk past the limit -EFBIG", "later chunks refused",
    "file stops at the limit", "clock anchor realtime is epoch ns", "rt_buf oom flag on impossible size",
  ]) assert.ok(ok.includes(`ok ${name}`), name);
  assert.ok(ok.every((l) => l.startsWith("ok ")), report);
});

test.run();
