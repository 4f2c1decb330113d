/**
 * Multi-rank merge, host-neutral part: one Chrome trace for a distributed job out of one `.rawtrace` per rank.
 *
 * The core does the per-event work (assembly/emit/options.ts): each rank is converted with a pid namespace (its
 * slot: pids slot × 1000 + local, flow ids slot × 2^32 + correlation), a label on every process_name ("rank 3
 * (node-a)"), one fixed time base for every rank, and the Chrome emitter in events-only mode (every event written
 * as `,\n{...}`). The host writes one header (this module: distributedInfo, every rank's devices under their
 * remapped pids, baseTimeNanoseconds), streams the ranks' events one after the other into the one traceEvents
 * array ({@link EventsJoiner} drops the very first comma), and writes one trailer with the per-rank facts and the
 * clock report.
 *
 * Clocks: every rank's events are already Unix-epoch ns on its host's CLOCK_REALTIME, mapped from the vendor clock
 * through that file's CLOCK anchors (offset, plus linear drift between start and end anchors). What no dump can
 * show is how far the hosts' CLOCK_REALTIME disagree (NTP/PTP error). The clock report gives, per rank, the anchor
 * offset and drift that were applied and the collector start relative to the median of all ranks; the job's
 * residual skew is the spread (max − min) of the collector starts: ranks launched together start their collectors
 * within launch jitter of each other, so a spread beyond that is clock disagreement (or a staggered launch).
 *
 * Skew check: a rank whose clock start (its start CLOCK anchor's CLOCK_REALTIME reading, else the collector start)
 * is more than a threshold away from the median of the ranks' clock starts is reported by rank and host
 * ({@link SkewedRank}). The default threshold, {@link DEFAULT_SKEW_WARN_NS} = 1 s, sits far above both NTP-synchronized hosts (a few ms) and the
 * launch jitter of the ranks of one job (well under a second), and far below what makes the merged timeline wrong
 * to read (a training step is milliseconds to seconds): beyond it, one rank's events land a step or more off the
 * others, so the clocks disagree or the dumps are not of one run.
 */
import { spanWords } from "./span_words.js";
import type { ConvertResult, FileInfo, XSpaceHostSlot } from "./engine.js";
import type { LossReport, Warning } from "./codes.js";

/** Pids per rank slot (assembly/emit/options.ts NS_STRIDE). */
export const PID_STRIDE = 1000;
/** Local pid of GPU 0 in a slot. */
export const GPU_PID_OFFSET = 100;

/** One rank of a merge. */
export interface RankPlan {
  /** Input path. */
  file: string;
  /** Position in the inputs. */
  index: number;
  /** Pid namespace slot: the rank when every file has a distinct rank ≥ 0, else the position in the inputs. */
  slot: number;
  /** Rank from the dump's HEADER (-1 when unknown). */
  rank: number;
  host: string;
  /** process_name prefix: "rank 3 (node-a)". */
  label: string;
}

/** How a set of files is merged. */
export interface MergePlan {
  /** Ranks by slot. */
  ranks: RankPlan[];
  /** The job's world size: from the dumps' HEADERs, else the number of files. */
  worldSize: number;
  /** Chrome baseTimeNanoseconds of the merged trace: the time base grid (chromeBaseFor) below the earliest first event. */
  baseTimeNs: bigint;
  /** XSpace profile start shared by every rank: the earliest collector start or first event. */
  profileStartNs: bigint;
}

/** Clock facts of one rank (ns; numbers, signed where they can be negative). */
export interface RankClock {
  slot: number;
  rank: number;
  host: string;
  collectorStartNs: bigint;
  firstEventNs: bigint;
  /** Collector start − the median collector start of all ranks; null when the dump tells no time (cut in its HEADER). */
  startOffsetNs: number | null;
  /** CLOCK_REALTIME − vendor clock at the start anchor (the offset alignment applied); null without anchor. */
  anchorOffsetNs: number | null;
  /** Drift of the vendor clock against CLOCK_REALTIME between the start and end anchors, ppm; null without both. */
  driftPpm: number | null;
}

/** Default skew warning threshold: 1 s (see the module comment for why). */
export const DEFAULT_SKEW_WARN_NS = 1_000_000_000;

/** A rank whose collector start is further than the threshold from the median start of all ranks. */
export interface SkewedRank {
  slot: number;
  rank: number;
  host: string;
  file: string;
  /** Collector start − median start, ns (negative: earlier). */
  offsetNs: number;
}

/** Clock report of a merge. */
export interface ClockReport {
  ranks: RankClock[];
  /** The skew threshold the ranks were checked against, ns. */
  skewThresholdNs: number;
  /** Ranks beyond it (empty when the clocks agree). */
  skewed: SkewedRank[];
  /**
   * True when ranks are skewed and no strict majority of the ranks agrees within the threshold (two ranks that
   * disagree, or an even split): which clocks are off cannot be told. `skewed` then lists the side away from the
   * median start (the lower middle of an even count: the later side).
   */
  undecided: boolean;
  /** The ranks within the threshold of the median (the other side of an undecided skew). */
  agreeing: SkewedRank[];
  /** Spread (max − min) of the collector starts: the residual skew bound, ns (ranks without any time left out). */
  residualSkewNs: number;
  /** Median collector start, Unix ns. */
  medianStartNs: bigint;
}

/**
 * The Chrome JSON time base: `t` floored to a grid of 3,944,619 s (half of Kineto's 3-month grid, so ts stays under
 * the 2^42 µs where Perfetto keeps ns), as the core does for one file (assembly/emit/chrome_json.ts chromeBaseFor).
 */
export function chromeBaseFor(t: bigint): bigint {
  const grid = 3_944_619n * 1_000_000_000n;
  return t - (t % grid);
}

/**
 * Unix ns where a file's events start: its first event, else its collector start, else its start anchor's wall
 * clock (as the core chooses its time base, assembly/engine.ts beginEmit); 0 when the dump tells no time at all (cut
 * in its HEADER).
 */
export function firstOf(info: FileInfo): bigint {
  return info.firstNs > 0n ? info.firstNs : info.collectorStartNs > 0n ? info.collectorStartNs : info.clock?.start?.realtimeNs ?? 0n;
}

function labelOf(rank: number, host: string, file: string): string {
  const who = rank >= 0 ? `rank ${rank}` : file.replace(/^.*[\\/]/, "").replace(/\.rawtrace(\.gz)?$/i, "");
  return host ? `${who} (${host})` : who;
}

/** Plans a merge of `files` from their pass-1 infos (same order). */
export function planMerge(files: string[], infos: FileInfo[]): MergePlan {
  if (files.length === 0) throw new Error("merge needs at least one file");
  const ranks = infos.map((i) => i.rank);
  const distinct = ranks.every((r) => r >= 0) && new Set(ranks).size === ranks.length;
  const plans: RankPlan[] = files.map((file, index) => {
    const info = infos[index];
    const slot = distinct ? info.rank : index;
    return { file, index, slot, rank: info.rank, host: info.hostname, label: labelOf(info.rank, info.hostname, file) };
  });
  plans.sort((a, b) => a.slot - b.slot);
  const ws = Math.max(...infos.map((i) => i.worldSize));
  let first: bigint | undefined;
  let start: bigint | undefined;
  for (const i of infos) {
    const f = firstOf(i);
    if (f > 0n && (first === undefined || f < first)) first = f;
    for (const t of [i.collectorStartNs, i.firstNs]) if (t > 0n && (start === undefined || t < start)) start = t;
  }
  return {
    ranks: plans,
    worldSize: ws > 0 ? ws : files.length,
    baseTimeNs: chromeBaseFor(first ?? 0n),
    profileStartNs: start ?? 0n,
  };
}

/** A job-level warning of a merge about its ranks ({@link rankWarnings}). */
export interface RankWarning {
  code: "DUPLICATE_RANK" | "WORLD_SIZES_DIFFER";
  message: string;
}

/**
 * What the dumps' ranks say that the merge cannot settle, one message each (the CLI prints them as warnings, the
 * merged outputs keep them): a rank given by several files (the same run twice, or a HEADER whose rank changed: the
 * ranks are then told apart by input position, and HTA, which reads one trace per rank, keeps one of them), and
 * world sizes that disagree (the largest is used). Ranks missing from a world (a merge of a subset) are not a problem.
 * Files are named by `names` (by input position) when given, else by the plan's paths.
 */
export function rankWarnings(plan: MergePlan, infos: FileInfo[], names?: string[]): RankWarning[] {
  const out: RankWarning[] = [];
  const nameOf = (r: RankPlan) => names?.[r.index] ?? r.file;
  const byRank = new Map<number, string[]>();
  for (const r of [...plan.ranks].sort((a, b) => a.index - b.index)) {
    if (r.rank < 0) continue;
    const files = byRank.get(r.rank) ?? [];
    files.push(nameOf(r));
    byRank.set(r.rank, files);
  }
  for (const [rank, files] of [...byRank].sort((a, b) => a[0] - b[0])) {
    if (files.length < 2) continue;
    out.push({ code: "DUPLICATE_RANK", message: `rank ${rank} is the rank of ${files.length} files (${files.join(", ")}): the same run given twice, or a ` +
      "damaged HEADER; the merge numbers the ranks by input position, and HTA, which reads one trace per rank, would keep only one of them" });
  }
  const bySize = new Map<number, string[]>();
  for (const r of [...plan.ranks].sort((a, b) => a.index - b.index)) {
    const ws = infos[r.index].worldSize;
    if (ws <= 0) continue;
    const files = bySize.get(ws) ?? [];
    files.push(nameOf(r));
    bySize.set(ws, files);
  }
  if (bySize.size > 1) {
    const sizes = [...bySize].sort((a, b) => a[0] - b[0]).map(([ws, files]) => `${ws} (${files.join(", ")})`);
    out.push({ code: "WORLD_SIZES_DIFFER", message: `the files' world sizes disagree: ${sizes.join(", ")}; the dumps may not be of one run; world size ${plan.worldSize} is used` });
  }
  return out;
}

/** One XSpace of a merge: a host and the ranks whose planes it holds. */
export interface XSpaceHostPlan {
  /** Host name ("" when the dumps do not say: then each such rank is its own XSpace). */
  host: string;
  /** File stem: the host name, or `unknown_host_rank<N>` for a rank whose dump names no host. */
  name: string;
  /** Indices into `MergePlan.ranks`, in slot order. */
  ranks: number[];
  /** Per entry of `ranks`: the conversion's host-merge slot (undefined when the host has one rank). */
  slots: (XSpaceHostSlot | undefined)[];
  /** Per entry of `ranks`: the row label ("rank 3"). */
  labels: string[];
}

/** Ordinals between two ranks' first unlisted devices (XSpaceHostSlot.unmappedBase). */
const UNMAPPED_STRIDE = 256;

/**
 * The XSpaces of a merge: one per host (XProf's layout), holding every rank that ran there. On a host with several
 * ranks every GPU gets one ordinal (its `/device:GPU:<n>` plane): devices with the same UUID are the same GPU
 * (ranks that each see all GPUs); devices without a UUID are identified by their id when their rank lists several
 * (ranks that each see all GPUs: rank k's device k is GPU k) and are the rank's own when it lists one (a rank that
 * sees only "its" card as device 0: Gaudi's HPU_DEVICE never has a UUID; before 2026-12-03 four such ranks' cards
 * were one `/device:GPU:0`); a new GPU keeps its own id when no other GPU of the host took it, else takes the
 * smallest free ordinal (ranks that each see "their" GPU as device 0 under CUDA_VISIBLE_DEVICES). A plane written by
 * several ranks is marked `shared` (its rows get rank labels). The host's steps are its first rank's that has step
 * markers (FileInfo.stepNames, counted by pass 1; `producer`): the other ranks' steps join them.
 */
export function planXSpaceHosts(plan: MergePlan, infos: FileInfo[]): XSpaceHostPlan[] {
  const byHost = new Map<string, number[]>();
  const hosts: XSpaceHostPlan[] = [];
  plan.ranks.forEach((r, k) => {
    if (r.host === "") {
      hosts.push({ host: "", name: `unknown_host_rank${r.rank >= 0 ? r.rank : r.slot}`, ranks: [k], slots: [undefined], labels: [""] });
      return;
    }
    const list = byHost.get(r.host);
    if (list) list.push(k);
    else byHost.set(r.host, [k]);
  });
  for (const [host, ranks] of byHost) {
    const labels = ranks.map((k) => labelOf(plan.ranks[k].rank, "", plan.ranks[k].file));
    if (ranks.length === 1) {
      hosts.push({ host, name: host, ranks, slots: [undefined], labels });
      continue;
    }
    const ordinalOf = new Map<string, number>();
    const used = new Set<number>();
    const owners = new Map<number, Set<number>>();
    // The host's steps are the first rank's that has step markers (XProf's roots; the others join them): before
    // 2026-12-03 always the first rank's, so a first rank without any (cut before its first step, crashed) left
    // the whole host without steps in XProf.
    const withSteps = ranks.findIndex((k) => (infos[plan.ranks[k].index].stepNames ?? 1) > 0);
    const producer = withSteps < 0 ? 0 : withSteps;
    const maps = ranks.map((k, index) => {
      const devices = [...infos[plan.ranks[k].index].devices].sort((a, b) => a.id - b.id);
      const hasUuid = (d: { uuid: string }) => /[1-9a-f]/.test(d.uuid);
      const alone = devices.filter((d) => !hasUuid(d)).length === 1;
      return devices.map((d) => {
        const ident = hasUuid(d) ? `uuid:${d.uuid}` : alone ? `rank:${index}` : `id:${d.id}`;
        let o = ordinalOf.get(ident);
        if (o === undefined) {
          o = d.id;
          if (used.has(o)) for (o = 0; used.has(o);) o++;
          ordinalOf.set(ident, o);
          used.add(o);
        }
        owners.set(o, (owners.get(o) ?? new Set()).add(index));
        return { local: d.id, ordinal: o };
      });
    });
    // Devices a rank's table does not list (a lost DEVICES chunk, UNKNOWN_DEVICE) get ordinals above every listed
    // GPU, each rank's apart: before 2026-12-03 their own id, another rank's GPU of that ordinal (one plane for two).
    const firstFree = used.size ? Math.max(...used) + 1 : 0;
    hosts.push({
      host, name: host, ranks, labels,
      slots: maps.map((m, index) => ({
        ranks: ranks.length, index, producer: index === producer, unmappedBase: firstFree + index * UNMAPPED_STRIDE,
        devices: m.map((d) => ({ ...d, shared: owners.get(d.ordinal)!.size > 1 })),
      })),
    });
  }
  return hosts;
}

/**
 * The clock report of a plan (see the module comment for the definitions); ranks further than `skewThresholdNs`
 * (default {@link DEFAULT_SKEW_WARN_NS}) from the median start are listed in `skewed`.
 */
export function clockReport(plan: MergePlan, infos: FileInfo[], skewThresholdNs = DEFAULT_SKEW_WARN_NS): ClockReport {
  // A rank whose dump says neither (no HEADER and no event: a damaged dump) starts at its start anchor's wall clock,
  // as the skew check below reads it. A rank without any time (a dump cut in its HEADER: 0) is left out of the
  // median, the spread and the check: as Unix 0 it put them 56 years off and failed --max-skew.
  const starts = plan.ranks.map((r) => {
    const i = infos[r.index];
    return i.collectorStartNs > 0n ? i.collectorStartNs : firstOf(i);
  });
  const timed = plan.ranks.map((_, k) => k).filter((k) => starts[k] > 0n);
  const middle = <T>(xs: T[]): T | undefined => xs[(xs.length - 1) >> 1];
  const sorted = timed.map((k) => starts[k]).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const median = middle(sorted) ?? 0n;
  const ranks: RankClock[] = plan.ranks.map((r, k) => {
    const i = infos[r.index];
    const s = i.clock?.start;
    const e = i.clock?.end;
    let driftPpm: number | null = null;
    if (s && e && e.vendorNs > s.vendorNs) {
      driftPpm = (Number((e.realtimeNs - s.realtimeNs) - (e.vendorNs - s.vendorNs)) / Number(e.vendorNs - s.vendorNs)) * 1e6;
    }
    return {
      slot: r.slot, rank: r.rank, host: r.host, collectorStartNs: i.collectorStartNs, firstEventNs: i.firstNs,
      startOffsetNs: starts[k] > 0n ? Number(starts[k] - median) : null,
      anchorOffsetNs: s ? Number(s.realtimeNs - s.vendorNs) : null,
      driftPpm,
    };
  });
  // The skew check reads the start anchors (they map every event to Unix time), else the collector starts.
  const anchors = plan.ranks.map((r, k) => infos[r.index].clock?.start?.realtimeNs || starts[k]);
  const anchorMedian = middle(timed.map((k) => anchors[k]).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) ?? 0n;
  const skewed: SkewedRank[] = [];
  const agreeing: SkewedRank[] = [];
  for (const k of timed) {
    const r = plan.ranks[k];
    const offsetNs = Number(anchors[k] - anchorMedian);
    (Math.abs(offsetNs) > skewThresholdNs ? skewed : agreeing).push({ slot: r.slot, rank: r.rank, host: r.host, file: r.file, offsetNs });
  }
  // The median's side is only known to be right when it is a strict majority (three ranks, one off: decided).
  const undecided = skewed.length > 0 && agreeing.length * 2 <= timed.length;
  return {
    ranks, skewThresholdNs, skewed, undecided, agreeing,
    residualSkewNs: sorted.length ? Number(sorted[sorted.length - 1] - sorted[0]) : 0, medianStartNs: median,
  };
}

/** "rank 1 (node-b), b.rawtrace"; a rank the dump does not know is named as in the merge's summary (its file's stem). */
function rankWho(s: SkewedRank): string {
  return `${labelOf(s.rank, s.host, s.file)}, ${s.file}`;
}

/** Ranks named in an undecided skew's line, per side. */
const NAMED_PER_SIDE = 4;

function rankList(side: SkewedRank[]): string {
  const named = side.slice(0, NAMED_PER_SIDE).map(rankWho).join("; ");
  return side.length > NAMED_PER_SIDE ? `${named} and ${side.length - NAMED_PER_SIDE} more` : named;
}

/** "3.154e+10 ms (1.00 years)": a span in ms, in words too from a minute up. */
function spanMs(ns: number): string {
  return `${(ns / 1e6).toFixed(3)} ms${ns >= 60e9 ? ` (${spanWords(ns)})` : ""}`;
}

/**
 * The clock report's warnings: one line per skewed rank ("rank 1 (node-b), b.rawtrace: clock 1500.000 ms after the
 * median start …"), or, when the skew is undecided (no majority agrees: two ranks), one line naming both sides.
 */
export function skewMessages(clock: ClockReport): string[] {
  const threshold = `threshold ${(clock.skewThresholdNs / 1e6).toFixed(3)} ms`;
  if (clock.undecided) {
    // From the earliest clock to the latest: skewed ranks may lie on both sides of the median (0, 5 and 10 s: 10 s).
    const offsets = [...clock.agreeing, ...clock.skewed].map((s) => s.offsetNs);
    const apart = Math.max(...offsets) - Math.min(...offsets);
    const two = clock.agreeing.length + clock.skewed.length === 2;
    return [
      `${rankList(clock.agreeing)} and ${rankList(clock.skewed)}: clocks ${spanMs(apart)} apart (${threshold}); no ` +
        `majority of the ranks agrees, so which clock is off cannot be told${two ? " (a third rank of the run would tell)" : ""}: the ` +
        "clocks disagree or the dumps are not of one run; one side's events are misaligned in the merged timeline",
    ];
  }
  return clock.skewed.map((s) =>
    `${rankWho(s)}: clock ${spanMs(Math.abs(s.offsetNs))} ${s.offsetNs > 0 ? "after" : "before"} the median start of the ` +
      `ranks (${threshold}): its clock disagrees or it is not from the same run; its events are misaligned in the ` +
      "merged timeline");
}

/** Output pid of GPU `device` of rank slot `slot` (as the core remaps it). */
export function gpuPid(slot: number, device: number): number {
  return slot * PID_STRIDE + GPU_PID_OFFSET + (device < 900 ? device : device % 900);
}

const q = (s: string) => JSON.stringify(s);

/** Everything of the merged Chrome trace before its first event (ends with `"traceEvents":[`). */
export function mergedHeader(plan: MergePlan, infos: FileInfo[]): string {
  const devices: string[] = [];
  for (const r of plan.ranks) {
    for (const d of infos[r.index].devices) {
      const [major, minor] = d.computeCapability.split(".").map(Number);
      const l = d.limits ?? {};
      devices.push(
        `{"id":${gpuPid(r.slot, d.id)},"name":${q(d.name)},"totalGlobalMem":${d.globalMemoryBytes},` +
          `"computeMajor":${major || 0},"computeMinor":${minor || 0},"maxThreadsPerBlock":${l.maxThreadsPerBlock ?? 0},` +
          `"maxThreadsPerMultiprocessor":${l.maxThreadsPerMultiprocessor ?? 0},"regsPerBlock":${l.regsPerBlock ?? 0},` +
          `"warpSize":${l.warpSize ?? 0},"sharedMemPerBlock":${l.sharedMemPerBlock ?? 0},"numSms":${d.multiprocessors},` +
          `"regsPerMultiprocessor":${l.regsPerMultiprocessor ?? 0},"sharedMemPerBlockOptin":${l.sharedMemPerBlockOptin ?? 0},` +
          `"sharedMemPerMultiprocessor":${l.sharedMemPerMultiprocessor ?? 0}` +
          // Kineto's ROCm build's fields, as the core writes them for one rank (assembly/emit/chrome_header.ts).
          (d.arch !== undefined
            ? `,"maxSharedMemoryPerMultiProcessor":${l.sharedMemPerMultiprocessor ?? 0},"gcnArchName":${q(d.arch)},` +
              `"gfxTargetVersion":${l.gfxTargetVersion ?? 0},"simdPerCu":${l.simdPerCu ?? 0},"maxWavesPerCu":${l.maxWavesPerCu ?? 0}`
            : "") + "}",
      );
    }
  }
  let h = `{"schemaVersion":1,"distributedInfo":{"world_size": ${plan.worldSize}},"deviceProperties":[${devices.join(",")}],`;
  // The versions of the first CUDA rank whose HEADER is whole (a first rank cut inside its HEADER, or without one,
  // has none: before 2026-12-03 the merged trace then had none although the other ranks had all three).
  const cuda = plan.ranks.map((r) => infos[r.index]).filter((i) => i.vendor === "cuda" && i.vendorVersion > 0);
  const whole = cuda.find((i) => !i.warnings.some((w) => w.code === "NO_HEADER" || w.code === "HEADER_DAMAGED")) ?? cuda[0];
  if (whole) {
    h += `"cupti_version":${whole.vendorVersion},`;
    if (whole.runtimeVersion) h += `"cuda_runtime_version":${whole.runtimeVersion},`;
    if (whole.driverVersion) h += `"cuda_driver_version":${whole.driverVersion},`;
  }
  const hosts = [...new Set(infos.map((i) => i.hostname).filter((h) => h))];
  if (hosts.length === 1) h += `"host_name":${q(hosts[0])},`;
  return `${h}"displayTimeUnit":"ms","baseTimeNanoseconds":${plan.baseTimeNs},"traceEvents":[`;
}

/**
 * `text` as one `XSpace.warnings` entry (field 3, a string) in protobuf wire format: appended to a serialized XSpace
 * it adds that warning (a repeated field may come anywhere in a message), so a merge can add the job's clock-skew
 * warnings to files the workers wrote.
 */
export function xspaceWarningField(text: string): Uint8Array {
  const body = new TextEncoder().encode(text);
  const len: number[] = [];
  let n = body.length;
  do {
    len.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n > 0);
  const out = new Uint8Array(1 + len.length + body.length);
  out[0] = (3 << 3) | 2;
  out.set(len, 1);
  out.set(body, 1 + len.length);
  return out;
}

/** A {@link LossReport} as the Chrome trailer's `lost` object (the names the core writes for one file). */
export function lossJson(l: LossReport): string {
  const ranges = l.ranges.map((r) =>
    `{"from":${r.from},"to":${r.to},"code":${q(r.code)}${r.seq !== undefined ? `,"seq":${r.seq}` : ""}}`);
  return `{"bytes":${l.bytes},"activity_chunks":${l.activityChunks},"activity_bytes":${l.activityBytes},` +
    `"ranges_total":${l.rangesTotal},"ranges":[${ranges.join(",")}]}`;
}

/** Ns as Kineto's µs text with exactly three decimals. */
export function micros(ns: bigint): string {
  if (ns < 0n) ns = 0n;
  return `${ns / 1000n}.${String(ns % 1000n).padStart(3, "0")}`;
}

/** What the trailer says about one rank's conversion. */
export interface RankOutcome {
  events: number;
  complete: boolean;
  droppedRecords: number;
  /** Whole buffers the collector lost (FileInfo.droppedBuffers). */
  droppedBuffers: number;
  apiCallsHidden: number;
  activityChunks: number;
  warnings: Warning[];
  /** Damaged bytes skipped in this rank's dump. */
  loss?: LossReport;
  lastNs: bigint;
}

/** The outcome of a rank from its conversion result. */
export function outcomeOf(r: Pick<ConvertResult, "events" | "apiCallsHidden" | "info">): RankOutcome {
  return {
    events: r.events, complete: r.info.complete, droppedRecords: r.info.droppedRecords,
    droppedBuffers: r.info.droppedBuffers,
    apiCallsHidden: r.apiCallsHidden, activityChunks: r.info.activityChunks, warnings: r.info.warnings,
    loss: r.info.loss, lastNs: r.info.lastNs,
  };
}

/**
 * Everything after the last event: the closing "Record Window End" instant, the traceName, and the `rawtrace`
 * object (totals, every rank's facts and warnings, the clock report). `wroteEvents` says whether any event came
 * before (then the instant needs a leading comma).
 */
export function mergedTrailer(
  plan: MergePlan, outcomes: RankOutcome[], clock: ClockReport,
  opts: { traceName?: string; wroteEvents: boolean; rankWarnings?: RankWarning[] },
): string {
  let last = 0n;
  for (const o of outcomes) if (o.lastNs > last) last = o.lastNs;
  let t = `${opts.wroteEvents ? "," : ""}\n{"ph":"i","s":"g","name":"Record Window End","pid":"","tid":"","ts":${micros(last - plan.baseTimeNs)}}\n]`;
  if (opts.traceName) t += `,"traceName":${q(opts.traceName)}`;
  const sum = (f: (o: RankOutcome) => number) => outcomes.reduce((n, o) => n + f(o), 0);
  const warnings = plan.ranks.flatMap((r, k) =>
    outcomes[k].warnings.map((w) => `{"rank":${r.rank},"file":${q(r.file)},"code":${q(w.code)},"count":${w.count},"offset":${w.offset},"detail":${w.detail}}`));
  const ranks = plan.ranks.map((r, k) => {
    const o = outcomes[k];
    const c = clock.ranks[k];
    return `{"rank":${r.rank},"slot":${r.slot},"host":${q(r.host)},"file":${q(r.file)},"pids":[${r.slot * PID_STRIDE},${r.slot * PID_STRIDE + PID_STRIDE - 1}],` +
      `"events":${o.events},"complete":${o.complete},"dropped_records":${o.droppedRecords},` +
      (o.droppedBuffers > 0 ? `"dropped_buffers":${o.droppedBuffers},` : "") +
      `"collector_start_ns":${c.collectorStartNs},"start_offset_ns":${c.startOffsetNs ?? "null"},` +
      `"anchor_offset_ns":${c.anchorOffsetNs ?? "null"},"drift_ppm":${c.driftPpm === null ? "null" : +c.driftPpm.toFixed(3)}` +
      (o.loss && o.loss.rangesTotal > 0 ? `,"lost":${lossJson(o.loss)}` : "") + "}";
  });
  t += `,"rawtrace":{"format":1,"events":${sum((o) => o.events)},"activity_chunks":${sum((o) => o.activityChunks)},` +
    `"dropped_records":${sum((o) => o.droppedRecords)},` +
    (sum((o) => o.droppedBuffers) > 0 ? `"dropped_buffers":${sum((o) => o.droppedBuffers)},` : "") +
    `"api_calls_hidden":${sum((o) => o.apiCallsHidden)},` +
    `"complete":${outcomes.every((o) => o.complete)},"warnings":[${warnings.join(",")}],` +
    `"merge":{"world_size":${plan.worldSize},"ranks":[${ranks.join(",")}],` +
    (opts.rankWarnings?.length ? `"rank_warnings":[${opts.rankWarnings.map((w) => `{"code":${q(w.code)},"message":${q(w.message)}}`).join(",")}],` : "") +
    `"clock":{"base_time_ns":${plan.baseTimeNs},"median_start_ns":${clock.medianStartNs},"residual_skew_ns":${clock.residualSkewNs},` +
    `"skew_threshold_ns":${clock.skewThresholdNs},"skew_undecided":${clock.undecided},"skewed_ranks":[${clock.skewed.map((s) =>
      `{"rank":${s.rank},"slot":${s.slot},"host":${q(s.host)},"file":${q(s.file)},"offset_ns":${s.offsetNs}}`).join(",")}]}}}}\n`;
  return t;
}

/**
 * Joins the events-only outputs of several conversions into one JSON array: the core writes every event as
 * `,\n{...}`, so only the very first byte of the first non-empty output (that comma) is dropped.
 */
export class EventsJoiner {
  /** True once any event bytes went out. */
  wroteEvents = false;

  /** The bytes to write for the next piece of an events-only output. */
  push(bytes: Uint8Array): Uint8Array {
    if (this.wroteEvents || bytes.length === 0) return bytes;
    if (bytes[0] !== 0x2c) throw new Error("events-only output must start with ','");
    this.wroteEvents = true;
    return bytes.subarray(1);
  }
}
