/**
 * `rawtrace stats --steps REGEX`: the per-step statistics of src/core/step_stats.ts for files, their text table and CSV.
 */
import { needNs, needOptions, needPath } from "./api_args.js";
import { computeStepStats, stepStatsOf, timelinePass, type StepStats } from "../core/step_stats.js";
import { gapsOf, type DeviceGaps } from "../core/gaps.js";
import { csvField } from "./stats.js";
import { createEngine } from "./wasm.js";
import { fileSource } from "./file_source.js";

/** Per-step statistics of the file at `input` (this thread: one timeline pass). */
export async function stepStats(input: string, opts: { steps?: string | RegExp; allApi?: boolean } = {}): Promise<StepStats[]> {
  needPath("stepStats", "input", input);
  needOptions("stepStats", opts);
  const src = fileSource(input);
  try {
    return await computeStepStats(await createEngine(), src, opts);
  } finally {
    src.close();
  }
}

/**
 * The timeline figures of the file at `input` from one timeline pass (this thread): its steps when `steps` is given
 * (a step pattern), its GPU idle gaps of at least `minGapNs` when `gaps` is set.
 */
export async function timelineStats(
  input: string, opts: { steps?: string | RegExp; gaps?: boolean; minGapNs?: number; allApi?: boolean },
): Promise<{ steps?: StepStats[]; gaps?: DeviceGaps[] }> {
  needPath("timelineStats", "input", input);
  needOptions("timelineStats", opts);
  // A NaN or a string found no gap at all, silently (the CLI refuses such a --gap-min).
  needNs("timelineStats", "minGapNs", opts?.minGapNs);
  const src = fileSource(input);
  let tl: Awaited<ReturnType<typeof timelinePass>>;
  try {
    tl = await timelinePass(await createEngine(), src, { steps: opts.steps, allApi: opts.allApi });
  } finally {
    src.close();
  }
  return {
    steps: opts.steps !== undefined ? stepStatsOf(tl, opts.steps) : undefined,
    gaps: opts.gaps ? gapsOf(tl, opts.minGapNs) : undefined,
  };
}

/** The text table of a file's steps (one row per step and device). */
export function formatSteps(steps: StepStats[]): string {
  if (steps.length === 0) return "  steps: none (no NVTX or ROCTx range matches the step pattern; --steps REGEX sets it)";
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

/** Columns of `rawtrace stats --steps REGEX --csv`. */
export const STEPS_CSV_COLUMNS = [
  "file", "step", "name", "device", "host_start_ns", "host_ns", "step_ns", "busy_pct", "kernel_pct", "memcpy_pct",
  "memset_pct", "idle_pct", "kernels", "launch_p50_ns", "launch_p99_ns",
] as const;

/** `rawtrace stats --steps REGEX --csv`: a header row, then one row per step and device, per file (shares in %). */
export function stepsCsv(files: Array<{ input: string; steps: StepStats[] }>): string {
  const lines = [STEPS_CSV_COLUMNS.join(",")];
  for (const f of files) {
    for (const s of f.steps) {
      lines.push([
        csvField(f.input), s.step, csvField(s.name), s.device, s.hostStartNs, s.hostNs, s.spanNs, s.busyPct, s.kernelPct,
        s.memcpyPct, s.memsetPct, s.idlePct, s.kernels, s.launchP50Ns, s.launchP99Ns,
      ].join(","));
    }
  }
  return lines.join("\n") + "\n";
}
