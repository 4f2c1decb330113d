/**
 * An independent reader of `.rawtrace` CUDA dumps for the fidelity test: the container (docs/format.md) and the CUPTI
 * record fields (offsets of src/tools/cupti_records.ts) read straight from the bytes, in TypeScript, sharing no code
 * with the WebAssembly core or its emitters, and the figures HTA and XProf should show computed from them: kernels
 * per name (demangled by binutils' c++filt, not by our demangler), training steps, their device spans.
 */
import { execFileSync } from "node:child_process";

/** One kernel, memcpy, memset or sync on a device, Unix ns. */
export interface DeviceOp {
  kind: "kernel" | "memcpy" | "memset" | "sync";
  start: bigint;
  end: bigint;
  device: number;
  stream: number;
  correlation: number;
  /** Kernels: the raw (mangled) name from the STRINGS table; syncs: Kineto's name of the sync type. */
  name: string;
  /** Memcpys and memsets: the byte count (CUpti_ActivityMemcpy/Memset `bytes`, u64 at 8); 0n otherwise. */
  bytes: bigint;
  /** Memcpys: CUpti_ActivityMemcpyKind (`copyKind`, u8 at 4: 1 HtoD, 2 DtoH, 8 DtoD, 9 HtoH, …); 0 otherwise. */
  copyKind: number;
}
/** One runtime/driver API call, Unix ns. */
export interface ApiCall {
  cbid: number;
  domain: 1 | 2;
  start: bigint;
  end: bigint;
  pid: number;
  tid: number;
  correlation: number;
  /** CUPTI's name of the call (API_NAMES chunk) without its `_v<digits>` suffix, as Kineto shows it; "" when unnamed. */
  name: string;
}
/** One NVTX range (start/end markers paired by id), Unix ns. */
export interface Range {
  id: number;
  name: string;
  pid: number;
  tid: number;
  start: bigint;
  end: bigint;
}
export interface Dump {
  ops: DeviceOp[];
  /** API calls Kineto (and so rawtrace) shows by default (docs/format.md §4): hidden ones are left out. */
  apis: ApiCall[];
  ranges: Range[];
  overhead: number;
}

/** Runtime calls Kineto hides, and the only driver calls it shows (docs/format.md §4, from Kineto's cbid tables). */
const HIDDEN_RUNTIME = new Set(["cudaGetDevice", "cudaSetDevice", "cudaGetLastError", "cudaEventCreate", "cudaEventCreateWithFlags", "cudaEventDestroy"]);
const SHOWN_DRIVER = new Set(["cuLaunchKernel", "cuLaunchKernelEx", "cuMemCreate", "cuMemMap", "cuMemUnmap", "cuMemRelease", "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle"]);

/** Whether Kineto shows an API call of `domain` (1 driver, 2 runtime) named `raw` (CUPTI's name, `_v<digits>` suffix and all). */
function shown(domain: number, raw: string | undefined): boolean {
  if (raw === undefined) return domain === 2;
  const name = raw.replace(/_v\d{4,}$/, "");
  return domain === 1 ? SHOWN_DRIVER.has(name) : !HIDDEN_RUNTIME.has(name);
}

/** Kineto's names of CUPTI synchronization types (kineto.md §3). */
const SYNC_NAMES: Record<number, string> = { 1: "Event Sync", 2: "Stream Wait Event", 3: "Stream Sync", 4: "Context Sync" };

const K = { MEMCPY: 1, MEMSET: 2, KERNEL: 3, DRIVER: 4, RUNTIME: 5, MARKER: 12, CONCURRENT_KERNEL: 10, OVERHEAD: 17, SYNC: 38 };

/**
 * Reads the container and the CUPTI records of a dump (no damage handling: the bundled samples are intact); `allApi`
 * keeps the API calls Kineto hides too (rawtrace's `--all-api`).
 */
export function readDump(bytes: Uint8Array, allApi = false): Dump {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (new TextDecoder().decode(bytes.subarray(0, 8)) !== "RAWTRACE") throw new Error("not a .rawtrace file");
  const sizes = new Map<number, number>();
  const strings = new Map<bigint, string>();
  const apiNames = new Map<string, string>();
  const activity: Array<[number, number]> = [];
  const anchors: Array<{ which: number; vendor: bigint; real: bigint }> = [];
  const text = (off: number, n: number) => new TextDecoder().decode(bytes.subarray(off, off + n));
  let off = 16;
  while (off + 24 <= bytes.length) {
    if (dv.getUint32(off, true) !== 0x4b435452) throw new Error(`no chunk sync at ${off}`);
    const type = dv.getUint16(off + 4, true);
    const len = dv.getUint32(off + 12, true);
    const p = off + 24;
    if (type === 2) anchors.push({ which: dv.getUint32(p, true), vendor: dv.getBigUint64(p + 8, true), real: dv.getBigUint64(p + 16, true) });
    else if (type === 3) {
      for (let i = 0, n = dv.getUint32(p, true); i < n; i++) sizes.set(dv.getUint32(p + 4 + i * 8, true), dv.getUint32(p + 8 + i * 8, true));
    } else if (type === 4) {
      let q = p + 4;
      for (let i = 0, n = dv.getUint32(p, true); i < n; i++) {
        const sl = dv.getUint32(q + 8, true);
        apiNames.set(`${dv.getUint32(q, true)}/${dv.getUint32(q + 4, true)}`, text(q + 12, sl));
        q += 12 + sl;
      }
    } else if (type === 5) activity.push([p, len]);
    else if (type === 6) {
      let q = p + 4;
      for (let i = 0, n = dv.getUint32(p, true); i < n; i++) {
        const ptr = dv.getBigUint64(q, true);
        const sl = dv.getUint32(q + 8, true);
        strings.set(ptr, text(q + 12, sl));
        q += 12 + sl;
      }
    }
    off = (p + len + 7) & ~7;
  }
  const unix = clockMap(anchors);
  const dump: Dump = { ops: [], apis: [], ranges: [], overhead: 0 };
  const open = new Map<number, Range>();
  for (const [p, len] of activity) {
    for (let r = p; r + 4 <= p + len;) {
      const kind = dv.getUint32(r, true);
      const size = sizes.get(kind);
      if (!size) throw new Error(`record kind ${kind} at ${r} has no size`);
      const u32 = (o: number) => dv.getUint32(r + o, true);
      const u64 = (o: number) => dv.getBigUint64(r + o, true);
      switch (kind) {
        case K.KERNEL:
        case K.CONCURRENT_KERNEL:
          dump.ops.push({ kind: "kernel", start: unix(u64(16)), end: unix(u64(24)), device: u32(40), stream: u32(48), correlation: u32(92), name: strings.get(u64(104)) ?? "", bytes: 0n, copyKind: 0 });
          break;
        case K.MEMCPY:
        case K.MEMSET:
          dump.ops.push({ kind: kind === K.MEMCPY ? "memcpy" : "memset", start: unix(u64(16)), end: unix(u64(24)), device: u32(32), stream: u32(40), correlation: u32(44), name: "", bytes: u64(8), copyKind: kind === K.MEMCPY ? dv.getUint8(r + 4) : 0 });
          break;
        case K.SYNC:
          dump.ops.push({ kind: "sync", start: unix(u64(8)), end: unix(u64(16)), device: -1, stream: u32(32), correlation: u32(24), name: SYNC_NAMES[u32(4)] ?? "Unknown Sync", bytes: 0n, copyKind: 0 });
          break;
        case K.RUNTIME:
        case K.DRIVER: {
          const raw = apiNames.get(`${kind === K.DRIVER ? 1 : 2}/${u32(4)}`);
          if (!allApi && !shown(kind === K.DRIVER ? 1 : 2, raw)) break;
          dump.apis.push({ cbid: u32(4), domain: kind === K.DRIVER ? 1 : 2, start: unix(u64(8)), end: unix(u64(16)), pid: u32(24), tid: u32(28), correlation: u32(32),
            name: raw?.replace(/_v\d{4,}$/, "") ?? "" });
          break;
        }
        case K.MARKER: {
          const flags = u32(4);
          const id = u32(16);
          if (flags & 2) open.set(id, { id, name: strings.get(u64(40)) ?? "", pid: u32(24), tid: u32(28), start: unix(u64(8)), end: 0n });
          else if (flags & 4) {
            const o = open.get(id);
            if (o) {
              o.end = unix(u64(8));
              dump.ranges.push(o);
              open.delete(id);
            }
          }
          break;
        }
        case K.OVERHEAD:
          dump.overhead++;
          break;
      }
      r += size;
    }
  }
  return dump;
}

/** docs/format.md §2: vendor ns → Unix ns (identity when the clocks agree within 10 µs at every anchor). */
function clockMap(anchors: Array<{ which: number; vendor: bigint; real: bigint }>): (v: bigint) => bigint {
  const s = anchors.find((a) => a.which === 0);
  const e = anchors.find((a) => a.which === 1);
  if (!s) return (v) => v;
  const near = (a: { vendor: bigint; real: bigint }) => (a.real - a.vendor < 0n ? a.vendor - a.real : a.real - a.vendor) <= 10_000n;
  if (near(s) && (!e || near(e))) return (v) => v;
  if (!e || e.vendor === s.vendor) return (v) => v + (s.real - s.vendor);
  const slope = Number(e.real - s.real) / Number(e.vendor - s.vendor);
  // Rates over 0.1 % apart are the read gap of a short run, not drift: the start offset alone.
  if (!(Math.abs(slope - 1) <= 0.001)) return (v) => v + (s.real - s.vendor);
  return (v) => s.real + BigInt(Math.round(Number(v - s.vendor) * slope));
}

/** Itanium names demangled by binutils' c++filt (one process for all; no recursion limit: cuDNN names nest deeply), others as they are. */
export function demangleAll(names: string[]): Map<string, string> {
  const mangled = [...new Set(names.filter((n) => n.startsWith("_Z")))];
  const out = new Map<string, string>(names.map((n) => [n, n]));
  if (mangled.length === 0) return out;
  const lines = execFileSync("c++filt", ["--no-recurse-limit"], { input: mangled.join("\n") + "\n", encoding: "utf8", maxBuffer: 64 << 20 }).split("\n");
  mangled.forEach((n, i) => out.set(n, lines[i]));
  return out;
}

/** A training step: a range matching the step pattern, its number (start order, from 1) and its device work. */
export interface Step {
  num: number;
  range: Range;
  /**
   * The device ops XProf puts in the step: those whose launch call (shown, any thread) started in it or after it,
   * before the next step started (what XProf 2.24's grouping does with the bundled H100 sample: its Steps row and
   * its ungrouped device events agree with this rule exactly).
   */
  ops: DeviceOp[];
}

/** Steps of `dump` for `pattern`, each with the device work XProf groups into it. */
export function stepsOf(dump: Dump, pattern: RegExp): Step[] {
  const ranges = dump.ranges.filter((r) => pattern.test(r.name)).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  // A name's own number as HTA reads it (`ProfilerStep#12` → 12), else 1, 2, … by start among the unnumbered.
  let next = 1;
  const steps: Step[] = ranges.map((range) => {
    const m = /ProfilerStep\s*#\s*(\d+)/.exec(range.name);
    return { num: m ? Number(m[1]) : next++, range, ops: [] };
  });
  const launch = new Map(dump.apis.map((a) => [a.correlation, a.start]));
  for (const op of dump.ops) {
    const t = launch.get(op.correlation);
    if (t === undefined) continue;
    let g = -1;
    for (let i = 0; i < steps.length && steps[i].range.start <= t; i++) g = i;
    if (g >= 0) steps[g].ops.push(op);
  }
  return steps;
}

/** A step's device span (ns): its device work's first start to last end; [-1n, -1n] without work. */
export function deviceSpan(s: Step): [bigint, bigint] {
  let a = -1n;
  let b = -1n;
  for (const op of s.ops) {
    if (a < 0n || op.start < a) a = op.start;
    if (op.end > b) b = op.end;
  }
  return [a, b];
}
