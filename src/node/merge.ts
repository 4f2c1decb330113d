/**
 * `rawtrace merge`: one trace for a multi-rank job (design: src/core/merge.ts).
 *
 * Chrome JSON: (1) pass 1 of every rank on the pool (rank, host, devices, first event, clock anchors) → the plan:
 * rank slots, labels, one time base; (2) every rank converted on the pool in events-only mode with its slot into a
 * fragment file next to the output (workers write them); (3) this thread writes the header, the fragments in slot
 * order as they complete (so the ranks' conversions overlap the concatenation), and the trailer, through gzip when
 * the output ends in .gz, into `<output>.tmp`, renamed at the end. Any failing rank fails the merge (a job trace
 * with a rank missing would mislead); the fragments are removed either way.
 *
 * XSpace: XProf reads one `<host>.xplane.pb` per host from `<logdir>/plugins/profile/<run>/`. Every rank is
 * converted on the pool with the shared profile start (so the hosts' timelines line up in XProf's multi-host
 * views). A host with one rank gets that rank's XSpace; the ranks of a host with several are written as parts
 * (src/core/merge.ts planXSpaceHosts: GPU ordinals of the host, rank index) and joined into the host's one XSpace,
 * one `/host:CPU` plane with every rank's threads and one plane per GPU (src/node/xspace_merge.ts). Ranks whose
 * dumps name no host are each their own `unknown_host_rank<N>.xplane.pb`.
 */
import { appendFileSync, closeSync, createWriteStream, existsSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { once } from "node:events";
import { basename, dirname } from "node:path";
import { createGzip, constants as zc } from "node:zlib";
import { RawtraceError } from "../core/codes.js";
import type { AnalysisOptions, ConvertResult, FileInfo } from "../core/engine.js";
import {
  EventsJoiner, clockReport, mergedHeader, mergedTrailer, outcomeOf, planMerge, planXSpaceHosts, skewMessages,
  xspaceWarningField,
  type ClockReport, type MergePlan, type RankOutcome,
} from "../core/merge.js";
import { joinXSpaceParts } from "./xspace_merge.js";
import { xspaceProfilePath } from "./convert.js";
import { WorkerPool, type ActiveTask } from "./pool.js";
import { fileFraction, type BatchProgress } from "./batch.js";

/** Options of {@link merge}. */
export interface MergeOptions {
  /** "chrome" (default: one JSON, gzip when the output ends in .gz) or "xspace" (output = a log directory). */
  format?: "chrome" | "xspace";
  /** gzip the Chrome JSON (default: when the output ends in .gz). */
  gzip?: boolean;
  /** Overwrite existing outputs. */
  force?: boolean;
  /** Keep every API call (no Kineto blocklist). */
  allApi?: boolean;
  /** GPU annotations on/off and the step pattern (docs/analysis.md). */
  analysis?: AnalysisOptions;
  /** Workers when no `pool` is given (default: one per core, at most one per input). */
  jobs?: number;
  /** A pool to run on (left open); default: one made for this call and closed at its end. */
  pool?: WorkerPool;
  /** Called every `progressMs` (default 200) while the merge runs. */
  onProgress?: (p: BatchProgress) => void;
  progressMs?: number;
  /**
   * Largest clock skew allowed, ms: a rank whose clock start is further than this from the median of the ranks'
   * fails the merge (CLOCK_SKEW) before anything is written. Default: no limit; ranks beyond 1 s are only reported
   * (`clock.skewed`, src/core/merge.ts).
   */
  maxSkewMs?: number;
}

/** One rank of a finished merge. */
export interface MergedRank extends RankOutcome {
  file: string;
  rank: number;
  slot: number;
  host: string;
  bytesIn: number;
  /** XSpace: the file of the rank's host. */
  output?: string;
}

/** What a merge did. */
export interface MergeResult {
  /** Chrome: the merged file. XSpace: the log directory. */
  output: string;
  /** XSpace: one file per host (ranks without a host name: one each). */
  outputs: string[];
  plan: MergePlan;
  ranks: MergedRank[];
  clock: ClockReport;
  events: number;
  bytesIn: number;
  bytesOut: number;
  seconds: number;
}

/** Merges the dumps of a multi-rank job into one Chrome trace (or one XSpace per host). */
export async function merge(inputs: string[], output: string, opts: MergeOptions = {}): Promise<MergeResult> {
  if (inputs.length === 0) throw new RawtraceError("USAGE", "merge needs at least one .rawtrace file");
  const format = opts.format ?? "chrome";
  if (format === "xspace" && (opts.gzip || output.endsWith(".gz"))) {
    throw new RawtraceError("USAGE", "XSpace output cannot be gzipped (XProf reads .xplane.pb)");
  }
  if (format === "xspace" && output.endsWith(".xplane.pb")) {
    throw new RawtraceError("USAGE", `${output}: an XSpace merge writes one <host>.xplane.pb per host under a log directory (plugins/profile/<run>/): give -o a directory`);
  }
  if (format === "chrome" && existsSync(output) && !opts.force) {
    throw new RawtraceError("EXISTS", `${output}: already exists (use --force to overwrite)`, output);
  }
  const pool = opts.pool ?? new WorkerPool({ jobs: Math.min(opts.jobs ?? Infinity, inputs.length) });
  const t0 = performance.now();
  const sizes = inputs.map(() => 0);
  let phase = 0; // 0 planning (pass 1, counted as 20 % of the work), 1 converting
  let doneBytes = 0;
  let filesDone = 0;
  const report = () => {
    const active = pool.active();
    const total = sizes.reduce((a, b) => a + b, 0);
    const inflight = active.reduce((n, t: ActiveTask) => n + (phase === 0 ? 0.2 * (t.total ? t.done / t.total : 0) : 0.2 + 0.8 * fileFraction(t)) * t.total, 0);
    opts.onProgress?.({
      files: inputs.length, filesDone, filesFailed: 0, bytesTotal: total, bytesDone: doneBytes + inflight,
      seconds: (performance.now() - t0) / 1000, active,
    });
  };
  const timer = opts.onProgress ? setInterval(report, opts.progressMs ?? 200) : null;
  try {
    const infos = await Promise.all(inputs.map(async (f, i) => {
      const info = await pool.info(f);
      sizes[i] = info.bytes;
      doneBytes += 0.2 * info.bytes;
      return info;
    }));
    phase = 1;
    const plan = planMerge(inputs, infos);
    const clock = clockReport(plan, infos, opts.maxSkewMs !== undefined ? opts.maxSkewMs * 1e6 : undefined);
    if (opts.maxSkewMs !== undefined && clock.skewed.length) {
      throw new RawtraceError("CLOCK_SKEW", `clock skew beyond --max-skew ${opts.maxSkewMs} ms: ${skewMessages(clock).join("; ")}`);
    }
    const step = (i: number) => {
      doneBytes += 0.8 * sizes[i];
      filesDone++;
    };
    const r = format === "xspace"
      ? await mergeXSpace(pool, plan, infos, output, opts, step)
      : await mergeChrome(pool, plan, infos, clock, output, opts, step);
    if (format === "xspace" && clock.skewed.length) {
      // The job's clock skew, as an XSpace warning in every host's file (Chrome: rawtrace.merge.clock).
      const w = Buffer.concat(skewMessages(clock).map((m) => xspaceWarningField(`rawtrace CLOCK_SKEW: ${m}`)));
      for (const f of new Set(r.outputs)) appendFileSync(f, w);
      r.bytesOut += w.length * new Set(r.outputs).size;
    }
    const ranks: MergedRank[] = plan.ranks.map((p, k) => ({
      ...r.outcomes[k], file: p.file, rank: p.rank, slot: p.slot, host: p.host, bytesIn: infos[p.index].bytes,
      output: r.outputs[k],
    }));
    return {
      output, outputs: format === "xspace" ? [...new Set(r.outputs)] : [output], plan, ranks, clock,
      events: ranks.reduce((n, x) => n + x.events, 0), bytesIn: ranks.reduce((n, x) => n + x.bytesIn, 0),
      bytesOut: r.bytesOut, seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    if (timer) clearInterval(timer);
    if (!opts.pool) await pool.close();
  }
}

type Step = (index: number) => void;

async function mergeChrome(
  pool: WorkerPool, plan: MergePlan, infos: FileInfo[], clock: ClockReport, output: string, opts: MergeOptions, step: Step,
): Promise<{ outcomes: RankOutcome[]; outputs: string[]; bytesOut: number }> {
  mkdirSync(dirname(output) || ".", { recursive: true });
  const fragments = plan.ranks.map((r) => `${output}.rank${r.slot}.${process.pid}.part`);
  const tmp = `${output}.tmp`;
  const gzip = opts.gzip ?? output.endsWith(".gz");
  const pending = plan.ranks.map((r, k) =>
    pool.convert({
      input: r.file, output: fragments[k], allApi: opts.allApi, analysis: opts.analysis,
      merge: { namespace: r.slot, label: r.label, baseTimeNs: plan.baseTimeNs, eventsOnly: true },
    }).then((res) => {
      step(r.index);
      return res;
    }));
  pending.forEach((p) => p.catch(() => {})); // each is awaited below; a failure of one must not go unobserved
  const out = new OutputFile(tmp, gzip);
  try {
    const joiner = new EventsJoiner();
    await out.write(Buffer.from(mergedHeader(plan, infos)));
    const outcomes: RankOutcome[] = [];
    const buf = Buffer.allocUnsafe(4 << 20);
    for (let k = 0; k < plan.ranks.length; k++) {
      const res = await pending[k];
      if (res.baseTimeNs !== plan.baseTimeNs) {
        throw new RawtraceError("INTERNAL", `${plan.ranks[k].file}: converted on time base ${res.baseTimeNs}, not the merge's ${plan.baseTimeNs}`);
      }
      outcomes.push(outcomeOf({ events: res.events, apiCallsHidden: res.apiCallsHidden, info: res.info }));
      const fd = openSync(fragments[k], "r");
      try {
        for (;;) {
          const n = readSync(fd, buf, 0, buf.length, null);
          if (n === 0) break;
          await out.write(joiner.push(buf.subarray(0, n)));
        }
      } finally {
        closeSync(fd);
      }
      rmSync(fragments[k], { force: true });
    }
    await out.write(Buffer.from(mergedTrailer(plan, outcomes, clock, { traceName: basename(output), wroteEvents: joiner.wroteEvents })));
    const bytesOut = await out.close();
    renameSync(tmp, output);
    return { outcomes, outputs: plan.ranks.map(() => output), bytesOut };
  } catch (e) {
    await out.abort();
    await Promise.allSettled(pending);
    throw e;
  } finally {
    for (const f of fragments) rmSync(f, { force: true });
    rmSync(tmp, { force: true });
  }
}

async function mergeXSpace(
  pool: WorkerPool, plan: MergePlan, infos: FileInfo[], logdir: string, opts: MergeOptions, step: Step,
): Promise<{ outcomes: RankOutcome[]; outputs: string[]; bytesOut: number }> {
  const hosts = planXSpaceHosts(plan, infos);
  const finals = hosts.map((h) => xspaceProfilePath(logdir, plan.profileStartNs, h.name));
  finals.forEach((f, i) => {
    // Two host names that differ only in characters a file name cannot hold.
    if (finals.indexOf(f) !== i) finals[i] = f.replace(/\.xplane\.pb$/, `_${i}.xplane.pb`);
  });
  for (const f of finals) {
    if (existsSync(f) && !opts.force) throw new RawtraceError("EXISTS", `${f}: already exists (use --force to overwrite)`, f);
  }
  mkdirSync(dirname(finals[0]), { recursive: true });
  // Each rank writes its part; a host with one rank has its part renamed into place, the others' parts are joined.
  const parts = hosts.map((h, i) => h.ranks.map((_, j) => `${finals[i]}.${j}.${process.pid}.part`));
  const tmps = finals.map((f) => `${f}.${process.pid}.tmp`);
  const outputOf: string[] = [];
  hosts.forEach((h, i) => h.ranks.forEach((k) => (outputOf[k] = finals[i])));
  let pending: Promise<ConvertResult>[][] = [];
  try {
    pending = hosts.map((h, i) => h.ranks.map((k, j) => {
      const r = plan.ranks[k];
      return pool.convert({
        input: r.file, output: parts[i][j], format: "xspace", allApi: opts.allApi, analysis: opts.analysis,
        merge: { namespace: r.slot, label: h.labels[j], baseTimeNs: plan.profileStartNs, xspaceHost: h.slots[j] },
      }).then((res) => {
        step(r.index);
        if (res.baseTimeNs !== plan.profileStartNs) {
          throw new RawtraceError("INTERNAL", `${r.file}: profile start ${res.baseTimeNs}, not the merge's ${plan.profileStartNs}`);
        }
        return res;
      });
    }));
    pending.flat().forEach((p) => p.catch(() => {})); // awaited below; a failure must not go unobserved meanwhile
    const results: ConvertResult[] = [];
    let bytesOut = 0;
    for (const [i, h] of hosts.entries()) {
      const res = await Promise.all(pending[i]);
      h.ranks.forEach((k, j) => (results[k] = res[j]));
      if (h.ranks.length === 1) {
        bytesOut += res[0].bytesOut;
        continue;
      }
      bytesOut += joinXSpaceParts(parts[i], tmps[i]);
      for (const p of parts[i]) rmSync(p, { force: true });
    }
    // Every host is written: only now replace what was there.
    hosts.forEach((h, i) => renameSync(h.ranks.length === 1 ? parts[i][0] : tmps[i], finals[i]));
    return {
      outcomes: results.map((res) => outcomeOf({ events: res.events, apiCallsHidden: res.apiCallsHidden, info: res.info })),
      outputs: plan.ranks.map((_, k) => outputOf[k]),
      bytesOut,
    };
  } catch (e) {
    await Promise.allSettled(pending.flat()); // no worker still writes a part when they are removed
    throw e;
  } finally {
    for (const p of parts.flat()) rmSync(p, { force: true });
    for (const t of tmps) rmSync(t, { force: true });
  }
}

/** A file written from this thread, plain (positional writes) or through streaming gzip with back pressure. */
class OutputFile {
  private fd = -1;
  private gz: ReturnType<typeof createGzip> | null = null;
  private file: ReturnType<typeof createWriteStream> | null = null;
  private bytes = 0;

  constructor(path: string, gzip: boolean) {
    if (gzip) {
      this.gz = createGzip({ level: zc.Z_DEFAULT_COMPRESSION, chunkSize: 1 << 20 });
      this.file = createWriteStream(path);
      this.gz.pipe(this.file);
    } else this.fd = openSync(path, "w");
  }

  async write(b: Uint8Array): Promise<void> {
    if (b.length === 0) return;
    this.bytes += b.length;
    if (this.gz) {
      if (!this.gz.write(Buffer.from(b))) await once(this.gz, "drain");
      return;
    }
    let off = 0;
    while (off < b.length) off += writeSync(this.fd, b, off, b.length - off);
  }

  /** Finishes the file; returns the bytes written before compression. */
  async close(): Promise<number> {
    if (this.gz) {
      this.gz.end();
      await once(this.file!, "close");
    } else closeSync(this.fd);
    this.fd = -1;
    return this.bytes;
  }

  async abort(): Promise<void> {
    if (this.gz) {
      this.gz.destroy();
      this.file!.destroy();
    } else if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}
