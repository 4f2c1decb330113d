/**
 * A loss oracle over damaged dumps: each mutant of a real sample is converted to Chrome JSON and its events are
 * compared with the undamaged conversion's. A mutant whose output lost events (fewer than the original's, net of
 * events whose values the damage changed) must carry a loss warning (src/core/codes.ts LOSS_WARNINGS, what --strict
 * fails on); a mutant made by damage that changes no value the collector wrote (chunks cut, dropped, swapped,
 * duplicated; bytes flipped without recomputing a checksum; gzip damage) must not show events the original does not
 * hold unless a loss warning says something was damaged; a gzip file whose only damage is one of its first three
 * bytes (magic-byte) must convert whole, saying GZIP_MAGIC_DAMAGED alone. The output must parse with JSON.parse, and a
 * failure must be a documented fatal error naming an offset. Deterministic: fixed seeds, a fixed number of mutants.
 *
 *   node --import tsx bench/damage_loss.ts [runs per mutator] [seed]         PTI and HPU samples
 *   node --import tsx bench/damage_loss.ts --gzip [runs per mutator] [seed]  every sample gzipped in members
 *
 * Environment: ONLY=<mutator> runs one mutator; KEEP=<dir> writes each mutant with a finding (or an undocumented
 * failure) there; DEBUG=1 prints the first events new and lost of each finding; SHOWERR=1 prints each fatal error;
 * FRESH=1 converts each mutant with an engine of its own; SAMPLES=a,b picks the samples by name (default: the
 * dump round xpu_train_pti,gaudi2_mlp_synapse, the gzip round all four; alexnet_a100_rank0 and mi250_minitoy_rocprof
 * add CUDA and ROCm). Findings are grouped by sample, mutator and kind. Value
 * changes made with the checksums recomputed (flip+crc, run+crc, u64+crc, hpu-base+crc) are what the collector wrote
 * as far as the dump can tell: only complete events that vanish without a loss warning or a warning that names the record
 * skipped (UNKNOWN_KIND: a kind the decoder does not decode; HPU_UNMATCHED_END, UNMATCHED_RANGE_END: an end whose
 * start the dump does not hold, as a type byte changed from 'X' to 'E' makes; a record's kind changed to another kind
 * the decoder reads, such as a CUPTI RUNTIME record read as an orphan MARKER_DATA) count for them; a chunk cut with its checksum fixed (chunk-cut+crc) may be a
 * dump whose collector wrote fewer records: only invented values count. An event is no invented one when what differs
 * is a documented fallback of a lost name or table: `<unknown …>` and `cuda_runtime_cbid_N` names, arguments left out,
 * Synapse's own numbering (cbid, correlation), a DMA op without its name read as a copy, GPU pids moved past
 * 5,000,000, devices numbered after the listed ones (UNKNOWN_DEVICE), host events on pid 0 without a HEADER or on
 * another pid with a damaged one used (HEADER_DAMAGED says its process id may be wrong), an NVTX range left open closed
 * at the last timestamp (UNCLOSED_RANGE: its duration and its GPU projection's). A value-changed API call whose cbid
 * became one hidden by default (apiCallsHidden grew) is no event lost.
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync, crc32 } from "node:zlib";
import { createEngine } from "../src/node/wasm.js";
import { memorySource, type Engine, type ByteSource, type ConvertResult } from "../src/core/engine.js";
import { FATAL_NAMES, isLossWarning } from "../src/core/codes.js";
import { fileSource, withSourceWarnings } from "../src/node/file_source.js";
import { chunks, fixCrc, rng } from "../test/fuzz/mutate.js";
import { CHUNK_HEADER_SIZE, ChunkType } from "../src/format/container.js";
import { concat as concatBytes } from "../src/tools/cupti_records.js";

type Mutator = (b: Uint8Array, r: () => number) => { bytes: Uint8Array; valueChange: boolean; fewer?: boolean };

const pick = (r: () => number, n: number) => Math.floor(r() * n);
const padded = (len: number) => (len + 7) & ~7;
const concat = (...parts: Uint8Array[]) => concatBytes(parts);

/** Chunks past the HEADER (damage there fails the file: not what this looks at). */
const body = (b: Uint8Array) => chunks(b).filter((c) => c.type !== ChunkType.HEADER);

const DUMP_MUTATORS: Record<string, Mutator> = {
  "bitflip": (b, r) => {
    const x = b.slice();
    for (let i = 0, n = 1 + pick(r, 4); i < n; i++) x[64 + pick(r, x.length - 64)] ^= 1 << pick(r, 8);
    return { bytes: x, valueChange: false };
  },
  "flip+crc": (b, r) => {
    const x = b.slice();
    const cs = body(x).filter((c) => c.len > 0);
    const c = cs[pick(r, cs.length)];
    for (let i = 0, n = 1 + pick(r, 4); i < n; i++) x[c.off + CHUNK_HEADER_SIZE + pick(r, c.len)] ^= 1 << pick(r, 8);
    fixCrc(x, c.off);
    return { bytes: x, valueChange: true };
  },
  "run+crc": (b, r) => {
    const x = b.slice();
    const cs = body(x).filter((c) => c.len > 8);
    const c = cs[pick(r, cs.length)];
    const n = 1 + pick(r, 64);
    const at = c.off + CHUNK_HEADER_SIZE + pick(r, Math.max(1, c.len - n));
    const v = [0, 0xff, -1][pick(r, 3)];
    for (let i = 0; i < n && at + i < c.off + CHUNK_HEADER_SIZE + c.len; i++) x[at + i] = v < 0 ? pick(r, 256) : v;
    fixCrc(x, c.off);
    return { bytes: x, valueChange: true };
  },
  "u64+crc": (b, r) => {
    // An aligned u64 of a payload (HPU_TRACE header fields, pointers, times) set to an edge or nearby value.
    const x = b.slice();
    const dv = new DataView(x.buffer);
    const cs = body(x).filter((c) => c.len >= 16);
    const c = cs[pick(r, cs.length)];
    const head = c.type === ChunkType.HPU_TRACE && r() < 0.5;
    const o = c.off + CHUNK_HEADER_SIZE + 8 * (head ? pick(r, 6) : pick(r, c.len >> 3));
    const old = dv.getBigUint64(o, true);
    const vals = [0n, 1n, 0xffffffffffffffffn, old + 8n, old - 8n, old + 0x1000n, old ^ (1n << BigInt(pick(r, 64)))];
    dv.setBigUint64(o, BigInt.asUintN(64, vals[pick(r, vals.length)]), true);
    fixCrc(x, c.off);
    return { bytes: x, valueChange: true };
  },
  "chunk-cut+crc": (b, r) => {
    // A chunk whose payload lost its tail (its length says so, checksums fixed): the rest of the file in place.
    const cs = body(b).filter((c) => c.len > 8 && c.type !== ChunkType.END);
    const c = cs[pick(r, cs.length)];
    const keep = 1 + pick(r, c.len - 1);
    const head = b.slice(c.off, c.off + CHUNK_HEADER_SIZE + keep);
    new DataView(head.buffer).setUint32(12, keep, true);
    const x = concat(b.subarray(0, c.off), head, new Uint8Array(padded(keep) - keep), b.subarray(c.off + CHUNK_HEADER_SIZE + padded(c.len)));
    fixCrc(x, c.off);
    // Cut on a record's edge it is a dump whose collector wrote fewer records: nothing can tell (no vanished count).
    return { bytes: x, valueChange: false, fewer: true };
  },
  "preamble": (b, r) => {
    // Bits of the preamble changed: the chunk header after it proves the dump (PREAMBLE_DAMAGED), nothing is lost —
    // but for a major that two or more changed bits made a newer one's (2, 6, …): FUTURE_FORMAT, told.
    const x = b.slice();
    const bytes = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    for (let i = 0, n = 1 + pick(r, 8); i < n; i++) x[bytes[pick(r, bytes.length)]] ^= 1 << pick(r, 8);
    return { bytes: x, valueChange: false };
  },
  "truncate": (b, r) => ({ bytes: b.slice(0, 64 + pick(r, b.length - 64)), valueChange: false }),
  "drop-chunk": (b, r) => {
    const cs = body(b);
    const c = cs[pick(r, cs.length)];
    return { bytes: concat(b.subarray(0, c.off), b.subarray(c.off + CHUNK_HEADER_SIZE + padded(c.len))), valueChange: false };
  },
  "swap-chunks": (b, r) => {
    const cs = body(b);
    let i = pick(r, cs.length), j = pick(r, cs.length);
    if (i === j) return { bytes: b.slice(), valueChange: false };
    if (i > j) [i, j] = [j, i];
    const end = (c: { off: number; len: number }) => c.off + CHUNK_HEADER_SIZE + padded(c.len);
    const a = cs[i], c = cs[j];
    return {
      bytes: concat(b.subarray(0, a.off), b.subarray(c.off, end(c)), b.subarray(end(a), c.off), b.subarray(a.off, end(a)), b.subarray(end(c))),
      valueChange: false,
    };
  },
  "dup-chunk": (b, r) => {
    const cs = body(b);
    const c = cs[pick(r, cs.length)];
    const d = cs[pick(r, cs.length)];
    const end = (c: { off: number; len: number }) => c.off + CHUNK_HEADER_SIZE + padded(c.len);
    // A copy of chunk c after chunk d.
    return { bytes: concat(b.subarray(0, end(d)), b.subarray(c.off, end(c)), b.subarray(end(d))), valueChange: false };
  },
  "hpu-base+crc": (b, r) => {
    const x = b.slice();
    const cs = body(x).filter((c) => c.type === ChunkType.HPU_TRACE);
    if (!cs.length) return { bytes: x, valueChange: true };
    const c = cs[pick(r, cs.length)];
    const dv = new DataView(x.buffer);
    const o = c.off + CHUNK_HEADER_SIZE;
    const old = dv.getBigUint64(o, true);
    const vals = [0n, old + 0x100000n, old - 0x100000n, old ^ (1n << BigInt(20 + pick(r, 40))), 0xffffffffffff0000n];
    dv.setBigUint64(o, BigInt.asUintN(64, vals[pick(r, vals.length)]), true);
    fixCrc(x, c.off);
    return { bytes: x, valueChange: true };
  },
};

/** A gzip member per `size` bytes of the dump (as bgzip or block-parallel gzip write them). */
function members(dump: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  // Copies: a Buffer's slice() is a view, and the mutators damage copies made with slice().
  for (let o = 0; o < dump.length; o += size) out.push(new Uint8Array(gzipSync(dump.subarray(o, o + size), { level: 6 })));
  return out;
}
/** A member header with a chance magic and plausible XFL/OS (what a writer could have written). */
const plausibleMagic = (r: () => number) => new Uint8Array([0x1f, 0x8b, 8, 0, pick(r, 256), pick(r, 256), pick(r, 256), pick(r, 256), [0, 2, 4][pick(r, 3)], pick(r, 14)]);
const junk = (r: () => number, n: number) => new Uint8Array(n).map(() => pick(r, 256));
/** Damage inside one member's DEFLATE data (not its header or trailer). */
function damageMember(m: Uint8Array, r: () => number): Uint8Array {
  const x = m.slice();
  const lo = 10, hi = x.length - 8;
  if (hi <= lo) return x;
  for (let i = 0, n = 1 + pick(r, 3); i < n; i++) x[lo + pick(r, hi - lo)] ^= 1 << pick(r, 8);
  return x;
}

type GzMutator = (ms: Uint8Array[], r: () => number) => Uint8Array;
const GZ_MUTATORS: Record<string, GzMutator> = {
  "member-flip": (ms, r) => {
    const i = pick(r, ms.length);
    return concat(...ms.map((m, k) => (k === i ? damageMember(m, r) : m)));
  },
  "junk-between": (ms, r) => {
    const i = 1 + pick(r, ms.length - 1);
    return concat(...ms.slice(0, i), junk(r, 1 + pick(r, 40)), ...ms.slice(i));
  },
  "damaged+junk": (ms, r) => {
    // A damaged member, then junk before the next member (the realigning zeros' length field is then the junk's).
    const i = pick(r, ms.length - 1);
    return concat(...ms.slice(0, i), damageMember(ms[i], r), junk(r, 1 + pick(r, 40)), ...ms.slice(i + 1));
  },
  "damaged+magic-junk": (ms, r) => {
    // A damaged member, then junk holding a chance member header with plausible XFL/OS, then the next member.
    const i = pick(r, ms.length - 1);
    return concat(...ms.slice(0, i), damageMember(ms[i], r), junk(r, pick(r, 8)), plausibleMagic(r), junk(r, pick(r, 200)), ...ms.slice(i + 1));
  },
  "damaged+isize-junk": (ms, r) => {
    // A damaged member, then junk whose last 4 bytes read as a plausible length field (a wrong count of zeros).
    const i = pick(r, ms.length - 1);
    const j = junk(r, 4 + pick(r, 40));
    const isize = ms[i][ms[i].length - 4] | (ms[i][ms[i].length - 3] << 8);
    new DataView(j.buffer).setUint32(j.length - 4, Math.max(1, isize + pick(r, 64) - 32), true);
    return concat(...ms.slice(0, i), damageMember(ms[i], r), j, ...ms.slice(i + 1));
  },
  "torn-member": (ms, r) => {
    // A member cut short (a crashed appender), the next ones after it.
    const i = pick(r, ms.length - 1);
    return concat(...ms.slice(0, i), ms[i].subarray(0, 10 + pick(r, ms[i].length - 10)), ...ms.slice(i + 1));
  },
  "torn-rewrite": (ms, r) => {
    // A member cut short, then written again whole (a retried append).
    const i = pick(r, ms.length);
    return concat(...ms.slice(0, i), ms[i].subarray(0, 10 + pick(r, ms[i].length - 10)), ...ms.slice(i));
  },
  "magic-junk": (ms, r) => {
    const i = 1 + pick(r, ms.length - 1);
    return concat(...ms.slice(0, i), junk(r, pick(r, 8)), plausibleMagic(r), junk(r, pick(r, 300)), ...ms.slice(i));
  },
  "trailer": (ms, r) => {
    const i = pick(r, ms.length);
    const m = ms[i].slice();
    m[m.length - 1 - pick(r, 8)] ^= 1 << pick(r, 8);
    return concat(...ms.slice(0, i), m, ...ms.slice(i + 1));
  },
  "cut": (ms, r) => {
    const all = concat(...ms);
    return all.slice(0, 20 + pick(r, all.length - 20));
  },
  "drop-member": (ms, r) => {
    const i = 1 + pick(r, ms.length - 1);
    return concat(...ms.slice(0, i), ...ms.slice(i + 1));
  },
  // One of the file's first three bytes (gzip's 1f 8b 08) changed: read repaired, nothing lost (GZIP_MAGIC_DAMAGED).
  "magic-byte": (ms, r) => concat(magicByte(ms[0], r), ...ms.slice(1)),
  "magic-byte+member-flip": (ms, r) => {
    const i = 1 + pick(r, ms.length - 1);
    return concat(magicByte(ms[0], r), ...ms.slice(1).map((m, k) => (k + 1 === i ? damageMember(m, r) : m)));
  },
};

/** A copy of the first member `m` with one of its first three bytes changed to another value. */
function magicByte(m: Uint8Array, r: () => number): Uint8Array {
  const c = m.slice();
  const i = pick(r, 3);
  c[i] = (c[i] + 1 + pick(r, 255)) & 0xff;
  return c;
}

interface Run { events: Map<string, number>; count: number; warnings: { code: string; count: number; offset: number; detail?: number }[]; base: bigint; pid: number; hidden: number }

/** `r` with only its events of phase `ph`. */
function phaseOnly(r: Run, ph: string): Run {
  const events = new Map([...r.events].filter(([k]) => JSON.parse(k).ph === ph));
  return { ...r, events, count: [...events.values()].reduce((a, b) => a + b, 0) };
}

async function convert(eng: Engine, src: ByteSource, wrap?: (r: ConvertResult) => ConvertResult): Promise<Run> {
  const parts: Buffer[] = [];
  let result = await eng.convert(src, (b) => parts.push(Buffer.from(b)), {});
  if (wrap) result = wrap(result);
  const text = Buffer.concat(parts).toString("utf8");
  const trace = JSON.parse(text); // unparseable output throws here
  const events = new Map<string, number>();
  let count = 0;
  for (const e of trace.traceEvents as Record<string, any>[]) {
    // Metadata, and the window's end marker (at the last event: it moves with any event lost).
    if (e.ph === "M" || (e.ph === "i" && /^Record Window/.test(e.name))) continue;
    const k = JSON.stringify({ ...e, ts: undefined, ats: typeof e.ts === "number" ? Math.round(e.ts * 1000 + Number(result.baseTimeNs)) : e.ts });
    events.set(k, (events.get(k) ?? 0) + 1);
    count++;
  }
  return { events, count, warnings: result.info.warnings as Run["warnings"], base: result.baseTimeNs, pid: result.info.pid, hidden: result.apiCallsHidden };
}

/** An event's phase and time (start, duration): the same event with other names or arguments. */
function slot(k: string): string {
  const e = JSON.parse(k);
  return JSON.stringify([e.ph, e.ats, e.dur]);
}

/**
 * A name or argument the damage took, left as its fallback: empty, `<unknown kernel>`, `<unknown api 3:33>`,
 * `xccl::<unknown>`, or the CUPTI callback's number when the dump's name table is lost (`cuda_runtime_cbid_211`).
 */
const unknown = (v: unknown) => v === "" || (typeof v === "string" && (v.includes("<unknown") || /_cbid_\d+$/.test(v)));

/**
 * Arguments a decoder numbers itself, per dump, in the order the records come (Synapse: API numbers and launch
 * correlation ids, docs/decoders/hpu.md): with buffers lost the same call gets another number, no value of the dump's.
 * "device" among them: a device's pid and index (UNKNOWN_DEVICE: numbered after the listed ones).
 */
const SELF_NUMBERED: Record<string, string[]> = { gaudi2_mlp_synapse: ["cbid", "correlation"] };
/** Warnings that name a record the decoder skipped by design: a value change may turn a record into one. */
const SKIP_SAID: ReadonlySet<string> = new Set(["UNKNOWN_KIND", "HPU_UNMATCHED_END", "UNMATCHED_RANGE_END"]);

/**
 * Whether the mutant changed the kind field of a record into another kind: the dump then says the record is of that
 * kind (a CUPTI RUNTIME record read as an orphan MARKER_DATA, a ROCm HIP call read as a SCRATCH_MEMORY record: kinds
 * decoded without an event of their own), so the call it held vanishing is what the collector wrote. CUPTI and PTI
 * records are walked by the original's KIND_SIZES (a kind of another stride does not count: it misreads the records
 * after it), rocprofiler-sdk's by their own headers (category, kind, size: docs/format.md "5 ACTIVITY").
 */
function retyped(orig: Uint8Array, mut: Uint8Array): boolean {
  if (orig.length !== mut.length) return false;
  const cs = chunks(orig);
  const dv = new DataView(orig.buffer, orig.byteOffset, orig.byteLength);
  const mv = new DataView(mut.buffer, mut.byteOffset, mut.byteLength);
  const ks = cs.find((c) => c.type === ChunkType.KIND_SIZES);
  const rocm = !ks && cs.some((c) => c.type === ChunkType.AGENTS);
  const stride = new Map<number, number>();
  if (ks) {
    const p0 = ks.off + CHUNK_HEADER_SIZE;
    for (let i = 0, n = dv.getUint32(p0, true); i < n && p0 + 12 + 8 * i <= ks.off + CHUNK_HEADER_SIZE + ks.len; i++) {
      stride.set(dv.getUint32(p0 + 4 + 8 * i, true), dv.getUint32(p0 + 8 + 8 * i, true));
    }
  }
  for (const c of cs) {
    if (c.type !== ChunkType.ACTIVITY) continue;
    const end = c.off + CHUNK_HEADER_SIZE + c.len;
    if (rocm) {
      for (let r = c.off + CHUNK_HEADER_SIZE; r + 16 <= end; ) {
        if (mv.getUint32(r + 4, true) !== dv.getUint32(r + 4, true)) return true;
        r += 16 + padded(Number(dv.getBigUint64(r + 8, true)));
      }
      continue;
    }
    for (let r = c.off + CHUNK_HEADER_SIZE; r + 4 <= end; ) {
      const k = dv.getUint32(r, true);
      const size = stride.get(k) ?? 0;
      if (size === 0) break;
      const mk = mv.getUint32(r, true);
      if (mk !== k && stride.get(mk) === size) return true;
      r += size;
    }
  }
  return false;
}

/** Kineto's offset of GPU pids (emit/chrome_pids.ts): GPUs move past it when the dump's own process id is lost. */
const GPU_PID_MOVED = 5_000_000;

/**
 * Whether event `m` could be event `o` with some of its names or arguments lost (none of their values differs). What
 * a lost name or table changes by the documented rules is no value of its own: a GPU's pid moved past Kineto's offset
 * (the process id lost, emit/chrome_pids.ts), a Synapse DMA op without its name read as a copy (its memset kind comes
 * from the name, docs/decoders/hpu.md).
 */
function degradedFrom(m: Record<string, any>, o: Record<string, any>, numbered: string[] = []): boolean {
  const renumbered = numbered.includes("device");
  for (const k of Object.keys(m)) {
    if (k === "args" || k === "id" || k === "bp") continue;
    if (k === "name" && unknown(m.name)) continue;
    if (k === "pid" && (m.pid === o.pid + GPU_PID_MOVED || (renumbered && (m.args?.device !== undefined || m.ph === "f")))) continue;
    if (k === "pid" && m.pid === 0 && numbered.includes("pid")) continue;
    if (k === "pid" && numbered.includes(`pid:${o.pid}`)) continue;
    if (k === "dur" && numbered.includes("range-end") && /user_annotation$/.test(m.cat) && m.name === o.name) continue;
    if (k === "cat" && unknown(m.name) && m.cat === "gpu_memcpy" && o.cat === "gpu_memset") continue;
    if (JSON.stringify(m[k]) !== JSON.stringify(o[k])) return false;
  }
  for (const [k, v] of Object.entries(m.args ?? {})) {
    if (k === "incomplete" || unknown(v) || numbered.includes(k) || (renumbered && /^(device|fromDevice|toDevice)$/.test(k))) continue;
    if (o.args && k in o.args && JSON.stringify(o.args[k]) !== JSON.stringify(v)) return false;
    if (!o.args || !(k in o.args)) return false;
  }
  return true;
}

/**
 * Events lost and new; `wrong`: new events that are no event of the original with a name or argument the damage took
 * (a value differs, or there is no event at that time at all).
 */
function compare(orig: Run, mut: Run, numbered: string[] = []): { lost: number; extra: number; fabricated: number; sample?: string } {
  let lost = 0, extra = 0, fabricated = 0;
  let sample: string | undefined;
  for (const [k, n] of orig.events) lost += Math.max(0, n - (mut.events.get(k) ?? 0));
  const bySlot = new Map<string, Record<string, any>[]>();
  for (const k of orig.events.keys()) {
    const e = JSON.parse(k);
    const s = JSON.stringify([e.ph, e.ats]);
    bySlot.set(s, [...(bySlot.get(s) ?? []), e]);
  }
  for (const [k, n] of mut.events) {
    const x = Math.max(0, n - (orig.events.get(k) ?? 0));
    if (x === 0) continue;
    extra += x;
    const e = JSON.parse(k);
    const cands = bySlot.get(JSON.stringify([e.ph, e.ats])) ?? [];
    if (!cands.some((o) => degradedFrom(e, o, numbered))) {
      fabricated += x;
      sample ??= k;
    }
  }
  return { lost, extra, fabricated, sample };
}

interface Finding { sample: string; mutator: string; run: number; what: string; warnings: string }

async function main() {
  const args = process.argv.slice(2);
  const gz = args[0] === "--gzip";
  if (gz) args.shift();
  const RUNS = Number(args[0] ?? 100);
  const SEED = Number(args[1] ?? 20261202);
  const only = process.env.ONLY;
  const eng = await createEngine();
  const engShared = eng;
  const samples = process.env.SAMPLES
    ? process.env.SAMPLES.split(",")
    : gz ? ["xpu_train_pti", "gaudi2_mlp_synapse", "alexnet_a100_rank0", "mi250_minitoy_rocprof"] : ["xpu_train_pti", "gaudi2_mlp_synapse"];
  const findings: Finding[] = [];
  const counts: Record<string, Record<string, Record<string, number>>> = {};
  const dir = mkdtempSync(join(tmpdir(), "rt-loss-"));
  const t0 = performance.now();
  let slowest = 0;
  for (const sample of samples) {
    const dump = new Uint8Array(readFileSync(`samples/${sample}.rawtrace`));
    const orig = await convert(eng, memorySource(dump, sample));
    const memberSize = sample === "xpu_train_pti" || sample === "mi250_minitoy_rocprof" ? 1024 : 8192;
    const ms = members(dump, memberSize);
    const mutators: Record<string, unknown> = gz ? GZ_MUTATORS : DUMP_MUTATORS;
    for (const name of Object.keys(mutators)) {
      if (only && only !== name) continue;
      const r = rng(SEED ^ crc32(sample + "/" + name));
      const c = ((counts[sample] ??= {})[name] ??= { runs: 0, converted: 0, fatal: 0, lossWarned: 0 });
      for (let run = 0; run < RUNS; run++) {
        let bytes: Uint8Array;
        let valueChange = false;
        let fewer: boolean | undefined = false;
        if (gz) bytes = (GZ_MUTATORS[name] as GzMutator)(ms, r);
        else ({ bytes, valueChange, fewer } = (DUMP_MUTATORS[name] as Mutator)(dump, r) as { bytes: Uint8Array; valueChange: boolean; fewer?: boolean });
        c.runs++;
        const t = performance.now();
        let mut: Run;
        const eng = process.env.FRESH ? await createEngine() : engShared;
        try {
          if (gz) {
            const p = join(dir, `${sample}.${name}.${run}.rawtrace.gz`);
            writeFileSync(p, bytes);
            const src = fileSource(p);
            try {
              mut = await convert(eng, src, (res) => withSourceWarnings(src, res));
            } finally {
              src.close();
            }
          } else mut = await convert(eng, memorySource(bytes, sample));
        } catch (e: any) {
          const ok = (FATAL_NAMES as readonly string[]).includes(e.name) && /offset \d+|compressed byte \d+/.test(e.message);
          // A damaged gzip start is said (exit 4); not for a file whose only damage is a magic byte, read repaired.
          const gzStart = gz && e.name === "IO" && /damaged gzip/.test(e.message) && name !== "magic-byte";
          if (!ok && !gzStart) findings.push({ sample, mutator: name, run, what: `unexpected failure ${e.name}: ${e.message}`, warnings: "" });
          c.fatal++;
          if (process.env.SHOWERR) console.error(name, run, e.name, String(e.message).slice(0, 200));
          if (process.env.KEEP && !ok && !gzStart) writeFileSync(join(process.env.KEEP, `${sample}.${name}.${run}${gz ? ".rawtrace.gz" : ".rawtrace"}`), bytes);
          continue;
        }
        const ms_ = performance.now() - t;
        slowest = Math.max(slowest, ms_);
        if (ms_ > 5000) findings.push({ sample, mutator: name, run, what: `slow: ${ms_.toFixed(0)} ms`, warnings: "" });
        c.converted++;
        const loss = mut.warnings.filter((w) => isLossWarning(w.code));
        if (loss.length) c.lossWarned++;
        const ws = mut.warnings.map((w) => `${w.code}×${w.count}@${w.offset}`).join(" ");
        // Devices a lost device table leaves unlisted are numbered after the listed ones (UNKNOWN_DEVICE, said).
        // and a dump without its HEADER whose host records hold no pid (ROCm, Gaudi) has its host events on pid 0; a
        // damaged HEADER used (HEADER_DAMAGED: "its process id may be wrong") may give them another; an NVTX range left open
        // is closed at the last timestamp (UNCLOSED_RANGE), so its duration and its GPU projection's may differ.
        const said = (code: string) => mut.warnings.some((w) => w.code === code);
        const numbered = [...(SELF_NUMBERED[sample] ?? []), ...(said("UNKNOWN_DEVICE") ? ["device"] : []), ...(said("NO_HEADER") ? ["pid"] : []), ...(said("HEADER_DAMAGED") ? [`pid:${orig.pid}`] : []), ...(said("UNCLOSED_RANGE") ? ["range-end"] : [])];
        const { lost, extra, fabricated, sample: fab } = compare(orig, mut, numbered);
        const problems: string[] = [];
        // A value changed with its checksum recomputed is what the collector wrote as far as the dump can tell: a record
        // of a kind the decoder does not decode, or an end without its start, is skipped by design (said at its offset),
        // and an arrow whose call or correlation changed is no event lost; a call whose cbid turned into one hidden by
        // default is counted among the hidden ones (the result's apiCallsHidden), not lost.
        const told = valueChange && (mut.warnings.some((w) => SKIP_SAID.has(w.code)) || retyped(dump, bytes) || mut.hidden > orig.hidden);
        const { lost: lostX, extra: extraX } = valueChange ? compare(phaseOnly(orig, "X"), phaseOnly(mut, "X"), numbered) : { lost, extra };
        if (!loss.length && !told && !fewer && lostX > extraX) problems.push(`${lostX - extraX} events vanished (${lostX} lost, ${extraX} new) without a loss warning`);
        if (!valueChange && (fewer ? fabricated : extra) > 0 && !loss.length) problems.push(`${extra} events not in the original without a loss warning (${lost} lost)`);
        if (gz && fabricated > 0) problems.push(`${fabricated} events with values the original does not hold (${lost} lost) from gzip damage${loss.length ? "" : " without a loss warning"}: ${fab!.slice(0, 160)}`);
        if (gz && extra > fabricated && !loss.length) problems.push(`${extra - fabricated} events changed from gzip damage without a loss warning`);
        if (name.startsWith("magic-byte") && !said("GZIP_MAGIC_DAMAGED")) problems.push("a changed magic byte not said (GZIP_MAGIC_DAMAGED)");
        if (name === "magic-byte" && (lost > 0 || extra > 0 || mut.warnings.length !== 1)) {
          problems.push(`a changed magic byte alone: ${lost} events lost, ${extra} new, warnings ${ws}`);
        }
        if (problems.length && process.env.DEBUG) {
          console.log([...mut.events.keys()].filter((k) => !orig.events.has(k)).slice(0, 2), [...orig.events.keys()].filter((k) => !mut.events.has(k)).slice(0, 2));
        }
        for (const p of problems) findings.push({ sample, mutator: name, run, what: p, warnings: ws });
        if (problems.length && process.env.KEEP) writeFileSync(join(process.env.KEEP, `${sample}.${name}.${run}${gz ? ".rawtrace.gz" : ".rawtrace"}`), bytes);
      }
    }
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(JSON.stringify(counts, null, 1));
  const byKind = new Map<string, Finding[]>();
  for (const f of findings) {
    const k = `${f.sample} ${f.mutator}: ${f.what.replace(/\d+/g, "N")}`;
    byKind.set(k, [...(byKind.get(k) ?? []), f]);
  }
  for (const [k, fs] of byKind) {
    console.log(`${fs.length}× ${k}`);
    for (const f of fs.slice(0, 3)) console.log(`   run ${f.run}: ${f.what} | ${f.warnings.slice(0, 300)}`);
  }
  console.log(`${findings.length} findings; ${((performance.now() - t0) / 1000).toFixed(1)} s; slowest mutant ${slowest.toFixed(0)} ms`);
}

main().catch((e) => {
  console.error(e);
  process.exit(70);
});
