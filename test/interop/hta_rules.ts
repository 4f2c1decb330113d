/**
 * HTA's rules (hta 0.5.0) applied to raw records, for the fidelity tests: its kernel types, its µs rows (start
 * rounded up, end rounded down, relative to the trace's base), its merged intervals.
 */
import type { DeviceOp } from "./fidelity_records.js";

/** HTA's kernel type of a (demangled) name (hta/utils/utils.py get_kernel_type). */
export function htaType(name: string): string {
  if (/^nccl.*Kernel/.test(name)) return "COMMUNICATION";
  if (/^(Memcpy|Memset|dma)/.test(name)) return "MEMORY";
  if (/^nccl.*Kernel|^.*Memcpy|^Memset|^.*Sync/.test(name)) return "OTHER";
  return "COMPUTATION";
}

/** A GPU row as HTA holds it: µs relative to the trace's base, start rounded up and end rounded down. */
export interface Row { op: DeviceOp; ts: number; end: number; name: string; type: string }

/** Op `op` as HTA's row named `name`. */
export function htaRow(op: DeviceOp, base: bigint, name: string): Row {
  const ts = Number(op.start - base) / 1000;
  const dur = Number(op.end - op.start) / 1000;
  return { op, ts: Math.ceil(ts), end: Math.floor(ts + dur), name, type: htaType(name) };
}

/** Merged [ts, end] intervals, as hta merge_kernel_intervals. */
export function merged(rows: Row[]): Array<[number, number]> {
  const s = [...rows].sort((a, b) => a.ts - b.ts);
  const out: Array<[number, number]> = [];
  for (const r of s) {
    const last = out[out.length - 1];
    if (last && r.ts <= last[1]) last[1] = Math.max(last[1], r.end);
    else out.push([r.ts, r.end]);
  }
  return out;
}
/** Total length of merged intervals (µs). */
export const busy = (m: Array<[number, number]>) => m.reduce((n, [a, b]) => n + (b - a), 0);

/** The name HTA shows for a device op: the demangled kernel name, the sync's name, "Memcpy" or "Memset". */
export function htaLabel(op: DeviceOp, names: Map<string, string>): string {
  return op.kind === "kernel" ? names.get(op.name)! : op.kind === "sync" ? op.name : op.kind === "memcpy" ? "Memcpy" : "Memset";
}
