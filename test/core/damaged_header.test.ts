/**
 * A HEADER whose payload fails its checksum (engine.ts `salvageHeader`, docs/errors.md HEADER_DAMAGED): read anyway
 * when its layout holds, so one flipped byte in it no longer turns a ROCm, XPU or Gaudi dump into a CUDA one with no
 * events; skipped when its layout does not hold — and a HEADER whose chunk header is damaged is skipped whole by the
 * container — and then the chunks before the first activity chunk tell the vendor (NO_HEADER, engine.ts
 * beginWithoutHeader), as they check a damaged HEADER's.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { toChrome, warningOf } from "../helpers/convert.js";
import { CHUNK_HEADER_SIZE, PREAMBLE_SIZE } from "../../src/format/container.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { T0 } from "../helpers/sample_dump.js";
import { chunkSpans } from "../helpers/dump_chunks.js";
import { payloadChecksum } from "../../src/format/checksum.js";
import { isLossWarning } from "../../src/core/codes.js";

const SAMPLES = [
  { file: "alexnet_a100_rank0.rawtrace", vendor: 1 },
  { file: "mi250_minitoy_rocprof.rawtrace", vendor: 2 },
  { file: "xpu_train_pti.rawtrace", vendor: 4 },
  { file: "gaudi2_mlp_synapse.rawtrace", vendor: 5 },
];
const HDR = PREAMBLE_SIZE + CHUNK_HEADER_SIZE; // the HEADER is the first chunk: its payload's file offset
const load = (f: string) => new Uint8Array(readFileSync(new URL(`../../samples/${f}`, import.meta.url)));

/** Device-side and API events (every "X" but the tracer's metadata rows), as comparable text. */
function work(trace: { traceEvents: Array<Record<string, any>> }): string[] {
  return trace.traceEvents.filter((e) => e.ph === "X").map((e) => `${e.cat}|${e.name}|${e.ts}|${e.dur}|${e.tid}`);
}

for (const { file, vendor } of SAMPLES) {
  const intact = load(file);
  const dv = new DataView(intact.buffer);
  assert.is(dv.getUint16(PREAMBLE_SIZE + 4, true), 1, `${file}: first chunk is the HEADER`);
  assert.is(dv.getUint32(HDR, true), vendor, `${file}: vendor`);
  const hostLen = dv.getUint32(HDR + 48, true);

  test(`${file}: a flipped host-name byte: the HEADER is used (HEADER_DAMAGED ${vendor}), every event kept`, async () => {
    assert.ok(hostLen > 0, "the sample has a host name");
    const before = await toChrome(intact);
    const b = intact.slice();
    b[HDR + 52] ^= 0x20;
    const after = await toChrome(b);
    assert.ok(warningOf(after.result, "BAD_PAYLOAD_CRC"), "the checksum failure is still reported");
    const w = after.result.info.warnings.find((x) => x.code === "HEADER_DAMAGED");
    assert.ok(w, "HEADER_DAMAGED");
    assert.is(w!.detail, vendor);
    assert.is(w!.offset, PREAMBLE_SIZE);
    assert.is(warningOf(after.result, "NO_HEADER"), undefined);
    const want = work(before.trace);
    assert.ok(want.length > 20, `${file}: ${want.length} events`);
    assert.equal(work(after.trace), want);
  });

  test(`${file}: a damaged vendor id that names another vendor is corrected by the chunks that follow`, async () => {
    const want = work((await toChrome(intact)).trace);
    for (const wrong of [1, 2, 4, 5].filter((x) => x !== vendor)) {
      const b = intact.slice();
      new DataView(b.buffer).setUint32(HDR, wrong, true);
      const after = await toChrome(b);
      const w = after.result.info.warnings.find((x) => x.code === "HEADER_DAMAGED");
      assert.ok(w, `vendor ${wrong}: HEADER_DAMAGED`);
      assert.is(w!.detail, vendor, `vendor ${wrong} read, ${vendor} used`);
      assert.equal(work(after.trace), want, `vendor ${wrong}: every event`);
    }
  });

  test(`${file}: a HEADER whose layout does not hold is skipped (NO_HEADER ${vendor}: the vendor from the chunks, every event)`, async () => {
    const want = work((await toChrome(intact)).trace);
    for (const [at, value] of [[HDR, 0x55], [HDR + 4, 7], [HDR + 48, 0x7fff_0000]] as const) {
      const b = intact.slice();
      new DataView(b.buffer).setUint32(at, value, true);
      const { result, trace } = await toChrome(b);
      assert.ok(warningOf(result, "BAD_PAYLOAD_CRC"), `field @${at - HDR}`);
      assert.is(warningOf(result, "HEADER_DAMAGED"), undefined, `field @${at - HDR}`);
      const w = result.info.warnings.find((x) => x.code === "NO_HEADER");
      assert.ok(w, `field @${at - HDR}: NO_HEADER`);
      assert.is(w!.detail, vendor, `field @${at - HDR}: the vendor read from the chunks`);
      assert.equal(work(trace).length, want.length, `field @${at - HDR}: every event`);
    }
  });

  test(`${file}: a changed bit in the HEADER's chunk header (the whole chunk skipped): NO_HEADER ${vendor}, every event`, async () => {
    const want = work((await toChrome(intact)).trace);
    // The sync word, the type, the seq and the header checksum: each makes the container skip the HEADER whole.
    for (const at of [PREAMBLE_SIZE, PREAMBLE_SIZE + 4, PREAMBLE_SIZE + 8, PREAMBLE_SIZE + 20]) {
      const b = intact.slice();
      b[at] ^= 0x01;
      const { result, trace } = await toChrome(b);
      assert.ok(warningOf(result, "BAD_CHUNK_HEADER"), `byte ${at}: BAD_CHUNK_HEADER`);
      const w = result.info.warnings.find((x) => x.code === "NO_HEADER");
      assert.ok(w, `byte ${at}: NO_HEADER`);
      assert.is(w!.detail, vendor, `byte ${at}: the vendor read from the chunks`);
      assert.equal(work(trace).length, want.length, `byte ${at}: every event (${work(trace).length} of ${want.length})`);
    }
  });
}

test("a HEADER skipped whole (NO_HEADER) or with a damaged pid (HEADER_DAMAGED): CUDA's GPUs keep their pids and PTI's waits their process, the API calls' (before: GPUs moved to 5,000,000 + ordinal for a pid 0 or 1, XPU waits on a process 0 or of the damaged pid of their own)", async () => {
  for (const file of ["alexnet_a100_rank0.rawtrace", "xpu_train_pti.rawtrace"]) {
    const intact = load(file);
    const before = await toChrome(intact);
    const lanes = (t: typeof before.trace) => t.traceEvents.filter((e) => e.ph === "X").map((e) => `${e.cat}|${e.ts}|${e.pid}|${e.tid}`).sort();
    const skipped = intact.slice();
    skipped[PREAMBLE_SIZE + 20] ^= 0x01; // the HEADER's chunk header checksum: the chunk skipped whole
    const pidOne = intact.slice();
    new DataView(pidOne.buffer).setUint32(HDR + 20, 1, true); // its pid read as 1 (a GPU ordinal), the payload checksum failing
    for (const [what, b, code] of [["skipped", skipped, "NO_HEADER"], ["pid 1", pidOne, "HEADER_DAMAGED"]] as const) {
      const after = await toChrome(b);
      assert.ok(warningOf(after.result, code), `${file}, ${what}: ${code}`);
      assert.equal(lanes(after.trace), lanes(before.trace), `${file}, ${what}: every event on its own process and thread`);
    }
  }
});

test("ROCm without its HEADER (NO_HEADER) or with a damaged pid (HEADER_DAMAGED): host rows keep the process of the THREAD_NAMES before the first activity, their thread names, Kineto's GPU pids and a lead process_name (before: pid 0 or the damaged pid, names lost, GPUs at 5,000,000 + ordinal, an API call at index 0)", async () => {
  const intact = load("mi250_minitoy_rocprof.rawtrace");
  const before = await toChrome(intact);
  const rows = (t: typeof before.trace) => ({
    lanes: t.traceEvents.filter((e) => e.ph === "X").map((e) => `${e.cat}|${e.ts}|${e.pid}|${e.tid}`).sort(),
    threads: t.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name").map((e) => `${e.pid}/${e.tid}=${e.args.name}`).sort(),
  });
  const want = rows(before.trace);
  assert.ok(want.threads.some((n) => /^\d+\/\d+=thread \d+ \(python3\)$/.test(n)), want.threads.join());
  const skipped = intact.slice();
  skipped[PREAMBLE_SIZE + 20] ^= 0x01; // the HEADER's chunk header checksum: the chunk skipped whole
  const pidNear = intact.slice();
  pidNear[HDR + 20] ^= 0x01; // its pid one off, the payload checksum failing
  const hostPid = new DataView(intact.buffer).getUint32(HDR + 20, true);
  for (const [what, b, code] of [["skipped", skipped, "NO_HEADER"], ["pid damaged", pidNear, "HEADER_DAMAGED"]] as const) {
    const after = await toChrome(b);
    assert.ok(warningOf(after.result, code), `${what}: ${code}`);
    assert.equal(rows(after.trace), want, `${what}: every event on its own process and thread, the threads named`);
    const first = after.trace.traceEvents[0];
    assert.equal([first.ph, first.name, first.pid], ["M", "process_name", hostPid], `${what}: the lead names the host process`);
  }
  // Without THREAD_NAMES before the first activity there is nothing better than the HEADER's pid (or 0): as before.
  const spans = chunkSpans(skipped);
  const names = spans.find((c) => c.type === 9)!;
  const bare = new Uint8Array([...skipped.subarray(0, names.off), ...skipped.subarray(names.end)]);
  const lone = await toChrome(bare);
  assert.ok(lone.trace.traceEvents.filter((e) => e.ph === "X" && e.cat === "cuda_runtime").every((e) => e.pid === 0));
});

test("ranks from a damaged HEADER are kept only where plausible (a changed high bit would misplace a merge)", async () => {
  const intact = load("alexnet_a100_rank0.rawtrace");
  const b = intact.slice();
  const dv = new DataView(b.buffer);
  dv.setInt32(HDR + 24, 1 << 30, true); // rank
  const { info: i1 } = await import("../helpers/convert.js");
  const damaged = await i1(b);
  assert.is(damaged.rank, -1);
  assert.ok(damaged.warnings.some((w) => w.code === "HEADER_DAMAGED"));
  const ok = intact.slice();
  new DataView(ok.buffer).setUint8(HDR + 52, ok[HDR + 52] ^ 0x20); // another byte: the rank stays
  assert.is((await i1(ok)).rank, 0);
});

test("an intact HEADER after a damaged one that named the wrong vendor replaces it, with the tables read between", async () => {
  const intact = load("mi250_minitoy_rocprof.rawtrace");
  const dv = new DataView(intact.buffer);
  const chunkEnd = (at: number) => at + CHUNK_HEADER_SIZE + ((dv.getUint32(at + 12, true) + 7) & ~7);
  const headerEnd = chunkEnd(PREAMBLE_SIZE);
  // The chunk before which the intact copy goes: the first ACTIVITY (after API_NAMES, AGENTS and KERNEL_SYMBOLS).
  let act = headerEnd;
  while (dv.getUint16(act + 4, true) !== 5) act = chunkEnd(act);
  const header = intact.slice(PREAMBLE_SIZE, headerEnd);
  const damaged = intact.slice(PREAMBLE_SIZE, headerEnd);
  new DataView(damaged.buffer).setUint32(CHUNK_HEADER_SIZE, 1, true); // vendor 1: CUDA, wrong; the checksum fails
  const b = new Uint8Array(intact.length + header.length);
  b.set(intact.subarray(0, PREAMBLE_SIZE));
  b.set(damaged, PREAMBLE_SIZE);
  b.set(intact.subarray(headerEnd, act), headerEnd);
  b.set(header, act);
  b.set(intact.subarray(act), act + header.length);
  const before = await toChrome(intact);
  const after = await toChrome(b);
  assert.ok(warningOf(after.result, "BAD_PAYLOAD_CRC"));
  assert.is(warningOf(after.result, "HEADER_DAMAGED"), undefined, "the intact HEADER is the one used");
  assert.equal(work(after.trace), work(before.trace), "kernel names from KERNEL_SYMBOLS read before it");
});

test("corrected to CUDA with exactly 1024 API names (the table's growth point): every name handed to the CUDA decoder", async () => {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 5, vendorVersion: 28, runtimeVersion: 12080, driverVersion: 12080, pid: 7, rank: 0, worldSize: 1, startNs: T0, hostname: "h", commandLine: "x" });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES.cuda12).map(([k, sz]) => [Number(k), sz] as const));
  w.apiNames(Array.from({ length: 1024 }, (_, i) => [2, 1000 + i, `fn${i}_v7000`] as [number, number, string]));
  w.activity(C.concat(Array.from({ length: 1024 }, (_, i) => C.apiRecord("cuda12", {
    kind: 5, cbid: 1000 + i, start: T0 + BigInt(1000 * i), end: T0 + BigInt(1000 * i + 500), processId: 7, threadId: 8, correlationId: i + 1,
  }))));
  w.end();
  const b = w.bytes();
  // The HEADER's payload checksum is broken (a changed byte), so vendor 5 is read from it and then corrected.
  b[PREAMBLE_SIZE + CHUNK_HEADER_SIZE + 52] ^= 0x01; // the host name's first byte
  const { trace, result } = await toChrome(b);
  assert.is(result.info.warnings.find((x) => x.code === "HEADER_DAMAGED")?.detail, 1);
  const names = trace.traceEvents.filter((e) => e.cat === "cuda_runtime").map((e) => e.name as string);
  assert.is(names.length, 1024);
  assert.is(names.filter((n) => n.endsWith("_v7000")).length, 0, "every name shown as the CUDA decoder shows it");
});

test("corrected from ROCm to CUDA: CUDA's clock rule (start and end anchors fitted), not rocprofiler's same-rate clocks", async () => {
  const dump = (vendor: number) => {
    const w = RawtraceWriter.inMemory();
    w.header({ vendor, vendorVersion: 28, runtimeVersion: 12080, driverVersion: 12080, pid: 7, rank: 0, worldSize: 1, startNs: T0, hostname: "h", commandLine: "x" });
    w.clock({ which: 0, vendorNs: T0, realtimeNs: T0 + 1_000_000n, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
    w.kindSizes(Object.entries(C.SIZES.cuda12).map(([k, sz]) => [Number(k), sz] as const));
    w.apiNames([[2, 211, "cudaLaunchKernel_v7000"]]);
    w.activity(C.concat([1, 1000].map((ms, i) => C.apiRecord("cuda12", {
      kind: 5, cbid: 211, start: T0 + BigInt(ms) * 1_000_000n, end: T0 + BigInt(ms) * 1_000_000n + 5000n, processId: 7, threadId: 8, correlationId: i + 1,
    }))));
    // The vendor clock runs 100 ppm slow against CLOCK_REALTIME: the end anchor is 0.2 ms further off after 2 s.
    w.clock({ which: 1, vendorNs: T0 + 2_000_000_000n, realtimeNs: T0 + 2_001_200_000n, monotonicNs: 2n, monotonicRawNs: 2n, boottimeNs: 2n });
    w.end();
    return w.bytes();
  };
  const ts = (t: { traceEvents: Array<Record<string, any>> }) => t.traceEvents.filter((e) => e.cat === "cuda_runtime").map((e) => e.ts);
  const want = ts((await toChrome(dump(1))).trace);
  const b = dump(2);
  b[PREAMBLE_SIZE + CHUNK_HEADER_SIZE + 52] ^= 0x01;
  const { trace, result } = await toChrome(b);
  assert.is(result.info.warnings.find((x) => x.code === "HEADER_DAMAGED")?.detail, 1);
  assert.equal(ts(trace), want);
});

test("a damaged HEADER after an intact one changes nothing (the first HEADER is the dump's)", async () => {
  const intact = load("mi250_minitoy_rocprof.rawtrace");
  const len = new DataView(intact.buffer).getUint32(PREAMBLE_SIZE + 12, true);
  const chunk = intact.subarray(PREAMBLE_SIZE, PREAMBLE_SIZE + CHUNK_HEADER_SIZE + ((len + 7) & ~7));
  // The same HEADER again at the end, as a later chunk (seq past the last), its process id changed.
  const extra = chunk.slice();
  const dv = new DataView(extra.buffer);
  dv.setUint32(8, 1000, true);
  const { crc32 } = await import("node:zlib");
  dv.setUint32(20, crc32(extra.subarray(0, 20)) >>> 0, true);
  dv.setUint32(CHUNK_HEADER_SIZE + 20, 4242, true);
  const b = new Uint8Array(intact.length + extra.length);
  b.set(intact);
  b.set(extra, intact.length);
  const before = await toChrome(intact);
  const after = await toChrome(b);
  assert.ok(warningOf(after.result, "BAD_PAYLOAD_CRC"));
  assert.is(warningOf(after.result, "HEADER_DAMAGED"), undefined);
  assert.equal(work(after.trace), work(before.trace));
});

test.run();

/** Stores chunk `at`'s checksums again after an edit: its payload's (by its flags) and its header's CRC-32. */
async function resum(b: Uint8Array, at: number): Promise<void> {
  const { crc32 } = await import("node:zlib");
  const dv = new DataView(b.buffer, b.byteOffset);
  const len = dv.getUint32(at + 12, true);
  dv.setUint32(at + 16, payloadChecksum(dv.getUint16(at + 6, true), b.subarray(at + CHUNK_HEADER_SIZE, at + CHUNK_HEADER_SIZE + len)), true);
  dv.setUint32(at + 20, crc32(b.subarray(at, at + 20)) >>> 0, true);
}

test("an intact HEADER naming a vendor whose activity chunks are of the other kind: FOREIGN_CHUNK, a loss, each chunk's bytes said (before: 'chunk type 5 is unknown', not a loss, every event gone with exit 0)", async () => {
  for (const [file, wrong, kind] of [["h100_torch_train_nvtx.rawtrace", 5, 5], ["gaudi2_mlp_synapse.rawtrace", 1, 14]] as const) {
    const b = load(file);
    const spans = chunkSpans(b).filter((c) => c.type === kind);
    assert.ok(spans.length > 0, `${file}: activity chunks of type ${kind}`);
    new DataView(b.buffer).setUint32(HDR, wrong, true);
    await resum(b, PREAMBLE_SIZE);
    const { result } = await toChrome(b);
    assert.is(warningOf(result, "BAD_PAYLOAD_CRC"), undefined, `${file}: the checksums hold`);
    const w = warningOf(result, "FOREIGN_CHUNK")!;
    assert.equal([w.count, w.detail, w.offset], [spans.length, kind, spans[0].off], file);
    assert.is(warningOf(result, "UNKNOWN_CHUNK"), undefined, `${file}: not said as an unknown chunk`);
    assert.ok(isLossWarning("FOREIGN_CHUNK"));
    assert.is(result.info.loss.activityChunks, spans.length, `${file}: every activity chunk lost`);
    assert.is(result.info.loss.bytes, spans.reduce((a, c) => a + c.end - c.off, 0), `${file}: their bytes`);
  }
});
