/**
 * The head of a Chrome JSON trace, everything before its first event, as Kineto writes it: schemaVersion,
 * distributedInfo (rank, world size), deviceProperties (one object per device of the dump's table), the versions
 * the dump gives, host_name, displayTimeUnit and baseTimeNanoseconds; and the time base itself
 * ({@link chromeBaseFor}). emit/chrome_json.ts writes the events after it, emit/chrome_meta.ts the end.
 */
import * as S from "../model/session";
import * as O from "./out";

/**
 * The trace's time base (Unix ns): the start time floored to a grid of 3,944,619 s, half of Kineto's 3-month grid
 * (7,889,238 s), so that every file of one job shares it (Kineto's reason) and ts stays under 2^42 µs for any trace
 * shorter than 5 days: Perfetto reads ts as a double of µs and keeps ns only below 2^42 µs (≈ 50.9 days), so on
 * Kineto's grid the second 40 days of each period read about a quarter of the times 1 ns off.
 */
export function chromeBaseFor(t: u64): u64 {
  const grid: u64 = 3944619 * 1000000000;
  return t - (t % grid);
}

/**
 * Kineto's own time base: `t` (Unix ns) floored to its 3-month grid of 7,889,238 s. The viewer's timeline tables keep
 * it (their times are f64 ns, exact either way; test/core/timeline_digests.json was recorded on it).
 */
export function kinetoBaseFor(t: u64): u64 {
  const grid: u64 = 7889238 * 1000000000;
  return t - (t % grid);
}

/** Writes the ASCII key text `k`, then `v` in decimal. */
// @ts-ignore: decorator
@inline export function keyU(k: string, v: u64): void {
  O.ascii(k);
  O.u64dec(v);
}

/** `k` (a quoted key and its colon), decimal `v`, then a comma. */
function versionKey(k: string, v: u64): void {
  keyU(k, v);
  O.byte(44);
}

// Kineto's u32 device properties after totalGlobalMem, in its order, and where model/session.ts's device entry
// holds each.
const PROP_KEYS: StaticArray<string> = [
  ',"computeMajor":', ',"computeMinor":', ',"maxThreadsPerBlock":', ',"maxThreadsPerMultiprocessor":',
  ',"regsPerBlock":', ',"warpSize":', ',"sharedMemPerBlock":', ',"numSms":', ',"regsPerMultiprocessor":',
  ',"sharedMemPerBlockOptin":', ',"sharedMemPerMultiprocessor":',
];
const PROP_OFFSETS: StaticArray<u32> = [28, 32, 36, 40, 44, 52, 56, 4, 48, 64, 60];

/** Writes `"deviceProperties":[…],`: one object per device of the dump's table. */
function deviceProperties(): void {
  O.need(64);
  O.ascii('"deviceProperties":[');
  const n = S.deviceCount();
  for (let i: u32 = 0; i < n; i++) {
    const d = S.deviceAt(i);
    O.need(1024);
    if (i > 0) O.byte(44);
    keyU('{"id":', load<u32>(d));
    O.ascii(',"name":');
    O.jsonString(<usize>load<u32>(d, 88), load<u32>(d, 92));
    O.need(1024);
    keyU(',"totalGlobalMem":', load<u64>(d, 8));
    for (let k = 0; k < PROP_KEYS.length; k++) keyU(PROP_KEYS[k], load<u32>(d + <usize>PROP_OFFSETS[k]));
    if (load<u32>(d, 100) == S.DEV_ARCH_AMD) {
      // Kineto's ROCm build: the LDS per CU under HIP's name, and the gfx target (hipDeviceProp_t gcnArchName).
      keyU(',"maxSharedMemoryPerMultiProcessor":', load<u32>(d, 60));
      O.ascii(',"gcnArchName":');
      O.jsonString(<usize>load<u32>(d, 120), load<u32>(d, 124));
      keyU(',"gfxTargetVersion":', load<u32>(d, 104));
      keyU(',"simdPerCu":', load<u32>(d, 108));
      keyU(',"maxWavesPerCu":', load<u32>(d, 112));
    }
    O.byte(125);
  }
  O.need(4);
  O.ascii("],");
}

/** Writes the trace's head up to and including `"traceEvents":[`; `base` is baseTimeNanoseconds (Unix ns). */
export function chromeHeader(base: u64): void {
  O.need(256);
  O.ascii('{"schemaVersion":1,');
  if (S.rank >= 0) {
    // "rank": with a space, as Kineto writes it: HTA finds a file's rank with the regex "rank":\s+(\d+).
    O.ascii('"distributedInfo":{"rank": ');
    O.i64dec(S.rank);
    if (S.worldSize >= 0) {
      O.ascii(',"world_size": ');
      O.i64dec(S.worldSize);
    }
    O.ascii("},");
  }
  deviceProperties();
  O.need(512);
  // Versions the dump gives (a dump read without a HEADER has none: engine.ts beginWithoutHeader), each followed by
  // a comma.
  if (S.haveHeader && S.cudaVersions) {
    if (S.vendorVersion != 0) versionKey('"cupti_version":', S.vendorVersion);
    if (S.runtimeVersion != 0) versionKey('"cuda_runtime_version":', S.runtimeVersion);
    if (S.driverVersion != 0) versionKey('"cuda_driver_version":', S.driverVersion);
  }
  if (S.hostnameLen != 0) {
    O.ascii('"host_name":');
    O.jsonString(S.hostnamePtr, S.hostnameLen);
    O.need(512);
    O.byte(44);
  }
  O.ascii('"displayTimeUnit":"ms","baseTimeNanoseconds":');
  O.u64dec(base);
  O.ascii(',"traceEvents":[');
}
