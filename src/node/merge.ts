/**
 * `rawtrace merge`: one trace for a multi-rank job (design: src/core/merge.ts).
 *
 * Chrome JSON: (1) pass 1 of every rank on the pool (rank, host, devices, first event, clock anchors) → the plan:
 * rank slots, labels, one time base; (2) every rank converted on the pool in events-only mode with its slot into a
 * fragment file next to the output (workers write them); (3) this thread writes the header, the fragments in slot
 * order as they complete (so the ranks' conversions overlap the concatenation), and the trailer, through gzip when
 * the output ends in .gz, into the output opened as src/node/output.ts describes (an exclusive temporary published
 * when complete; `-`, FIFOs and devices directly; never an input). Fragments are exclusive temporaries unlinked as
 * soon as they are created (the workers write them, this thread reads them through their descriptors), so nothing
 * is left whatever happens. Any failing rank fails the merge (a job trace with a rank missing would mislead).
 *
 * XSpace: XProf reads one `<host>.xplane.pb` per host from `<logdir>/plugins/profile/<run>/`. Every rank is
 * converted on the pool with the shared profile start (so the hosts' timelines line up in XProf's multi-host
 * views). A host with one rank gets that rank's XSpace; the ranks of a host with several are written as parts
 * (src/core/merge.ts planXSpaceHosts: GPU ordinals of the host, rank index) and joined into the host's one XSpace,
 * one `/host:CPU` plane with every rank's threads and one plane per GPU (src/node/xspace_merge.ts). Ranks whose
 * dumps name no host are each their own `unknown_host_rank<N>.xplane.pb`.
 */
import { needOptions, needPath, needPaths } from "./api_args.js";
import { closeSync, readSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { FdSink, InputSet, OutputFile, createTemp, makeDir, isStreamOutput, removeDirsIfEmpty } from "./output.js";
import { removeOwned } from "./owned.js";
import { gzipByName } from "./block_gzip.js";
import { givenNames, spoolInputs } from "./file_source.js";
import { FilesMet, dumpName } from "./inputs.js";
import { RawtraceError, shownValue } from "../core/codes.js";
import type { AnalysisOptions, ConvertResult, FileInfo } from "../core/engine.js";
import {
  EventsJoiner, clockReport, mergedHeader, mergedTrailer, outcomeOf, planMerge, planXSpaceHosts, rankWarnings,
  skewMessages, xspaceWarningField,
  type ClockReport, type MergePlan, type RankOutcome, type RankWarning,
} from "../core/merge.js";
import { checkOutputOptions, xspaceProfilePath } from "./convert.js";
import { WorkerPool, poolJobs, type ActiveTask } from "./pool.js";
import { fileFraction, progressReports, type BatchProgress } from "./batch.js";

/** Options of {@link merge}. */
export interface MergeOptions {
  /** "chrome" (default: one JSON, gzip when the output ends in .gz) or "xspace" (output = a log directory). */
  format?: "chrome" | "xspace";
  /** gzip the Chrome JSON (default: when the output ends in .gz). */
  gzip?: boolean;
  /** gzip level 0–9 (0: rawtrace's encoder; 1–9: zlib's) of the gzip output (default: DEFAULT_GZIP_LEVEL of src/node/block_gzip.ts). */
  gzipLevel?: number;
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
   * (`clock.skewed`, src/core/merge.ts). Anything but a finite number ≥ 0 is USAGE.
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
  /** Ranks the merge could not settle: one rank in several files, world sizes that disagree (src/core/merge.ts rankWarnings). */
  rankWarnings: RankWarning[];
  events: number;
  bytesIn: number;
  bytesOut: number;
  seconds: number;
}

/**
 * The XSpace joiner (src/node/xspace_merge.ts), loaded on first need: the protobuf runtime it uses would otherwise
 * be loaded and booted at every start of the CLI (≈ 15 ms of its start-up on the 2-core VM). From the bundle it is
 * dist/node/xspace_merge.js, an entry of its own next to this module (scripts/build.mjs); from source, the .ts file.
 */
function xspaceJoiner(): Promise<typeof import("./xspace_merge.js")> {
  const here = import.meta.url;
  const url = new URL(here.endsWith(".ts") ? "./xspace_merge.ts" : "./xspace_merge.js", here).href;
  return import(url);
}

/**
 * `maxSkewMs` must be a finite number ≥ 0 (USAGE otherwise, as the CLI's --max-skew): NaN compared false with every
 * skew, which switched off both the check and the default 1 s report; a negative one failed every merge with a
 * garbled message; a string was compared as text.
 */
function checkMaxSkew(ms: unknown): void {
  if (ms === undefined || (typeof ms === "number" && Number.isFinite(ms) && ms >= 0)) return;
  throw new RawtraceError("USAGE", `maxSkewMs must be a number of milliseconds ≥ 0 (finite), not ${shownValue(ms)}`);
}

/** Merges the dumps of a multi-rank job into one Chrome trace (or one XSpace per host). */
export async function merge(inputs: string[], output: string, opts: MergeOptions = {}): Promise<MergeResult> {
  needPaths("merge", inputs);
  needOptions("merge", opts);
  needPath("merge", "output", output);
  if (inputs.length === 0) throw new RawtraceError("USAGE", "merge needs at least one .rawtrace file");
  // One dump given twice would put every event of that rank in the trace twice (the CLI keeps such an input once,
  // src/node/inputs.ts expandInputs): refused here rather than guessed. Told by device and inode, so that a symlink
  // or a hard link to a dump already given counts as the dump.
  const seen = new FilesMet();
  for (const p of inputs) {
    const first = seen.meet(p);
    if (first !== undefined) throw new RawtraceError("USAGE", `merge: ${p} is given more than once${first !== p ? ` (also as ${first})` : ""}: give each rank's dump once`, p);
  }
  const format = opts.format ?? "chrome";
  checkOutputOptions({ ...opts, format }, output, "merge");
  checkMaxSkew(opts.maxSkewMs);
  if (format === "xspace" && output === "-") {
    // `-` is standard output, which cannot hold a log directory (it made a folder named `-`).
    throw new RawtraceError("USAGE", "-o -: an XSpace merge writes a log directory (one <host>.xplane.pb per host under plugins/profile/<run>/), not standard output: give -o a directory");
  }
  if (format === "xspace" && output.endsWith(".xplane.pb")) {
    throw new RawtraceError("USAGE", `${output}: an XSpace merge writes one <host>.xplane.pb per host under a log directory (plugins/profile/<run>/): give -o a directory`);
  }
  // A bad `jobs` is USAGE before anything is made (before: after the output was claimed, whose lock then refused the
  // corrected call for 2 minutes), also with a pool of the caller's (which it then does not size).
  const jobs = poolJobs(inputs.length, opts.jobs);
  // Every rank is read twice (plan, then conversion): non-seekable inputs are spooled once — before the output is
  // claimed: the copy runs on this thread, and a lock held through a slow one (a stdin rank that takes minutes to
  // arrive) went unrefreshed and was taken over as stale by another run.
  const spooled = spoolInputs(inputs);
  // Chrome: claim the output before any conversion (exists, is an input, is being written by another run).
  let file: OutputFile | null = null;
  try {
    if (format === "chrome" && !isStreamOutput(output)) makeDir(dirname(output) || ".", "the output's folder");
    file = format === "chrome" ? OutputFile.open(output, { force: opts.force, inputs }) : null;
  } catch (e) {
    spooled.release();
    throw e;
  }
  // The plan, the clock report, the outputs and every message name the inputs as given (standard input:
  // /dev/stdin, as convert names it); only the workers read the spooled copies.
  const reads = spooled.paths;
  const pool = opts.pool ?? new WorkerPool({ jobs });
  const t0 = performance.now();
  const sizes = inputs.map(() => 0);
  let phase = 0; // 0 planning (pass 1, counted as 20 % of the work), 1 converting
  let doneBytes = 0;
  let filesDone = 0;
  const progress = progressReports(opts.onProgress, () => {
    const active = pool.active().map((t) => ({ ...t, file: inputs[reads.indexOf(t.file)] ?? t.file }));
    const total = sizes.reduce((a, b) => a + b, 0);
    const inflight = active.reduce((n, t: ActiveTask) => n + (phase === 0 ? 0.2 * (t.total ? t.done / t.total : 0) : 0.2 + 0.8 * fileFraction(t)) * t.total, 0);
    return {
      files: inputs.length, filesDone, filesFailed: 0, bytesTotal: total, bytesDone: doneBytes + inflight,
      seconds: (performance.now() - t0) / 1000, active,
    };
  }, opts.progressMs);
  try {
    const infos = await Promise.all(reads.map(async (f, i) => {
      const info = await pool.info(f, { steps: opts.analysis?.steps });
      sizes[i] = info.bytes;
      doneBytes += 0.2 * info.bytes;
      return info;
    }));
    phase = 1;
    infos.forEach((info, i) => (info.file = dumpName(inputs[i])));
    const plan = planMerge(inputs, infos);
    const clock = clockReport(plan, infos, opts.maxSkewMs !== undefined ? opts.maxSkewMs * 1e6 : undefined);
    const rankNotes = rankWarnings(plan, infos, inputs);
    if (opts.maxSkewMs !== undefined && clock.skewed.length) {
      throw new RawtraceError("CLOCK_SKEW", `clock skew beyond ${opts.maxSkewMs} ms (--max-skew; Node API: maxSkewMs): ${skewMessages(clock).join("; ")}`);
    }
    const step = (i: number) => {
      doneBytes += 0.8 * sizes[i];
      filesDone++;
    };
    const r = format === "xspace"
      ? await mergeXSpace(pool, plan, infos, output, reads, opts, step,
        // The job's clock skew and rank conflicts, as XSpace warnings in every host's file (Chrome: rawtrace.merge).
        Buffer.concat([
          ...skewMessages(clock).map((m) => xspaceWarningField(`rawtrace CLOCK_SKEW: ${m}`)),
          ...rankNotes.map((w) => xspaceWarningField(`rawtrace ${w.code}: ${w.message}`)),
        ]))
      : await mergeChrome(pool, plan, infos, clock, file!, reads, opts, step, rankNotes);
    progress.last(); // the last report says every file is done, as convertBatch's does
    await progress.settled();
    progress.rethrow();
    const ranks: MergedRank[] = plan.ranks.map((p, k) => ({
      ...r.outcomes[k], file: p.file, rank: p.rank, slot: p.slot, host: p.host, bytesIn: infos[p.index].bytes,
      output: r.outputs[k],
    }));
    return {
      output, outputs: format === "xspace" ? [...new Set(r.outputs)] : [output], plan, ranks, clock, rankWarnings: rankNotes,
      events: ranks.reduce((n, x) => n + x.events, 0), bytesIn: ranks.reduce((n, x) => n + x.bytesIn, 0),
      bytesOut: r.bytesOut, seconds: (performance.now() - t0) / 1000,
    };
  } catch (e) {
    file?.abort();
    throw givenNames(e, reads, inputs);
  } finally {
    spooled.release();
    progress.stop();
    if (!opts.pool) await pool.close();
  }
}

type Step = (index: number) => void;

/**
 * Ranks converted ahead of the one being appended (Chrome) or at once (XSpace): the pool's workers and a few more,
 * so that a slow rank leaves the workers something to do. Each holds a descriptor (a fragment or part) only while it
 * is converted or waits for its turn: a merge's descriptors do not grow with its ranks (one per rank, made up
 * front, failed 1,000 ranks with EMFILE under `ulimit -n 1024`).
 */
function ranksAhead(pool: WorkerPool): number {
  return pool.size + Math.min(pool.size, 8);
}

async function mergeChrome(
  pool: WorkerPool, plan: MergePlan, infos: FileInfo[], clock: ClockReport, file: OutputFile, reads: string[],
  opts: MergeOptions, step: Step, rankNotes: RankWarning[],
): Promise<{ outcomes: RankOutcome[]; outputs: string[]; bytesOut: number }> {
  const output = file.path;
  const gzip = opts.gzip ?? gzipByName(output);
  // Fragments: exclusive temporaries next to the output, unlinked at once (their descriptors stay open until the
  // rank is appended). A rank is started only when it is fewer than ranksAhead() ranks after the one being appended.
  const fragments: number[] = plan.ranks.map(() => -1);
  const pending: Promise<ConvertResult>[] = [];
  const start = (k: number) => {
    const r = plan.ranks[k];
    const t = createTemp(file.out.kind === "regular" ? file.out.target : join(tmpdir(), "rawtrace-merge"), `rank${r.slot}.part`, true);
    removeOwned(t.path);
    fragments[k] = t.fd;
    pending[k] = pool.convert({
      input: reads[r.index], output: `${output} (rank ${r.rank} fragment)`, allApi: opts.allApi, fd: t.fd, analysis: opts.analysis,
      merge: { namespace: r.slot, label: r.label, baseTimeNs: plan.baseTimeNs, eventsOnly: true },
    }).then((res) => {
      step(r.index);
      return res;
    });
    pending[k].catch(() => {}); // awaited below; a failure of one must not go unobserved meanwhile
  };
  const ahead = ranksAhead(pool);
  const out = new FdSink(file.fd, output, gzip, opts.gzipLevel);
  const put = async (b: Uint8Array) => {
    out.write(b);
    await out.drain();
  };
  try {
    for (let k = 0; k < Math.min(ahead, plan.ranks.length); k++) start(k);
    const joiner = new EventsJoiner();
    await put(Buffer.from(mergedHeader(plan, infos)));
    const outcomes: RankOutcome[] = [];
    const buf = Buffer.allocUnsafe(4 << 20);
    for (let k = 0; k < plan.ranks.length; k++) {
      const res = await pending[k];
      if (res.baseTimeNs !== plan.baseTimeNs) {
        throw new RawtraceError("INTERNAL", `${plan.ranks[k].file}: converted on time base ${res.baseTimeNs}, not the merge's ${plan.baseTimeNs}`);
      }
      outcomes.push(outcomeOf({ events: res.events, apiCallsHidden: res.apiCallsHidden, info: res.info }));
      for (let pos = 0; ;) {
        const n = readSync(fragments[k], buf, 0, buf.length, pos);
        if (n === 0) break;
        pos += n;
        await put(joiner.push(buf.subarray(0, n)));
      }
      closeSync(fragments[k]);
      fragments[k] = -1;
      if (k + ahead < plan.ranks.length) start(k + ahead);
    }
    await put(Buffer.from(mergedTrailer(plan, outcomes, clock, { traceName: basename(output), wroteEvents: joiner.wroteEvents, rankWarnings: rankNotes })));
    await out.finish();
    file.commit();
    return { outcomes, outputs: plan.ranks.map(() => output), bytesOut: out.bytes };
  } catch (e) {
    out.destroy();
    file.abort();
    await Promise.allSettled(pending);
    throw e;
  } finally {
    for (const fd of fragments) if (fd >= 0) closeSync(fd);
  }
}

async function mergeXSpace(
  pool: WorkerPool, plan: MergePlan, infos: FileInfo[], logdir: string, reads: string[], opts: MergeOptions, step: Step,
  trailer: Uint8Array,
): Promise<{ outcomes: RankOutcome[]; outputs: string[]; bytesOut: number }> {
  const hosts = planXSpaceHosts(plan, infos);
  // Loaded before any output exists: a joiner that cannot be loaded leaves nothing behind.
  const joiner = hosts.some((h) => h.ranks.length > 1) ? await xspaceJoiner() : null;
  const finals = hosts.map((h) => xspaceProfilePath(logdir, plan.profileStartNs, h.name));
  finals.forEach((f, i) => {
    // Two host names that differ only in characters a file name cannot hold.
    if (finals.indexOf(f) !== i) finals[i] = f.replace(/\.xplane\.pb$/, `_${i}.xplane.pb`);
  });
  const ins = new InputSet(plan.ranks.map((r) => r.file));
  // Every host's file is checked before any work (exists, is an input); it is opened (temporary and lock) when its
  // first rank starts, and its descriptor closed once written (seal): descriptors do not grow with the hosts.
  for (const f of finals) OutputFile.check(f, { force: opts.force, inputs: ins });
  const made = makeDir(dirname(finals[0]), "the XProf run folder");
  const files: Array<OutputFile | null> = hosts.map(() => null);
  // A host with one rank: the rank writes the host's file; with several, each rank writes a part (created when the
  // rank starts, its descriptor closed when the rank is done), joined once every rank of the host is done.
  const parts: Array<Array<{ path: string; fd: number }>> = hosts.map(() => []);
  const removeParts = () => {
    for (const p of parts.flat()) {
      if (!p) continue;
      if (p.fd >= 0) closeSync(p.fd);
      p.fd = -1;
      removeOwned(p.path);
    }
  };
  const left = hosts.map((h) => h.ranks.length);
  const outputOf: string[] = [];
  hosts.forEach((h, i) => h.ranks.forEach((k) => (outputOf[k] = finals[i])));
  const order = hosts.flatMap((h, i) => h.ranks.map((_, j) => [i, j] as const));
  const results: ConvertResult[] = [];
  let bytesOut = 0;
  const running: Promise<unknown>[] = [];
  let failed = false;
  const one = async (i: number, j: number) => {
    const h = hosts[i];
    const k = h.ranks[j];
    const r = plan.ranks[k];
    const file = (files[i] ??= OutputFile.open(finals[i], { force: opts.force, inputs: ins }));
    const part = h.ranks.length === 1 ? null : createTemp(finals[i], "part");
    if (part) parts[i][j] = part;
    const res = await pool.convert({
      input: reads[r.index], output: finals[i], format: "xspace", allApi: opts.allApi, analysis: opts.analysis,
      fd: part ? part.fd : file.fd,
      merge: { namespace: r.slot, label: h.labels[j], baseTimeNs: plan.profileStartNs, xspaceHost: h.slots[j] },
    });
    if (part) {
      closeSync(part.fd);
      part.fd = -1;
    }
    step(r.index);
    if (res.baseTimeNs !== plan.profileStartNs) {
      throw new RawtraceError("INTERNAL", `${r.file}: profile start ${res.baseTimeNs}, not the merge's ${plan.profileStartNs}`);
    }
    results[k] = res;
    if (--left[i] > 0 || failed) return;
    // The host's last rank: join its parts, append the job's warnings (XSpace fields may follow in any order), and
    // close its file; it is published with the others once every host is written.
    if (h.ranks.length === 1) bytesOut += res.bytesOut;
    else {
      bytesOut += joiner!.joinXSpaceParts(parts[i].map((p) => p.path), file.fd, finals[i]);
      for (const p of parts[i]) removeOwned(p.path);
    }
    if (trailer.length) {
      file.write(trailer);
      bytesOut += trailer.length;
    }
    file.seal();
  };
  try {
    // ranksAhead() lanes take the ranks host by host: at most that many parts and host files open at a time.
    let next = 0;
    const lane = async () => {
      while (next < order.length && !failed) {
        const [i, j] = order[next++];
        const p = one(i, j);
        running.push(p);
        try {
          await p;
        } catch (e) {
          failed = true;
          throw e;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(ranksAhead(pool), order.length) }, lane));
    // Every host is written: only now replace what was there.
    for (const f of files) f!.commit();
    return {
      outcomes: results.map((res) => outcomeOf({ events: res.events, apiCallsHidden: res.apiCallsHidden, info: res.info })),
      outputs: plan.ranks.map((_, k) => outputOf[k]),
      bytesOut,
    };
  } catch (e) {
    failed = true;
    await Promise.allSettled(running); // no worker still writes a part when they are removed
    for (const f of files) f?.abort();
    removeParts(); // before the folders: a part left in the run folder kept it (and its parents) from going
    removeDirsIfEmpty(made); // the run folder this merge made, when nothing else is in it
    throw e;
  } finally {
    removeParts();
  }
}

