/** Shared pieces of the interop tests with the real Python clients (XProf, HTA). */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import * as assert from "uvu/assert";

let python = "";

/** The pinned XProf's python (scripts/xprof-env.sh creates .venv-xprof on first use; later calls reuse it). */
export function xprofPython(): string {
  if (python) return python;
  const r = spawnSync("bash", ["scripts/xprof-env.sh"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 900_000 });
  assert.is(r.status, 0, "scripts/xprof-env.sh failed");
  python = r.stdout.trim().split("\n").pop()!;
  assert.ok(existsSync(python), python);
  return python;
}

/** Rows of a Chrome JSON that HTA counts as GPU work, per (name, category), with summed durations (µs). */
export interface StreamRow {
  name: string;
  cat: string;
  count: number;
  sum_us: number;
}

/**
 * The rows HTA counts as GPU kernels in a Chrome JSON: X events whose `args.stream` is a stream (not -1), summed per
 * (name, category), sorted by name then category.
 */
export function gpuStreamRows(json: string): StreamRow[] {
  const t = JSON.parse(json) as { traceEvents: Array<{ ph: string; cat: string; name: string; dur?: number; args?: { stream?: number } }> };
  const rows = new Map<string, StreamRow>();
  for (const e of t.traceEvents) {
    const s = e.args?.stream;
    if (e.ph !== "X" || typeof s !== "number" || s === -1) continue;
    const key = `${e.name}\0${e.cat}`;
    const r = rows.get(key) ?? { name: e.name, cat: e.cat, count: 0, sum_us: 0 };
    r.count++;
    r.sum_us += e.dur ?? 0;
    rows.set(key, r);
  }
  return [...rows.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.cat < b.cat ? -1 : 1));
}
