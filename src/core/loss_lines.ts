/**
 * The words about a file's warnings and damage, host-neutral so that the CLI (src/node/commands.ts: convert, stats,
 * diff, merge on standard error) and the viewer (web/main.ts: the page's message for a file) say the same: what
 * was lost (bytes in how many ranges, activity buffers, records the collector dropped), each byte range skipped,
 * and each warning with the offset of its first case and what it means.
 */
import { LOSS_WARNINGS, type LossReport, type Warning } from "./codes.js";

/** `n` with the thousands separated ("1,234"). */
export const int = (n: number) => n.toLocaleString("en-US");

/** "1 range", "3 ranges" (`n` with the thousands separated). */
export const plural = (n: number, one: string) => `${int(n)} ${one}${n === 1 ? "" : "s"}`;

/**
 * The lines about a file's damage: what was lost (bytes, activity buffers, records the collector dropped) and the
 * byte ranges skipped, e.g. `skipped bytes 1234–5678 (chunk seq 7: BAD_PAYLOAD_CRC)`. Empty when nothing was lost.
 * `prefix` starts the first line (the CLI's `rawtrace: `).
 */
export function lossLines(
  file: string, warnings: Warning[], loss: LossReport | undefined, bytesIn: number, prefix = "rawtrace: ",
): string[] {
  const lossWarnings = warnings.filter((w) => LOSS_WARNINGS.has(w.code));
  if (lossWarnings.length === 0 && !(loss && loss.rangesTotal > 0)) return [];
  const parts: string[] = [];
  if (loss && loss.bytes > 0) {
    parts.push(`skipped ${int(loss.bytes)} damaged bytes in ${plural(loss.rangesTotal, "range")}` +
      (bytesIn > 0 ? ` (${((loss.bytes / bytesIn) * 100).toFixed(1)}% of the file)` : ""));
  }
  if (loss && loss.activityChunks > 0) {
    parts.push(`${plural(loss.activityChunks, "activity buffer")} of events ` +
      `(${int(loss.activityBytes)} bytes of records) lost`);
  }
  const codes = lossWarnings.map((w) => (w.code === "DROPPED_RECORDS" ? `the collector dropped ${int(w.detail)} records`
    : w.code === "DROPPED_BUFFERS" ? `the collector lost ${plural(w.detail, "whole buffer")} of records` : `${w.code} ×${w.count}`));
  const out = [`${prefix}${file}: DATA LOST: ${[...parts, ...codes].join("; ")}`];
  for (const r of loss?.ranges ?? []) {
    out.push(`  skipped bytes ${r.from}–${r.to} (${r.seq !== undefined ? `chunk seq ${r.seq}: ` : ""}${r.code})`);
  }
  if (loss && loss.rangesTotal > loss.ranges.length) {
    out.push(`  … and ${loss.rangesTotal - loss.ranges.length} more ranges (only the first ${loss.ranges.length} are listed)`);
  }
  return out;
}

/** The lines of a file's warnings, loss or not: `  warning CODE ×N (offset O): what` each. */
export function warningLines(warnings: Warning[], indent = "  "): string[] {
  return warnings.map((w) => `${indent}warning ${w.code} ×${w.count} (offset ${w.offset}): ${w.message}`);
}

/**
 * Everything to say about a file read with warnings or damage (the viewer's message for it): the damage
 * ({@link lossLines}) when it lost data, else a line naming it; then each warning ({@link warningLines}). Empty
 * without either. `prefix` as {@link lossLines}.
 */
export function damageLines(
  file: string, warnings: Warning[], loss: LossReport | undefined, bytesIn: number, prefix = "rawtrace: ",
): string[] {
  const lost = lossLines(file, warnings, loss, bytesIn, prefix);
  if (!lost.length && !warnings.length) return [];
  return [...(lost.length ? lost : [`${prefix}${file}: warnings`]), ...warningLines(warnings)];
}
