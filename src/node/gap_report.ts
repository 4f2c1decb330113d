/**
 * `rawtrace stats --gaps`: the GPU idle gaps of src/core/gaps.ts as text (per device a summary line and the longest
 * gaps) and as CSV (one row per gap, every file).
 */
import type { DeviceGaps } from "../core/gaps.js";
import { csvField, cutName as cut } from "./stats.js";

const us = (ns: number) => (ns / 1e3).toFixed(1);
const ms = (ns: number) => (ns / 1e6).toFixed(3);
const pct = (a: number, b: number) => (b > 0 ? ((100 * a) / b).toFixed(1) : "0.0");

/**
 * The text report of a file's gaps: per device a summary, then its `top` longest gaps; gap starts in ms after
 * `originNs` (the trace start, Unix ns).
 */
export function formatGaps(devices: DeviceGaps[], minGapNs: number, top: number, originNs: bigint): string {
  const out = [`  GPU idle gaps ≥ ${us(minGapNs)} µs (GPU idle, work still to come; host = the thread that launched the next op)`];
  if (devices.length === 0) out.push("    none: no device work");
  const head = ["start ms", "gap µs", "launch delay µs", "in API µs", "between µs", "host call (overlap µs)", "range", "next op"];
  for (const d of devices) {
    out.push(`    GPU ${d.device}: ${d.gaps} gaps, ${ms(d.gapNs)} ms = ${pct(d.gapNs, d.spanNs)} % of its ${ms(d.spanNs)} ms span ` +
      `(all idle ${ms(d.idleNs)} ms); host in API calls ${ms(d.inApiNs)} ms, between launches ${ms(d.betweenNs)} ms`);
    const rows = d.list.slice(0, top).map((g) => [
      ms(Number(g.startNs - originNs)), us(g.durNs), g.launch ? us(g.launch.delayNs) : "-", us(g.inApiNs), us(g.betweenNs),
      g.call ? `${cut(g.call.name, 48)} (${us(g.call.overlapNs)})` : "-", cut(g.range ?? "-", 32), cut(`${g.next.kind} ${g.next.name}`),
    ]);
    if (rows.length === 0) continue;
    const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    // Numbers right-aligned, text columns (call, range, next op) left-aligned.
    const line = (r: string[]) => ("      " + r.map((c, i) => (i >= 5 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ")).trimEnd();
    out.push(line(head), ...rows.map(line));
  }
  return out.join("\n");
}

/** Columns of `rawtrace stats --gaps --csv`. */
export const GAPS_CSV_COLUMNS = [
  "file", "device", "start_ns", "dur_ns", "launch_delay_ns", "in_api_ns", "between_ns", "host_call", "host_call_overlap_ns",
  "range", "launch_call", "launch_pid", "launch_tid", "next_kind", "next_name", "next_correlation",
] as const;

/** `rawtrace stats --gaps --csv`: a header row, then one row per gap, per file and device, longest first. */
export function gapsCsv(files: Array<{ input: string; gaps: DeviceGaps[] }>): string {
  const lines = [GAPS_CSV_COLUMNS.join(",")];
  for (const f of files) {
    for (const d of f.gaps) {
      for (const g of d.list) {
        lines.push([
          csvField(f.input), d.device, g.startNs, g.durNs, g.launch?.delayNs ?? "", g.inApiNs, g.betweenNs,
          csvField(g.call?.name ?? ""), g.call?.overlapNs ?? "", csvField(g.range ?? ""), csvField(g.launch?.name ?? ""),
          g.launch?.pid ?? "", g.launch?.tid ?? "", g.next.kind, csvField(g.next.name), g.next.correlation,
        ].join(","));
      }
    }
  }
  return lines.join("\n") + "\n";
}
