/**
 * `rawtrace/node`: the Node API of rawtrace (docs/node-api.md).
 *
 * ```ts
 * import { convertFile, convertBatch, merge, stats, WorkerPool } from "rawtrace/node";
 *
 * await convertFile("run.rawtrace", "run.json.gz");                        // one file, this thread
 * const pool = new WorkerPool({ jobs: 4 });                                // reusable worker threads
 * const r = await convertBatch(["a.rawtrace", "b.rawtrace"], { pool, outDir: "out" });
 * await merge(ranks, "job.json", { pool });                               // one trace for a multi-rank job
 * const s = await stats("run.rawtrace", { pool });                        // GPU busy %, top kernels, …
 * await pool.close();                                                     // releaseProxy + terminate
 * ```
 *
 * Errors are {@link RawtraceError}s whose `name`/`code` is a stable code (docs/errors.md), also after crossing a
 * worker boundary.
 */
export { convertFile, infoFile, xspaceProfilePath, type ConvertFileOptions } from "./convert.js";
export { convertStream, type ConvertStreamOptions } from "./stream.js";
export {
  convertBatch, fileFraction, type BatchOptions, type BatchProgress, type BatchResult, type FileResult,
} from "./batch.js";
export { merge, type MergeOptions, type MergeResult, type MergedRank } from "./merge.js";
export {
  stats, statsFiles, formatStats, statsJson, statsCsv, STATS_CSV_COLUMNS, type StatsOptions, type StatsFileResult,
} from "./stats.js";
export { stepStats, timelineStats, formatSteps, stepsCsv, STEPS_CSV_COLUMNS } from "./step_report.js";
export { formatGaps, gapsCsv, GAPS_CSV_COLUMNS } from "./gap_report.js";
export type { StepStats } from "../core/step_stats.js";
export type { DeviceGaps } from "../core/gaps.js";
export { WorkerPool, defaultJobs, type ActiveTask, type PoolOptions } from "./pool.js";
export { expandInputs } from "./inputs.js";
export { fileSource } from "./file_source.js";
export { createEngine, wasmPath } from "./wasm.js";
export {
  RawtraceError, isRawtraceError, LOSS_WARNINGS, type LossReport, type LostRange, type Warning, type WarningName,
} from "../core/codes.js";
export {
  Engine, memorySource,
  type ByteReader, type ByteSource, type ConvertOptions, type ConvertResult, type DeviceSummary, type FileInfo,
  type MergeSlot, type Progress, type Sink,
} from "../core/engine.js";
export {
  EventKind, KIND_NAMES, kindName, byTotal, computeStats, decodeStats,
  type CopyStats, type DeviceStats, type NameStats, type TraceStats,
} from "../core/stats.js";
export {
  EventsJoiner, chromeBaseFor, clockReport, mergedHeader, mergedTrailer, outcomeOf, planMerge, rankWarnings,
  skewMessages, DEFAULT_SKEW_WARN_NS, type ClockReport, type MergePlan, type RankClock, type RankOutcome, type RankPlan,
  type RankWarning, type SkewedRank,
} from "../core/merge.js";
