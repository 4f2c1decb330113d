/**
 * A real XSpace's GPU side as a Kineto trace, for the round-trip tools (src/tools/kineto_to_rocprof.ts,
 * kineto_to_rawtrace.ts): an XSpace that XLA wrote (JAX or TensorFlow, on ROCm or CUDA) becomes the records the
 * collector would have written for the same run, so that converting them back and opening both files in XProf tests
 * what XProf shows of ours against what it shows of the real one (test/interop/xprof_jax_mi300x.test.ts).
 *
 *   tsx src/tools/xspace_to_kineto.ts in.xplane.pb -o out.json
 *
 * What becomes what:
 * - each event with a `correlation_id` on a `/device:GPU:<n>` plane → a `kernel` event on pid n, tid = its line's id
 *   (its low 32 bits, unsigned, as every tid here);
 *   the launch shape from its `kernel_details` text (`grid:x,y,z block:x,y,z`, `regs:` as the registers per thread,
 *   and `group_mem:`, `static_shared:` or `shm:` as the shared memory) goes on it and on its launch call (the first
 *   kernel's, when two share a correlation id). One named `Memcpy…` (XLA's `MemcpyH2D`, `MemcpyD2H`, `MemcpyD2D`,
 *   `MemcpyP2P`, or XProf's `MemcpyHToD`…) → a `gpu_memcpy` named `Memcpy <HtoD|DtoH|DtoD|PtoP> (Unknown -> Unknown)`
 *   (XSpace gives no memory kinds), its bytes from `memcpy_details`' `size:`;
 * - each `/host:CPU` event with a `correlation_id` that a device event also has → a `cuda_runtime` call (its name,
 *   tid = its line's id, `cid` numbered per distinct name, in order of first appearance); host events without one
 *   (XLA's own TraceMe annotations, Python calls) are left out;
 * - each device plane's stats → a `deviceProperties` entry: `core_count` → numSms, `memory_size` → totalGlobalMem,
 *   `compute_cap_major` / `_minor` → computeMajor / computeMinor, `clock_rate` (kHz) → clockRate,
 *   `memory_bandwidth` (bytes/s) → memoryBandwidth.
 * Times: ns exactly, as `profile_start_time` (Task Environment) + line timestamp + event offset, written as µs text
 * with three decimals on `baseTimeNanoseconds` = the profile start, or the earliest event's start when one starts
 * before it (so that no time is negative); an XSpace whose offsets are not whole ns is refused (the round trip would
 * not be exact).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, type XEvent, type XPlane, type XSpace } from "../gen/xplane_pb.js";
import { runIfMain, type KinetoDevice, type KinetoEvent, type KinetoTrace } from "./kineto_to_rawtrace.js";
import { micros } from "../core/merge.js";

/** The value of stat `name` on `e` (an event or a plane), a referenced stat as its text; undefined when absent. */
export function statOf(plane: XPlane, e: Pick<XEvent, "stats">, name: string): bigint | number | string | undefined {
  for (const s of e.stats) {
    if (plane.statMetadata[String(s.metadataId)]?.name !== name) continue;
    const v = s.value;
    if (v.case === "refValue") return plane.statMetadata[String(v.value)]?.name;
    if (v.case === "bytesValue" || v.case === undefined) return undefined;
    return v.value;
  }
  return undefined;
}

/** Absolute ns of each event of a plane's lines, with its line and metadata name. */
export function* planeEvents(plane: XPlane, startNs: bigint): Generator<{ line: bigint; name: string; start: bigint; dur: bigint; e: XEvent }> {
  for (const l of plane.lines) {
    for (const e of l.events) {
      if (e.data.case !== "offsetPs") continue;
      const off = BigInt(e.data.value);
      const dur = BigInt(e.durationPs);
      if (off % 1000n !== 0n || dur % 1000n !== 0n) throw new RangeError(`${plane.name}: an event's offset or duration is not whole ns (${off} ps, ${dur} ps)`);
      yield { line: BigInt(l.id), name: plane.eventMetadata[String(e.metadataId)]?.name ?? "", start: startNs + BigInt(l.timestampNs) + off / 1000n, dur: dur / 1000n, e };
    }
  }
}

/** A line id as a tid: its low 32 bits, unsigned (XProf keys rows on them; XLA's hashed thread lines are negative). */
function lineTid(line: bigint): number {
  return Number(BigInt.asUintN(32, line));
}

/** `x,y,z` after `key:` in a kernel_details text, or undefined. */
function shape(details: string, key: string): number[] | undefined {
  const m = new RegExp(`(?:^|\\s)${key}:(\\d+),(\\d+),(\\d+)`).exec(details);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** The number after `key:` in a kernel_details text, or undefined. */
function field(details: string, key: string): number | undefined {
  const m = new RegExp(`(?:^|\\s)${key}:(\\d+)`).exec(details);
  return m ? Number(m[1]) : undefined;
}

/** Kineto's copy direction of an XSpace memcpy event name (XLA's `MemcpyH2D`, XProf's `MemcpyHToD`, …). */
function copyDirection(name: string): string {
  const d = name.slice("Memcpy".length).replace("2", "To");
  return ({ HToD: "HtoD", DToH: "DtoH", DToD: "DtoD", P2P: "PtoP", PToP: "PtoP" } as Record<string, string>)[d] ?? "Unknown";
}

/** The profile start (Unix ns) of `space`'s Task Environment plane; 0 when it has none. */
export function profileStartNs(space: XSpace): bigint {
  const env = space.planes.find((p) => p.name === "Task Environment");
  const v = env ? statOf(env, env, "profile_start_time") : undefined;
  return v === undefined ? 0n : BigInt(v);
}

/** The Kineto trace standing for `space`'s GPU side (see the module's comment); `hostPid` is the launch calls' pid. */
export function xspaceToKineto(space: XSpace, hostPid = 1): KinetoTrace {
  const startNs = profileStartNs(space);
  // The trace's base: the profile start, or the earliest event's start when one starts before it (an event whose line
  // began before the session; µs text has no sign here, and merge's `micros` takes a negative as 0).
  let base = startNs;
  for (const p of space.planes) {
    if (p.name !== "/host:CPU" && !/^\/device:GPU:\d+$/.test(p.name)) continue;
    for (const ev of planeEvents(p, startNs)) if (ev.start < base) base = ev.start;
  }
  const events: KinetoEvent[] = [];
  const devices: KinetoDevice[] = [];
  const launchArgs = new Map<number, Record<string, unknown>>();
  for (const p of space.planes) {
    const m = /^\/device:GPU:(\d+)$/.exec(p.name);
    if (!m) continue;
    const gpu = Number(m[1]);
    const num = (name: string) => {
      const v = statOf(p, p, name);
      return v === undefined ? undefined : Number(v);
    };
    devices.push({
      id: gpu, name: String(statOf(p, p, "gpu_device_name") ?? ""), numSms: num("core_count"), totalGlobalMem: num("memory_size"),
      computeMajor: num("compute_cap_major"), computeMinor: num("compute_cap_minor"), clockRate: num("clock_rate"),
      memoryBandwidth: num("memory_bandwidth"),
    });
    for (const ev of planeEvents(p, startNs)) {
      const corr = statOf(p, ev.e, "correlation_id");
      if (corr === undefined) continue;
      const correlation = Number(corr);
      const copy = ev.name.startsWith("Memcpy");
      const details = String(statOf(p, ev.e, copy ? "memcpy_details" : "kernel_details") ?? "");
      const launch = !copy && details ? {
        grid: shape(details, "grid") ?? [1, 1, 1], block: shape(details, "block") ?? [1, 1, 1],
        "registers per thread": field(details, "regs") ?? 0,
        "shared memory": field(details, "group_mem") ?? field(details, "static_shared") ?? field(details, "shm") ?? 0,
      } : {};
      // The shape on the kernel too: two kernels may share one correlation id (XLA's ROCm tracer does).
      events.push({
        ph: "X", cat: copy ? "gpu_memcpy" : "kernel", name: copy ? `Memcpy ${copyDirection(ev.name)} (Unknown -> Unknown)` : ev.name,
        pid: gpu, tid: lineTid(ev.line), ts: micros(ev.start - base), dur: micros(ev.dur),
        args: copy ? { correlation, device: gpu, bytes: field(details, "size") ?? 0 } : { correlation, device: gpu, ...launch },
      });
      if (!launchArgs.has(correlation)) launchArgs.set(correlation, launch);
    }
  }
  const device = new Set(events.map((e) => (e.args as { correlation: number }).correlation));
  const cids = new Map<string, number>();
  for (const p of space.planes) {
    if (p.name !== "/host:CPU") continue;
    for (const ev of planeEvents(p, startNs)) {
      const corr = statOf(p, ev.e, "correlation_id");
      if (corr === undefined || !device.has(Number(corr))) continue;
      const correlation = Number(corr);
      if (!cids.has(ev.name)) cids.set(ev.name, cids.size + 1);
      events.push({
        ph: "X", cat: "cuda_runtime", name: ev.name, pid: hostPid, tid: lineTid(ev.line), ts: micros(ev.start - base), dur: micros(ev.dur),
        args: { correlation, cid: cids.get(ev.name), ...(launchArgs.get(correlation) ?? {}) },
      });
    }
  }
  return { traceEvents: events, baseTimeNanoseconds: base.toString(), deviceProperties: devices.sort((a, b) => a.id - b.id) };
}

function main(argv: string[]): number {
  const input = argv[0];
  const o = argv.indexOf("-o");
  if (!input || o < 0 || !argv[o + 1]) {
    console.error("usage: tsx src/tools/xspace_to_kineto.ts in.xplane.pb -o out.json");
    return 2;
  }
  const trace = xspaceToKineto(fromBinary(XSpaceSchema, readFileSync(input)));
  writeFileSync(argv[o + 1], JSON.stringify(trace));
  console.log(`${argv[o + 1]}: ${trace.traceEvents.length} events, ${trace.deviceProperties!.length} GPUs`);
  return 0;
}

runIfMain(import.meta.url, "xspace_to_kineto", main);
