/**
 * `rawtrace stats --steps REGEX`: the per-step statistics of src/core/step_stats.ts for files, and their text table.
 */
import { computeStepStats, type StepStats } from "../core/step_stats.js";
import { createEngine } from "./wasm.js";
import { fileSource } from "./file_source.js";

/** Per-step statistics of the file at `input` (this thread: one timeline pass). */
export async function stepStats(input: string, opts: { steps?: string; allApi?: boolean } = {}): Promise<StepStats[]> {
  return computeStepStats(await createEngine(), fileSource(input), opts);
}

/** The text table of a file's steps (one row per step and device). */
export function formatSteps(steps: StepStats[]): string {
  if (steps.length === 0) return "  steps: none (no NVTX range matches the step pattern; --steps REGEX sets it)";
  const head = ["step", "device", "step ms", "host ms", "busy %", "kernel %", "memcpy %", "memset %", "idle %", "kernels",
    "launch p50 µs", "launch p99 µs"];
  const rows = steps.map((s) => [
    String(s.step), `GPU ${s.device}`, (s.spanNs / 1e6).toFixed(3), (s.hostNs / 1e6).toFixed(3), s.busyPct.toFixed(1),
    s.kernelPct.toFixed(1), s.memcpyPct.toFixed(1), s.memsetPct.toFixed(1), s.idlePct.toFixed(1), String(s.kernels),
    (s.launchP50Ns / 1e3).toFixed(1), (s.launchP99Ns / 1e3).toFixed(1),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => "    " + r.map((c, i) => c.padStart(w[i])).join("  ");
  return [`  steps (${steps[0].name}…: step ms = the step's device span, as XProf; shares of that span)`, line(head), ...rows.map(line)].join("\n");
}
