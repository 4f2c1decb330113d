/**
 * Test helpers: single PTI view records (collectors/xpu/pti_abi.h offsets) and small PTI dumps around them, for
 * test/decode/pti_*.test.ts. Times are ns after {@link T0} (CLOCK_REALTIME, as PTI's default clock).
 */
import { RawtraceWriter, type DeviceHandle } from "../../src/format/writer.js";
import { ChunkType, Vendor } from "../../src/format/container.js";
import { deviceUuid, ptiSizes, type PtiGen } from "../../src/tools/kineto_to_pti.js";

/** Unix ns of the dumps' start anchor. */
export const T0 = 1_764_079_200_000_000_000n;
/** Pointer value of string `i` in the dumps' STRINGS. */
export const ptr = (i: number) => 0x7f00_0000_1000n + BigInt(i) * 0x40n;

/** A zeroed record of `kind` sized for `gen` (or `size` bytes). */
export function rec(kind: number, gen: PtiGen, size?: number): { b: Uint8Array; dv: DataView; u64: (o: number, v: bigint | number) => void } {
  const b = new Uint8Array(size ?? ptiSizes(gen)[kind] ?? 24);
  const dv = new DataView(b.buffer);
  dv.setUint32(0, kind, true);
  return { b, dv, u64: (o, v) => dv.setBigUint64(o, BigInt(v), true) };
}

/** A kernel on device `dev` (UUID of kineto_to_pti), SYCL queue `queue`, name string `name`, times after T0. */
export function kernel(gen: PtiGen, corr: number, start: number, end: number, o: { dev?: number; queue?: bigint; l0q?: bigint; ctx?: bigint; name?: number; size?: number; uuid?: Uint8Array; handle?: bigint } = {}): Uint8Array {
  const r = rec(1, gen, o.size);
  r.u64(8, o.l0q ?? 0x5000n);
  r.u64(16, o.ctx ?? 0x6000n);
  r.u64(24, ptr(o.name ?? 0));
  r.u64(48, corr);
  r.dv.setUint32(56, corr, true);
  r.b.set(o.uuid ?? deviceUuid(o.dev ?? 0), 80);
  if (o.handle !== undefined && r.b.length >= 176) r.u64(168, o.handle);
  r.u64(96, start ? T0 + BigInt(start) - 50n : 0n);
  r.u64(104, start ? T0 + BigInt(start) : 0n);
  r.u64(112, end ? T0 + BigInt(end) : 0n);
  r.u64(120, start ? T0 + BigInt(start) - 20n : 0n);
  r.u64(152, o.queue ?? 1n);
  return r.b;
}

/** A runtime (kind 6, group 3) or driver (kind 3, group 1) API call. */
export function apiCall(kind: 3 | 6, id: number, corr: number, start: number, end: number, tid = 7): Uint8Array {
  const r = rec(kind, "1.2");
  r.u64(8, T0 + BigInt(start));
  r.u64(16, T0 + BigInt(end));
  r.dv.setUint32(24, kind === 6 ? 3 : 1, true);
  r.dv.setUint32(28, id, true);
  r.dv.setUint32(32, 4242, true);
  r.dv.setUint32(36, tid, true);
  r.dv.setUint32(40, corr, true);
  return r.b;
}

/** A memory copy (kind 8) of memcpy type `type` (src×4+dst), on device `dev`. */
export function copy(gen: PtiGen, corr: number, start: number, end: number, type: number, o: { dev?: number; bytes?: number } = {}): Uint8Array {
  const r = rec(8, gen);
  r.dv.setUint32(4, type, true);
  r.dv.setUint32(8, type >> 2, true);
  r.dv.setUint32(12, type & 3, true);
  r.u64(32, ptr(1));
  r.b.set(deviceUuid(o.dev ?? 0), 56);
  r.dv.setUint32(80, corr, true);
  r.u64(96, T0 + BigInt(start));
  r.u64(104, T0 + BigInt(end));
  r.u64(120, o.bytes ?? 4096);
  r.u64(128, 1n);
  return r.b;
}

/** An external correlation record (kind 7). PTI kinds: 1 UNKNOWN, 2 CUSTOM_0, 3 CUSTOM_1. */
export function external(corr: number, id: number, ptiKind = 2): Uint8Array {
  const r = rec(7, "1.2");
  r.dv.setUint32(4, corr, true);
  r.u64(8, id);
  r.dv.setUint32(16, ptiKind, true);
  return r.b;
}

/** Options of {@link ptiDump}. */
export interface PtiDumpOptions {
  gen?: PtiGen;
  /** KIND_SIZES to write (default: the generation's); null writes none. */
  kindSizes?: Array<[number, number]> | null;
  /** Devices listed in DEVICES (their kineto_to_pti UUIDs; default 0 and 1). */
  devices?: number[];
  /** The DEVICES handle table (device and tile handles); none by default. */
  handles?: DeviceHandle[];
  /** A DEVICES payload written as given instead (malformed tables). */
  devicesRaw?: Uint8Array;
  strings?: Array<[bigint, string]>;
  apiNames?: Array<[number, number, string]>;
}

/** A PTI dump: HEADER, CLOCK, KIND_SIZES, API_NAMES, DEVICES, STRINGS, one ACTIVITY chunk per buffer, CLOCK, END. */
export function ptiDump(buffers: Uint8Array[][], o: PtiDumpOptions = {}): Uint8Array {
  const gen = o.gen ?? "1.2";
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: Vendor.INTEL_PTI, vendorVersion: gen === "1.2" ? 10200 : 1700, pid: 4242, startNs: T0, hostname: "h",
    commandLine: "x", vendorVersionText: gen === "1.2" ? "1.2.0" : "0.17.0",
  });
  const anchor = (which: number, ns: bigint) => ({ which, vendorNs: ns, realtimeNs: ns, monotonicNs: ns, monotonicRawNs: ns, boottimeNs: ns });
  w.clock(anchor(0, T0));
  if (o.kindSizes !== null) w.kindSizes(o.kindSizes ?? Object.entries(ptiSizes(gen)).map(([k, s]) => [Number(k), s] as [number, number]));
  w.apiNames(o.apiNames ?? [[3, 17, "urEnqueueKernelLaunch"], [1, 55, "zeCommandListAppendLaunchKernel"],
    [3, 33, "urEnqueueUSMMemcpy"], [1, 84, "zeEventHostSynchronize"], [3, 97, "urQueueFinish"]]);
  if (o.devicesRaw) w.chunk(ChunkType.DEVICES, o.devicesRaw);
  else w.devices((o.devices ?? [0, 1]).map((id) => ({
    id, multiprocessors: 448, globalMemoryBytes: 64n << 30n, memoryBandwidth: 0n, coreClockKhz: 1600000, ccMajor: 0,
    ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 64, regsPerBlock: 0, regsPerMultiprocessor: 0,
    warpSize: 32, sharedMemPerBlock: 0, sharedMemPerMultiprocessor: 0, sharedMemPerBlockOptin: 0,
    maxBlocksPerMultiprocessor: 0, uuid: deviceUuid(id), name: "Intel(R) Data Center GPU Max 1550",
  })), o.handles);
  w.strings(o.strings ?? [[ptr(0), "gemm_kernel"], [ptr(1), "zeCommandListAppendMemoryCopy"]]);
  for (const recs of buffers) {
    const buf = new Uint8Array(recs.reduce((s, r) => s + r.length, 0));
    let p = 0;
    for (const r of recs) {
      buf.set(r, p);
      p += r.length;
    }
    w.activity(buf);
  }
  w.clock(anchor(1, T0 + 10_000_000n));
  w.end();
  return w.bytes();
}
