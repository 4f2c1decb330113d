/**
 * The CLI's live progress on a terminal: one line per file in flight (pass, bytes of the pass, %), and a total
 * line (files, input bytes, rate, ETA). Redrawn in place on standard error; finished-file lines scroll above it.
 * Used only when standard error is a TTY.
 */
import { basename } from "node:path";
import type { BatchProgress } from "./batch.js";

const PASS = ["start", "index", "emit", "nvtx"];

/** Bytes for humans (MB = 10^6, as rates are given). */
export function fmtMB(n: number): string {
  // Below 0.1 MB in kB: a small dump read "0.0 MB".
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : n >= 1e5 ? `${(n / 1e6).toFixed(1)} MB` : `${(n / 1e3).toFixed(1)} kB`;
}

/** Counts for humans: 615,600 (as `stats` and `info` print them). */
export function fmtCount(n: number): string {
  return n.toLocaleString("en-US");
}

function fmtTime(s: number): string {
  if (!isFinite(s)) return "?";
  if (s < 60) return `${s.toFixed(0)} s`;
  return `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, "0")} s`;
}

/** The lines of one progress frame (exported for tests). */
export function progressLines(p: BatchProgress): string[] {
  const rate = p.seconds > 0 ? p.bytesDone / p.seconds : 0;
  const eta = rate > 0 ? (p.bytesTotal - p.bytesDone) / rate : Infinity;
  const pct = p.bytesTotal > 0 ? (100 * p.bytesDone) / p.bytesTotal : 0;
  const lines = p.active.map((t) => {
    const f = t.total > 0 ? (100 * t.done) / t.total : 0;
    return `  ${basename(t.file)}  ${PASS[t.pass] ?? "?"} ${f.toFixed(0).padStart(3)}%  ${fmtMB(t.done)} / ${fmtMB(t.total)}`;
  });
  lines.push(
    `[${p.filesDone}/${p.files} files${p.filesFailed ? `, ${p.filesFailed} failed` : ""}] ` +
      `${fmtMB(p.bytesDone)} / ${fmtMB(p.bytesTotal)} (${pct.toFixed(0)}%)  ${fmtMB(rate)}/s  ETA ${fmtTime(eta)}`,
  );
  return lines;
}

/** A progress block redrawn in place. */
export class ProgressView {
  private drawn = 0;

  constructor(private readonly out: NodeJS.WriteStream) {}

  private clear(): string {
    return this.drawn > 0 ? `\x1b[${this.drawn}F\x1b[J` : "";
  }

  /** Redraws the block. */
  update(p: BatchProgress): void {
    const width = Math.max(40, (this.out.columns || 120) - 1);
    const lines = progressLines(p).map((l) => (l.length > width ? l.slice(0, width - 1) + "…" : l));
    this.out.write(this.clear() + lines.join("\n") + "\n");
    this.drawn = lines.length;
  }

  /** Prints a line above the block (the block is redrawn on the next update). */
  log(line: string): void {
    this.out.write(this.clear() + line + "\n");
    this.drawn = 0;
  }

  /** Removes the block. */
  done(): void {
    this.out.write(this.clear());
    this.drawn = 0;
  }
}
