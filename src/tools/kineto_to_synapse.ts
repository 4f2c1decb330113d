/**
 * The Habana round-trip tool: Kineto-style HPU events — what the Gaudi PyTorch bridge hands Kineto (device lanes per
 * engine, `kernel` / `gpu_memcpy` / `gpu_memset` on them, `hpu_op` host calls, recipe arguments) — → a `.rawtrace` as
 * the HPU collector writes it (docs/decoders/hpu.md): HEADER vendor 5, HPU_DEVICE, CLOCK anchors, STRINGS and one
 * HPU_TRACE chunk per `synProfilerGetTrace` pull, holding `[synTraceEvent × N][string pool][num][version]` in the
 * 208-byte (current) or 112-byte (SynapseAI_Core) entry layout. Converting it back with the engine must give every
 * event to the nanosecond (test/tools/roundtrip_synapse.test.ts).
 *
 *   tsx src/tools/kineto_to_synapse.ts in.json[.gz] -o out.rawtrace [--layout 208|112] [--begin-end] [--per-pull N]
 *     [--external-args]
 *
 * What becomes what (per device = the `pid` of device work, one buffer set per device):
 * - device lanes: `tid` = prefix index × 1000 + engine index (the bridge's line numbers) → engineType = prefix index + 1,
 *   engineIndex; 'M' entries name the engine type (`*TPC `, `*MME `, `*PDMA`, … — the prefix itself) and each engine
 *   (the lane's `thread_name`, else e.g. `TPC 3`);
 * - `kernel`, `gpu_memcpy`, `gpu_memset` → 'X' entries (or a 'B'/'E' pair with `--begin-end`, contextId = a running
 *   number per engine): `operation` = the event name, `name` = args.synapseName when given, else the event name;
 * - host events (`hpu_op`, `privateuse1_runtime`, `cuda_runtime`) → 'X' entries of the `***Host` engine type
 *   (engineType {@link HOST_TYPE}), engineIndex = `tid`, written into the buffers of device `args.device` (default
 *   the first);
 * - `C` counter events on a device → 'C' entries with `arguments.value` = args.value;
 * - args recipeId, recipeName, streamHandle, eventHandle ("0x…"), dataType → the argument fields (208-byte layout;
 *   dataType only in the 112-byte one); every other arg that is not a normalized one → an `extraArgs` entry
 *   (integers UINT64, other numbers DOUBLE, strings CHAR_PTR), arrays in the pool or, with `--external-args`, outside
 *   the buffer in STRINGS chunks (as the collector copies them).
 * Times: the profiler clock is Unix ns − a fixed offset (CLOCK anchors at the start and end carry it); each time is the
 * x87 `long double` nearest to ns / 1000 µs ({@link f80FromNs}), so `roundl(x × 1000)` gives the ns back.
 */
import { writeFileSync } from "node:fs";
import { PayloadBuilder, RawtraceWriter } from "../format/writer.js";
import { ChunkType, Vendor } from "../format/container.js";
import { argsOf, asInt, microsToNs, readKinetoTrace, runIfMain, traceBaseNs, type KinetoEvent, type KinetoTrace } from "./kineto_to_rawtrace.js";

/** The bridge's engine-type prefixes (decode/synapse_engines.ts), index = the lane's thousands. */
export const ENGINE_PREFIXES = ["**DMA ", "**MME ", "**TPC ", "*PDMA", "*EDMA ", "*KDMA", "*MME ", "*TPC ", "*PSOC", "*SM",
  "*PMMU", "*ROTATOR", "*ARC_FARM", "*VIDEO_DECODER", "*NIC ", "*NIC External ", "*NIC Internal ", "**NIC "] as const;
/** engineType of the `***Host` engine type. */
export const HOST_TYPE = 40;
/** Buffer address of pull `k` in the "profiled process". */
export const bufferBase = (k: number): bigint => 0x7f3a_0000_0000n + BigInt(k) * 0x0100_0000n;
/** Address of the k-th extraArgs array or string outside the buffers (STRINGS). */
const externalAddr = (k: number): bigint => 0x5600_0000_0000n + BigInt(k) * 0x40n;
/** Synapse version written in the HEADER (1.19.0) and the trailer `version` word. */
export const SYNAPSE_VERSION = 11900;
export const PARSER_VERSION = 3n;

/** Args the decoder writes itself (never extraArgs). */
const NORMALIZED = new Set(["recipeId", "recipeName", "streamHandle", "eventHandle", "dataType", "device", "context",
  "stream", "correlation", "External id", "queued", "bytes", "memory bandwidth (GB/s)", "grid", "block", "cbid",
  "registers per thread", "shared memory", "blocks per SM", "warps per SM", "synapseName", "incomplete"]);
/** Chrome categories of host calls. */
const HOST_CATS = new Set(["hpu_op", "privateuse1_runtime", "cuda_runtime"]);
const DEVICE_CATS = new Set(["kernel", "gpu_memcpy", "gpu_memset"]);

/**
 * The x87 80-bit extended value nearest to `ns` / 1000 (µs), ties to even, as 10 little-endian bytes: 64-bit
 * significand with its explicit integer bit, then sign and 15-bit exponent (bias 16383). 0 gives +0.
 */
export function f80FromNs(ns: bigint): Uint8Array {
  const out = new Uint8Array(10);
  if (ns < 0n) throw new RangeError(`negative time ${ns}`);
  if (ns === 0n) return out;
  // value = m × 2^-k with 2^63 ≤ m < 2^64: m = round(ns × 2^k / 1000).
  let k = 64 - ns.toString(2).length + 10;
  let m = 0n;
  for (;;) {
    const num = k >= 0 ? ns << BigInt(k) : ns >> BigInt(-k);
    if (k < 0) throw new RangeError("time too large");
    const q = num / 1000n;
    const r = num % 1000n;
    m = q + (r * 2n > 1000n || (r * 2n === 1000n && (q & 1n) === 1n) ? 1n : 0n);
    if (m >= 1n << 64n) k--;
    else if (m < 1n << 63n) k++;
    else break;
  }
  const exp = 16383 + 63 - k;
  const dv = new DataView(out.buffer);
  dv.setBigUint64(0, m, true);
  dv.setUint16(8, exp, true);
  return out;
}

/** Options of {@link kinetoToSynapse}. */
export interface SynapseOptions {
  /** Entry layout: 208 (current synTraceEvent) or 112 (SynapseAI_Core). */
  layout?: 208 | 112;
  /** Device work as 'B'/'E' pairs instead of 'X' entries. */
  beginEnd?: boolean;
  /** Entries per pull (HPU_TRACE chunk) before the metadata, per device; default all in one. */
  perPull?: number;
  /** extraArgs arrays (and their strings) outside the buffer, in STRINGS chunks. */
  externalArgs?: boolean;
  /** Host pid for the HEADER (default: the pid of the host events). */
  pid?: number;
}

/** What {@link kinetoToSynapse} wrote. */
export interface SynapseStats {
  devices: number;
  pulls: number;
  entries: number;
  metadata: number;
  deviceOps: number;
  hostCalls: number;
  counters: number;
  extraArgs: number;
}

/** One entry before it is laid out. */
interface Entry {
  type: "B" | "E" | "X" | "M" | "C";
  ns: bigint;
  dur: bigint;
  engineType: number;
  engineIndex: number;
  context: bigint;
  name: string;
  operation?: string;
  args: Record<string, unknown>;
  /** Metadata name (type 'M'). */
  meta?: string;
  value?: bigint;
  /** Sort key within equal times: host calls first, then begins, completes, ends. */
  order: number;
}

const enc = new TextEncoder();

/** Lane tid → [prefix index, engine index]. */
function laneOf(tid: number): [number, number] {
  const idx = Math.floor(tid / 1000);
  return [idx < ENGINE_PREFIXES.length ? idx : 7, tid % 1000];
}

/** The extraArgs of a Kineto event: every arg that is not a normalized one. */
function extraOf(args: Record<string, unknown>): Array<[string, number, bigint | number | string]> {
  const out: Array<[string, number, bigint | number | string]> = [];
  for (const [k, v] of Object.entries(args)) {
    if (NORMALIZED.has(k)) continue;
    if (typeof v === "string") out.push([k, 1, v]);
    else if (typeof v === "number" && Number.isInteger(v) && v >= 0) out.push([k, 0, BigInt(v)]);
    else if (typeof v === "number") out.push([k, 2, v]);
  }
  return out;
}

const handle = (v: unknown): bigint => {
  if (typeof v === "string" && /^0x[0-9a-f]+$/i.test(v)) return BigInt(v);
  const n = asInt(v);
  return n === undefined ? 0n : BigInt(n);
};

/**
 * Lays out one pull: entries, string pool (and extraArgs arrays), trailer. Returns the buffer and the STRINGS the
 * collector would write before it (`external`).
 */
function layoutBuffer(entries: Entry[], base: bigint, layout: 208 | 112, external: { next: number; strings: Array<[bigint, Uint8Array]> } | undefined): Uint8Array {
  const strs = new Map<string, number>();
  const pool: Uint8Array[] = [];
  let poolLen = 0;
  const entriesLen = entries.length * layout;
  const str = (s: string | undefined): bigint => {
    if (s === undefined || s === "") return 0n;
    let o = strs.get(s);
    if (o === undefined) {
      o = poolLen;
      const b = enc.encode(s);
      const z = new Uint8Array(b.length + 1);
      z.set(b);
      pool.push(z);
      poolLen += z.length;
      strs.set(s, o);
    }
    return base + BigInt(entriesLen + o);
  };
  const extStr = (s: string): bigint => {
    const a = externalAddr(external!.next++);
    external!.strings.push([a, enc.encode(s)]);
    return a;
  };
  // Entry bytes (pointers into the pool resolved as strings are added).
  const eb = new Uint8Array(entriesLen);
  const dv = new DataView(eb.buffer);
  const arrays: Array<{ at: number; bytes: Uint8Array }> = [];
  entries.forEach((e, i) => {
    const o = i * layout;
    dv.setBigUint64(o, str(e.name), true);
    dv.setBigUint64(o + 8, str(e.type === "M" ? "" : e.type === "C" ? "counter" : "engine"), true);
    eb[o + 16] = e.type.charCodeAt(0);
    eb.set(f80FromNs(e.ns), o + 32);
    eb.set(f80FromNs(e.dur), o + 48);
    dv.setUint32(o + 64, e.engineType, true);
    dv.setUint32(o + 68, e.engineIndex, true);
    if (layout === 208) dv.setBigUint64(o + 72, e.context, true);
    else dv.setUint32(o + 72, Number(e.context & 0xffffffffn), true);
    if (e.type === "M") {
      dv.setBigUint64(o + 80, str(e.meta), true);
      return;
    }
    if (e.type === "C") {
      dv.setBigUint64(o + 80, e.value ?? 0n, true);
      return;
    }
    const a = e.args;
    dv.setBigUint64(o + 80, str(typeof a.dataType === "string" ? a.dataType : undefined), true);
    dv.setBigUint64(o + 88, str(e.operation), true);
    if (layout === 112) return;
    const rid = asInt(a.recipeId) ?? 0;
    dv.setUint16(o + 96, rid & 0xffff, true);
    dv.setBigUint64(o + 104, str(typeof a.recipeName === "string" ? a.recipeName : undefined), true);
    dv.setBigUint64(o + 112, handle(a.streamHandle), true);
    dv.setBigUint64(o + 120, handle(a.eventHandle), true);
    const extra = extraOf(a).slice(0, 255);
    if (extra.length === 0) return;
    const arr = new Uint8Array(extra.length * 24);
    const av = new DataView(arr.buffer);
    extra.forEach(([k, type, v], j) => {
      av.setBigUint64(j * 24, external ? extStr(k) : str(k), true);
      av.setUint32(j * 24 + 8, type, true);
      if (type === 0) av.setBigUint64(j * 24 + 16, v as bigint, true);
      else if (type === 2) av.setFloat64(j * 24 + 16, v as number, true);
      else av.setBigUint64(j * 24 + 16, external ? extStr(v as string) : str(v as string), true);
    });
    eb[o + 128] = extra.length;
    if (external) {
      const addr = externalAddr(external.next++);
      external.strings.push([addr, arr]);
      dv.setBigUint64(o + 136, addr, true);
    } else arrays.push({ at: o + 136, bytes: arr });
  });
  // Arrays after the strings, 8-aligned.
  let arraysStart = (poolLen + 7) & ~7;
  const arrOff: number[] = [];
  for (const a of arrays) {
    arrOff.push(arraysStart);
    arraysStart += a.bytes.length;
  }
  const total = entriesLen + arraysStart + 16;
  const out = new Uint8Array(total);
  out.set(eb, 0);
  let p = entriesLen;
  for (const s of pool) {
    out.set(s, p);
    p += s.length;
  }
  const ov = new DataView(out.buffer);
  arrays.forEach((a, j) => {
    out.set(a.bytes, entriesLen + arrOff[j]);
    ov.setBigUint64(a.at, base + BigInt(entriesLen + arrOff[j]), true);
  });
  ov.setBigUint64(total - 16, BigInt(entries.length), true);
  ov.setBigUint64(total - 8, PARSER_VERSION, true);
  return out;
}

/** The 48-byte HPU_TRACE header followed by the buffer. */
export function hpuTracePayload(base: bigint, buffer: Uint8Array, numEntries: bigint, device: number, pull: number, profNs: bigint, reason = 2): Uint8Array {
  const p = new PayloadBuilder().u64(base).u64(buffer.length).u64(numEntries).u32(device).u32(1).u32(reason).u32(pull).u64(profNs);
  return new Uint8Array([...p.result(), ...buffer]);
}

/** HPU_DEVICE payload. */
export function hpuDevicePayload(id: number, type: number, hbm: bigint, name: string): Uint8Array {
  return new PayloadBuilder().u32(id).u32(type).u64(hbm).str(name).result().slice();
}

/** Converts Kineto-style HPU events to `.rawtrace` bytes as the HPU collector writes them. */
export function kinetoToSynapse(trace: KinetoTrace, opts: SynapseOptions = {}): { bytes: Uint8Array; stats: SynapseStats } {
  const layout = opts.layout ?? 208;
  const base = traceBaseNs(trace);
  const stats: SynapseStats = { devices: 0, pulls: 0, entries: 0, metadata: 0, deviceOps: 0, hostCalls: 0, counters: 0, extraArgs: 0 };
  const devIds = new Set<number>();
  for (const e of trace.traceEvents) {
    if (e.ph === "X" && DEVICE_CATS.has(e.cat ?? "")) devIds.add(asInt(e.pid) ?? 0);
  }
  for (const d of trace.deviceProperties ?? []) devIds.add(d.id);
  const devices = [...devIds].sort((a, b) => a - b);
  if (devices.length === 0) devices.push(0);
  const names = new Map<string, string>(); // "pid/tid" → thread_name
  for (const e of trace.traceEvents) {
    if (e.ph === "M" && e.name === "thread_name" && typeof argsOf(e).name === "string") names.set(`${asInt(e.pid)}/${asInt(e.tid)}`, argsOf(e).name as string);
  }
  const perDev = new Map<number, Entry[]>(devices.map((d) => [d, []]));
  const lanes = new Map<number, Set<number>>(devices.map((d) => [d, new Set()]));
  const hostLanes = new Map<number, Set<number>>(devices.map((d) => [d, new Set()]));
  const ctx = new Map<string, bigint>();
  let hostPid = opts.pid;
  let t0: bigint | undefined;
  let t1: bigint | undefined;
  const note = (a: bigint, b: bigint) => {
    if (t0 === undefined || a < t0) t0 = a;
    if (t1 === undefined || b > t1) t1 = b;
  };
  for (const e of trace.traceEvents as KinetoEvent[]) {
    if (e.ts === undefined) continue;
    const pid = asInt(e.pid) ?? 0;
    const tid = asInt(e.tid) ?? 0;
    const args = argsOf(e);
    const start = microsToNs(e.ts) + base;
    if (e.ph === "C" && devIds.has(pid)) {
      perDev.get(pid)!.push({ type: "C", ns: start, dur: 0n, engineType: 1, engineIndex: 0, context: 0n, name: e.name ?? "", args: {}, value: BigInt(asInt(args.value) ?? 0), order: 1 });
      stats.counters++;
      note(start, start);
      continue;
    }
    if (e.ph !== "X") continue;
    let dur = e.dur === undefined ? 0n : microsToNs(e.dur);
    if (dur < 0n) dur = 0n;
    const name = typeof args.synapseName === "string" ? args.synapseName : e.name ?? "";
    if (DEVICE_CATS.has(e.cat ?? "") && devIds.has(pid)) {
      const [idx, index] = laneOf(tid);
      lanes.get(pid)!.add(tid);
      const common = { engineType: idx + 1, engineIndex: index, name, operation: e.name ?? "", args };
      if (opts.beginEnd) {
        const k = `${pid}/${tid}`;
        const c = (ctx.get(k) ?? 0n) + 1n;
        ctx.set(k, c);
        perDev.get(pid)!.push({ ...common, type: "B", ns: start, dur: 0n, context: c, order: 1 });
        perDev.get(pid)!.push({ ...common, type: "E", ns: start + dur, dur: 0n, context: c, order: 3 });
      } else perDev.get(pid)!.push({ ...common, type: "X", ns: start, dur, context: 0n, order: 2 });
      stats.deviceOps++;
      stats.extraArgs += layout === 208 ? extraOf(args).length : 0;
      note(start, start + dur);
    } else if (HOST_CATS.has(e.cat ?? "")) {
      hostPid ??= pid;
      const dev = devIds.has(asInt(args.device) ?? -1) ? asInt(args.device)! : devices[0];
      hostLanes.get(dev)!.add(tid);
      if (!names.has(`host/${tid}`)) {
        const n = names.get(`${pid}/${tid}`);
        if (n) names.set(`host/${tid}`, n.replace(/^Synapse\//, ""));
      }
      perDev.get(dev)!.push({ type: "X", ns: start, dur, engineType: HOST_TYPE, engineIndex: tid, context: 0n, name, operation: e.name ?? "", args, order: 0 });
      stats.hostCalls++;
      stats.extraArgs += layout === 208 ? extraOf(args).length : 0;
      note(start, start + dur);
    }
  }
  const first = t0 ?? base + 1_000_000n;
  const last = t1 ?? first;
  // Profiler clock: ns since a boot about 1.4 days before the run.
  const profOffset = first - 123_456_789_000_000n;
  const prof = (ns: bigint) => ns - profOffset;

  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: Vendor.HABANA, vendorVersion: SYNAPSE_VERSION, pid: hostPid ?? 0, startNs: first - 1000n, hostname: "gaudi2-node",
    commandLine: "python\0train.py", vendorVersionText: "1.19.0",
  });
  const anchor = (which: number, ns: bigint) => ({ which, vendorNs: prof(ns), realtimeNs: ns, monotonicNs: prof(ns), monotonicRawNs: prof(ns), boottimeNs: prof(ns) });
  w.clock(anchor(0, first - 1000n));
  for (const d of devices) {
    const props = (trace.deviceProperties ?? []).find((p) => p.id === d);
    w.chunk(ChunkType.HPU_DEVICE, hpuDevicePayload(d, 5, BigInt(props?.totalGlobalMem ?? 0), props?.name ?? "GAUDI2"));
  }
  const external = opts.externalArgs ? { next: 0, strings: [] as Array<[bigint, Uint8Array]> } : undefined;
  let pullNo = 0;
  for (const d of devices) {
    stats.devices++;
    // Metadata, as Synapse puts it at the front of every buffer.
    const meta: Entry[] = [];
    const m = (engineType: number, engineIndex: number, text: string) =>
      meta.push({ type: "M", ns: 0n, dur: 0n, engineType, engineIndex, context: 0n, name: "thread_name", meta: text, args: {}, order: 0 });
    if (hostLanes.get(d)!.size) {
      m(HOST_TYPE, 0, "***Host");
      for (const t of [...hostLanes.get(d)!].sort((a, b) => a - b)) m(HOST_TYPE, t, names.get(`host/${t}`) ?? `Thread ${t}`);
    }
    const idxs = [...new Set([...lanes.get(d)!].map((t) => laneOf(t)[0]))].sort((a, b) => a - b);
    for (const idx of idxs) {
      m(idx + 1, 0, ENGINE_PREFIXES[idx]);
      for (const t of [...lanes.get(d)!].filter((x) => laneOf(x)[0] === idx).sort((a, b) => a - b)) {
        const n = names.get(`${d}/${t}`);
        m(idx + 1, laneOf(t)[1], n && !/^stream \d+/.test(n) ? n : `${ENGINE_PREFIXES[idx].replace(/\*/g, "").trim()} ${laneOf(t)[1]}`);
      }
    }
    const ents = perDev.get(d)!;
    // Counters belong to the device's first engine type (a type the metadata names).
    for (const e of ents) if (e.type === "C") e.engineType = idxs.length ? idxs[0] + 1 : 1;
    ents.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : a.order - b.order));
    const per = opts.perPull && opts.perPull > 0 ? opts.perPull : Math.max(ents.length, 1);
    for (let i = 0; i < Math.max(ents.length, 1); i += per) {
      const part = [...meta, ...ents.slice(i, i + per)].map((e) => ({ ...e, ns: e.type === "M" ? 0n : prof(e.ns) }));
      const b = bufferBase(pullNo);
      const buffer = layoutBuffer(part, b, layout, external);
      if (external && external.strings.length) {
        w.strings(external.strings);
        external.strings = [];
      }
      const lastNs = part.reduce((mx, e) => (e.ns + e.dur > mx ? e.ns + e.dur : mx), 0n);
      w.chunk(ChunkType.HPU_TRACE, hpuTracePayload(b, buffer, BigInt(part.length), d, pullNo, lastNs + 500n));
      stats.pulls++;
      stats.entries += part.length;
      stats.metadata += meta.length;
      pullNo++;
    }
  }
  w.clock(anchor(1, last + 1000n));
  w.end();
  return { bytes: w.bytes(), stats };
}

// ---- CLI ---------------------------------------------------------------------------------------------------------

const USAGE = "usage: tsx src/tools/kineto_to_synapse.ts in.json[.gz] -o out.rawtrace [--layout 208|112] [--begin-end] " +
  "[--per-pull N] [--external-args]";

function main(argv: string[]): number {
  let input: string | undefined;
  let output: string | undefined;
  const opts: SynapseOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-o") output = argv[++i];
    else if (a === "--layout") {
      const v = Number(argv[++i]);
      if (v !== 208 && v !== 112) throw new Error(`--layout must be 208 or 112, not ${argv[i]}`);
      opts.layout = v;
    } else if (a === "--begin-end") opts.beginEnd = true;
    else if (a === "--external-args") opts.externalArgs = true;
    else if (a === "--per-pull") opts.perPull = Number(argv[++i]);
    else if (!input) input = a;
    else throw new Error(`unexpected argument ${a}\n${USAGE}`);
  }
  if (!input || !output) throw new Error(USAGE);
  const { bytes, stats } = kinetoToSynapse(readKinetoTrace(input), opts);
  writeFileSync(output, bytes);
  console.log(`${output}: ${bytes.length} bytes, ${stats.pulls} pulls, ${stats.entries} entries (${stats.deviceOps} device ops, ` +
    `${stats.hostCalls} host calls, ${stats.counters} counters, ${stats.metadata} metadata)`);
  return 0;
}

runIfMain(import.meta.url, "kineto_to_synapse", main);
