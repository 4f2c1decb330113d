import { test } from "uvu";
import * as assert from "uvu/assert";
import { toChrome, info } from "../helpers/convert.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { CHUNK_HEADER_SIZE, PREAMBLE_SIZE } from "../../src/format/container.js";
import { readFileSync } from "node:fs";
import { chunkSpans } from "../helpers/dump_chunks.js";
import { isLossWarning } from "../../src/core/codes.js";

/** File offsets of every chunk in a well-formed dump. */
function chunkOffsets(b: Uint8Array): number[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: number[] = [];
  let p = PREAMBLE_SIZE;
  while (p + CHUNK_HEADER_SIZE <= b.length) {
    out.push(p);
    p += CHUNK_HEADER_SIZE + ((dv.getUint32(p + 12, true) + 7) & ~7);
  }
  return out;
}

async function rejects(bytes: Uint8Array, name: string, offset: number): Promise<void> {
  try {
    await toChrome(bytes, {}, "bad.rawtrace");
    assert.unreachable("should have thrown");
  } catch (e: any) {
    assert.is(e.name, name);
    assert.is(e.offset, offset);
    assert.match(e.message, /^bad\.rawtrace: offset \d+: /);
  }
}

test("wrong magic, future major version and an empty file are clear errors with offsets", async () => {
  const good = sampleDump();
  // Someone passed a JSON trace: BAD_MAGIC, and the message says what the file looks like.
  const json = new TextEncoder().encode(' \n{"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": 2}]}');
  await rejects(json, "BAD_MAGIC", 0);
  await toChrome(json, {}, "bad.rawtrace").then(() => assert.unreachable(), (e) => assert.match(e.message, "it looks like JSON text"));
  // A damaged magic whose first chunk header is damaged too: nothing proves the rest a dump.
  const bad = good.slice();
  bad[0] = 0x7b;
  bad[PREAMBLE_SIZE + 8] ^= 1; // the HEADER chunk's seq: its header CRC fails
  await rejects(bad, "BAD_MAGIC", 0);
  // A damaged magic before a newer major version: not read as a damaged format 1 dump.
  const newer = good.slice();
  newer[0] = 0x7b;
  newer[8] = 2;
  await rejects(newer, "BAD_MAGIC", 0);
  const future = good.slice();
  future[8] = 2;
  await rejects(future, "FUTURE_FORMAT", 8);
  await rejects(new Uint8Array(0), "EMPTY", 0);
  await rejects(good.slice(0, 10), "EMPTY", 0);
  await rejects(good.slice(0, 3), "EMPTY", 0);
  // Short, but not the magic's bytes: not a dump cut early (the first byte alone decided before).
  await rejects(new TextEncoder().encode("RAWTRAC-12"), "BAD_MAGIC", 0);
  await rejects(new TextEncoder().encode("RX"), "BAD_MAGIC", 0);
});

test("a damaged magic before a valid chunk header is read as the dump it is (PREAMBLE_DAMAGED), in every pass", async () => {
  const good = sampleDump();
  const ref = await toChrome(good);
  const ev = (t: any) => JSON.stringify(t.traceEvents.filter((e: any) => e.ph !== "M"));
  const said = (t: any, detail: number) => {
    const w = t.rawtrace.warnings;
    assert.equal(w.filter((x: any) => x.code === "PREAMBLE_DAMAGED"), [{ code: "PREAMBLE_DAMAGED", count: 1, offset: 0, detail }]);
    assert.equal(w.filter((x: any) => x.code !== "PREAMBLE_DAMAGED"), ref.trace.rawtrace.warnings); // nothing else changed
  };
  for (const [at, xor] of [[0, 0x7b ^ 0x52], [3, 0x10], [7, 0xff]] as const) {
    const bad = good.slice();
    bad[at] ^= xor;
    const got = await toChrome(bad);
    assert.is(got.result.events, ref.result.events);
    assert.is(ev(got.trace), ev(ref.trace));
    said(got.trace, 1);
  }
  // All 8 bytes changed (zeros over the magic), the minor version and flags damaged too: still a dump.
  const wiped = good.slice();
  wiped.fill(0, 0, 8);
  wiped[10] = 0xee;
  wiped[12] = 0x55;
  const got = await toChrome(wiped);
  assert.is(got.result.events, ref.result.events);
  assert.is(ev(got.trace), ev(ref.trace));
  said(got.trace, 8);
  // A major one bit away from 1 (3, 5, … 32769: what one changed bit makes of it; newer formats do not use them)
  // before a valid chunk header: read as format 1. A newer major (2), or one of them with nothing valid after it:
  // FUTURE_FORMAT, as before; a file that ends inside that chunk header too.
  for (const major of [3, 5, 0x8001]) {
    const m = good.slice();
    new DataView(m.buffer).setUint16(8, major, true);
    const got = await toChrome(m);
    assert.is(ev(got.trace), ev(ref.trace), `major ${major}`);
    said(got.trace, 1); // one byte of the ten changed (0x8001: its high byte)
    m[PREAMBLE_SIZE + 8] ^= 1; // the first chunk header's CRC fails
    await rejects(m, "FUTURE_FORMAT", 8);
    await rejects(good.slice(0, PREAMBLE_SIZE + 10).map((v, i) => (i === 8 ? major & 255 : i === 9 ? major >> 8 : v)), "FUTURE_FORMAT", 8);
  }
  // Cut before the first chunk header ends: nothing proves a dump, BAD_MAGIC as before.
  await rejects(wiped.slice(0, PREAMBLE_SIZE + CHUNK_HEADER_SIZE - 1), "BAD_MAGIC", 0);
  const head = (await toChrome(wiped.slice(0, PREAMBLE_SIZE + CHUNK_HEADER_SIZE))).trace.rawtrace.warnings;
  assert.ok(head.some((x: any) => x.code === "PREAMBLE_DAMAGED"), JSON.stringify(head));
});

test("every single changed bit of the preamble and the first chunk header leaves every event (four vendors' samples)", async () => {
  for (const name of ["alexnet_a100_rank0", "mi250_minitoy_rocprof", "xpu_train_pti", "gaudi2_mlp_synapse"]) {
    const b = new Uint8Array(readFileSync(new URL(`../../samples/${name}.rawtrace`, import.meta.url)));
    const want = (await toChrome(b)).result.events;
    for (let i = 0; i < PREAMBLE_SIZE + CHUNK_HEADER_SIZE; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const x = b.slice();
        x[i] ^= 1 << bit;
        const got = await toChrome(x).then((r) => r.result.events, (e) => `${e.name}`);
        assert.is(got, want, `${name}: byte ${i} bit ${bit}`);
      }
    }
  }
});

test("every single changed bit of any chunk header loses no more than that chunk, and a loss is said (four vendors' samples)", async () => {
  for (const name of ["alexnet_a100_rank0", "mi250_minitoy_rocprof", "xpu_train_pti", "gaudi2_mlp_synapse"]) {
    const b = new Uint8Array(readFileSync(new URL(`../../samples/${name}.rawtrace`, import.meta.url)));
    const want = (await toChrome(b)).result.events;
    for (const c of chunkSpans(b)) {
      // The floor: the dump without that chunk at all.
      const floor = (await toChrome(new Uint8Array([...b.subarray(0, c.off), ...b.subarray(c.end)]))).result.events;
      for (let i = 0; i < CHUNK_HEADER_SIZE; i++) {
        for (let bit = 0; bit < 8; bit++) {
          const x = b.slice();
          x[c.off + i] ^= 1 << bit;
          const { trace, result } = await toChrome(x);
          const at = `${name}: chunk type ${c.type} at ${c.off}, byte ${i} bit ${bit}`;
          assert.ok(result.events <= want && result.events >= floor, `${at}: ${result.events} events (${floor}–${want})`);
          if (result.events < want) assert.ok(trace.rawtrace.warnings.some((w: { code: string }) => isLossWarning(w.code)), `${at}: loss said`);
        }
      }
    }
  }
});

test("the five vendors' samples cut at 600 places each: never a failure, events never fewer as the cut grows, none where the whole dump has none", async () => {
  const place = (e: { ts: number; pid: number; tid: number }) => `${e.ts}|${e.pid}|${e.tid}`;
  for (const name of ["alexnet_a100_rank0", "mi250_minitoy_rocprof", "xpu_train_pti", "gaudi2_mlp_synapse", "h100_torch_train_nvtx"]) {
    const b = new Uint8Array(readFileSync(new URL(`../../samples/${name}.rawtrace`, import.meta.url)));
    const full = await toChrome(b);
    const places = new Set(full.trace.traceEvents.filter((e: any) => e.ph === "X").map(place));
    const stride = Math.floor(b.length / 600);
    let last = 0;
    for (let cut = PREAMBLE_SIZE; cut < b.length; cut += stride) {
      const { trace, result } = await toChrome(b.subarray(0, cut));
      assert.ok(result.events >= last, `${name} cut at ${cut}: ${result.events} events, ${last} at a shorter cut`);
      last = result.events;
      // By place (time, process, row): a cut Synapse name may change a DMA op's kind, as docs/decoders/hpu.md says.
      const extra = trace.traceEvents.filter((e: any) => e.ph === "X" && !places.has(place(e)));
      assert.is(extra.length, 0, `${name} cut at ${cut}: ${JSON.stringify(extra[0])}`);
    }
    assert.ok(last <= full.result.events);
  }
});

// The reader's damage handling must not depend on which payload checksum the dump carries: every case runs on a
// dump with XXH64 payload checksums (what writers store now), with XXH32 (format 1.1 dumps) and with CRC-32 (1.0).
for (const checksum of ["xxh64", "xxh32", "crc32"] as const) {
  test(`a dump cut at every byte converts every complete chunk before the cut and says where (${checksum})`, async () => {
    const full = sampleDump({ checksum });
    const offs = chunkOffsets(full);
    const fullEvents = (await toChrome(full)).result.events;
    let last = -1;
    for (let cut = PREAMBLE_SIZE; cut <= full.length; cut++) {
      const { trace, result } = await toChrome(full.subarray(0, cut));
      assert.ok(result.events >= last, `events never decrease (cut ${cut})`);
      last = result.events;
      const w = trace.rawtrace.warnings;
      const complete = offs.filter((o, i) => (offs[i + 1] ?? full.length) <= cut);
      const partialAt = offs.find((o, i) => o < cut && (offs[i + 1] ?? full.length) > cut);
      if (partialAt !== undefined) {
        const t = w.find((x: any) => x.code === "TRUNCATED");
        assert.ok(t, `TRUNCATED reported at cut ${cut}`);
        assert.is(t.offset, partialAt);
        assert.is(t.detail, cut - partialAt);
      }
      // NO_END at the file's end (it said offset 0).
      if (cut < full.length) assert.is(w.find((x: any) => x.code === "NO_END")?.offset, cut, `NO_END at cut ${cut}`);
      assert.ok(complete.length >= 0);
    }
    assert.is(last, fullEvents);
  });

  test(`a damaged payload is skipped with BAD_PAYLOAD_CRC; later chunks still convert (${checksum})`, async () => {
    const full = sampleDump({ checksum });
    const offs = chunkOffsets(full);
    const dv = new DataView(full.buffer);
    // Find the first ACTIVITY chunk (type 5) and flip a byte inside its payload.
    const act = offs.find((o) => dv.getUint16(o + 4, true) === 5)!;
    const bad = full.slice();
    bad[act + CHUNK_HEADER_SIZE + 40] ^= 0x10;
    const { trace, result } = await toChrome(bad);
    const w = trace.rawtrace.warnings.find((x: any) => x.code === "BAD_PAYLOAD_CRC");
    assert.ok(w);
    assert.is(w.offset, act);
    // The second activity chunk (kernels) is still there.
    assert.is(trace.traceEvents.filter((e: any) => e.cat === "kernel").length, 2);
    assert.ok(result.events < (await toChrome(full)).result.events);
  });

  test(`a damaged chunk header is skipped by resynchronizing on the next chunk (${checksum})`, async () => {
    const full = sampleDump({ checksum });
    const offs = chunkOffsets(full);
    const dv = new DataView(full.buffer);
    const act = offs.find((o) => dv.getUint16(o + 4, true) === 5)!;
    const bad = full.slice();
    bad[act + 13] ^= 0xff; // length field: header CRC fails
    const { trace } = await toChrome(bad);
    const w = trace.rawtrace.warnings.find((x: any) => x.code === "BAD_CHUNK_HEADER");
    assert.ok(w, "BAD_CHUNK_HEADER");
    assert.is(w.offset, act);
    assert.is(trace.traceEvents.filter((e: any) => e.cat === "kernel").length, 2);
  });

  test(`a length field damaged with a valid header CRC loses only that chunk: later chunks still convert (${checksum})`, async () => {
    const { fixCrc } = await import("../fuzz/mutate.js");
    const full = sampleDump({ checksum });
    const offs = chunkOffsets(full);
    const dv = new DataView(full.buffer);
    const act = offs.find((o) => dv.getUint16(o + 4, true) === 5)!;
    const bad = full.slice();
    const bdv = new DataView(bad.buffer);
    bdv.setUint32(act + 12, 0x0fffffff, true); // declares ~256 MiB in a ~3 KiB file
    fixCrc(bad, act);
    const { trace } = await toChrome(bad);
    assert.is(trace.traceEvents.filter((e: any) => e.cat === "kernel").length, 2, "the next activity chunk converts");
    const w = trace.rawtrace.warnings.find((x: any) => x.code === "BAD_CHUNK_HEADER");
    assert.ok(w);
    assert.is(w.offset, act);
    assert.not.ok(trace.rawtrace.warnings.some((x: any) => x.code === "TRUNCATED"));
  });
}

test("a duplicated chunk is dropped, so no event appears twice", async () => {
  const full = sampleDump();
  const offs = chunkOffsets(full);
  const dv = new DataView(full.buffer);
  const i = offs.findIndex((o) => dv.getUint16(o + 4, true) === 5 && offs.indexOf(o) > 0);
  const second = offs.filter((o) => dv.getUint16(o + 4, true) === 5)[1];
  const end = offs[offs.indexOf(second) + 1];
  const dup = new Uint8Array(full.length + (end - second));
  dup.set(full.subarray(0, end), 0);
  dup.set(full.subarray(second, end), end);
  dup.set(full.subarray(end), end + (end - second));
  assert.ok(i >= 0);
  const { trace } = await toChrome(dup);
  assert.is(trace.traceEvents.filter((e: any) => e.cat === "kernel").length, 2);
  assert.ok(trace.rawtrace.warnings.some((x: any) => x.code === "DUPLICATE_CHUNK"));
});

test("a chunk larger than the input window (6 MiB activity buffer) converts", async () => {
  const L = "cuda13";
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: 130001, pid: 1, startNs: 1n, hostname: "h", commandLine: "x" });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.strings([[8n, "k"]]);
  const n = Math.ceil((6 << 20) / C.SIZES[L][10]);
  const recs: Uint8Array[] = [];
  const T = 1_780_000_000_000_000_000n;
  for (let i = 0; i < n; i++) {
    recs.push(C.kernelRecord(L, { start: T + BigInt(i * 10), end: T + BigInt(i * 10 + 5), deviceId: 0, contextId: 1, streamId: 7, correlationId: i + 1, namePtr: 8n }));
  }
  w.activity(C.concat(recs));
  w.end();
  const { trace, result } = await toChrome(w.bytes());
  assert.is(result.events, n);
  assert.is(trace.traceEvents.filter((e: any) => e.cat === "kernel").length, n);
  assert.equal(trace.rawtrace.warnings, []);
});

test("unknown chunk types and record kinds are skipped and counted", async () => {
  const L = "cuda13";
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: 130001, pid: 1, startNs: 1n, hostname: "h", commandLine: "x" });
  w.kindSizes([...Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const), [46, 168]]);
  w.chunk(99, new Uint8Array([1, 2, 3]));
  w.strings([[8n, "k"]]);
  const pcie = new Uint8Array(168);
  new DataView(pcie.buffer).setUint32(0, 46, true);
  const T = 1_780_000_000_000_000_000n;
  w.activity(C.concat([pcie, C.kernelRecord(L, { start: T, end: T + 5n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 1, namePtr: 8n })]));
  w.end();
  const { trace } = await toChrome(w.bytes());
  assert.is(trace.traceEvents.filter((e: any) => e.cat === "kernel").length, 1);
  const codes = trace.rawtrace.warnings.map((x: any) => x.code);
  assert.ok(codes.includes("UNKNOWN_CHUNK"));
  assert.ok(codes.includes("UNKNOWN_KIND"));
  const i = await info(w.bytes());
  assert.is(i.records.PCIE, 1);
  assert.is(i.records.CONCURRENT_KERNEL, 1);
});

test("a pointer re-used with other bytes resolves to the bytes valid at each record", async () => {
  const L = "cuda13";
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: 130001, pid: 1, startNs: 1n, hostname: "h", commandLine: "x" });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  const T = 1_780_000_000_000_000_000n;
  const k = (i: number) => C.kernelRecord(L, { start: T + BigInt(i), end: T + BigInt(i + 1), deviceId: 0, contextId: 1, streamId: 7, correlationId: i, namePtr: 0x40n });
  w.strings([[0x40n, "first_kernel"]]);
  w.activity(k(1));
  w.strings([[0x40n, "second_kernel"]]);
  w.activity(k(2));
  w.end();
  const { trace } = await toChrome(w.bytes());
  assert.equal(trace.traceEvents.filter((e: any) => e.cat === "kernel").map((e: any) => e.name), ["first_kernel", "second_kernel"]);
});

test("info: header, devices, records per kind", async () => {
  const i = await info(sampleDump());
  assert.is(i.vendor, "cuda");
  assert.is(i.vendorVersion, 130001);
  assert.is(i.pid, 4242);
  assert.is(i.rank, 3);
  assert.is(i.worldSize, 8);
  assert.is(i.hostname, "gpu-node-1");
  assert.equal(i.commandLine, ["/usr/bin/python3", "train.py"]);
  assert.is(i.devices[0].name, "NVIDIA H100 80GB HBM3");
  assert.is(i.devices[0].computeCapability, "9.0");
  assert.is(i.records.CONCURRENT_KERNEL, 2);
  assert.is(i.records.RUNTIME, 3);
  assert.is(i.records.MARKER, 4);
  assert.is(i.droppedRecords, 7);
  assert.is(i.complete, true);
  assert.is(i.externalCorrelations, 1);
});

test.run();
