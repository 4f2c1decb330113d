/**
 * The built command line (`node dist/node/cli.js`, built by scripts/setup.sh) as a user runs it: exit codes of
 * docs/errors.md (usage errors 2 with one line, missing files 4), the help forms, the version from package.json,
 * one JSON document from `info --json`, kind names and the JSON/CSV forms of `stats`, damage reported on standard
 * error and in the outputs with `--strict` failing on it, and the clock-skew report and `--max-skew` of `merge`.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, existsSync, statSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { sampleDump, T0 } from "../helpers/sample_dump.js";
import { cliIn, lines } from "../helpers/cli.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-cli-"));
const SAMPLE = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
const PKG_VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

const { cli, usageError } = cliIn(tmp);

test("the CLI is built (scripts/setup.sh)", () => {
  assert.ok(existsSync(CLI), `${CLI} is missing: run bash scripts/setup.sh`);
});

test("usage errors exit 2 with one line; a missing file exits 4", () => {
  usageError(["--bogus"], "'--bogus'");
  usageError(["convert", "x.rawtrace", "--bogus"], "unknown option '--bogus' for 'convert'");
  usageError(["frobnicate"], "unknown command 'frobnicate'");
  usageError(["convert", "-o"], "-o needs a value");
  // A typo gets the nearest name (two edits at most); a word far from every name gets none.
  usageError(["conver", "x.rawtrace"], "unknown command 'conver' (did you mean 'convert'?)");
  usageError(["help", "stast"], "(did you mean 'stats'?)");
  usageError(["convert", "x.rawtrace", "--fromat", "xspace"], "unknown option '--fromat' for 'convert' (did you mean '--format'?)");
  usageError(["stats", "x.rawtrace", "--gap-mn", "3"], "(did you mean '--gap-min'?)");
  assert.not.match(cli(["frobnicate"]).stderr, /did you mean/);
  usageError(["stats", "x.rawtrace", "--jobs", "zero"], "--jobs");
  usageError(["stats", SAMPLE, "--json", "--csv"], "--json and --csv");
  usageError(["merge", SAMPLE, "--max-skew", "soon"], "--max-skew");
  usageError(["help", "frobnicate"], "unknown command 'frobnicate'");
  // Each command takes only its own options.
  usageError(["info", SAMPLE, "--top", "3"], "unknown option '--top' for 'info'");
  usageError(["info", SAMPLE, "--strict"], "unknown option '--strict' for 'info'");
  usageError(["convert", SAMPLE, "--csv"], "unknown option '--csv' for 'convert'");
  usageError(["convert", SAMPLE, "--max-skew", "5"], "unknown option '--max-skew' for 'convert'");
  usageError(["stats", SAMPLE, "-o", "x.json"], "unknown option '-o' for 'stats'");
  usageError(["merge", SAMPLE, "--out-dir", "d"], "unknown option '--out-dir' for 'merge'");
  const none = cli([]);
  assert.is(none.status, 2);
  assert.ok(none.stderr.includes("Commands:"), none.stderr);
  for (const args of [["info", "missing.rawtrace"], ["convert", "missing.rawtrace"], ["stats", "missing.rawtrace"]]) {
    const r = cli(args);
    assert.is(r.status, 4, `${args.join(" ")}: ${r.stderr}`);
    assert.ok(r.stderr.includes("missing.rawtrace"), r.stderr);
  }
});

test("help: rawtrace help, help <command> and <command> --help show each command's own options", () => {
  for (const args of [["help"], ["--help"], ["-h"]]) {
    const r = cli(args);
    assert.is(r.status, 0, r.stderr);
    for (const c of ["convert", "batch", "merge", "stats", "info"]) assert.ok(r.stdout.includes(`  ${c} `), r.stdout);
  }
  const own: Record<string, { has: string[]; not: string[] }> = {
    convert: { has: ["--out-dir", "--gzip", "--strict", "--format"], not: ["--csv", "--max-skew", "--top", "--shard", "--list"] },
    batch: { has: ["--shard", "--list", "--out-dir", "--gzip", "--format", "--jobs"], not: ["--output", "--csv", "--max-skew"] },
    merge: { has: ["--max-skew", "--strict", "--format"], not: ["--out-dir", "--csv", "--top"] },
    stats: { has: ["--top", "--csv", "--json", "--strict"], not: ["--out-dir", "--max-skew", "--output"] },
    info: { has: ["--json"], not: ["--strict", "--csv", "--top", "--jobs"] },
  };
  for (const [c, o] of Object.entries(own)) {
    const a = cli(["help", c]);
    const b = cli([c, "--help"]);
    const h = cli([c, "-h"]);
    assert.is(a.status, 0, a.stderr);
    assert.is(b.status, 0, b.stderr);
    assert.is(a.stdout, b.stdout);
    assert.is(h.stdout, b.stdout);
    assert.ok(a.stdout.includes(`rawtrace ${c} `), a.stdout);
    for (const x of o.has) assert.ok(a.stdout.includes(x), `${c} help lacks ${x}`);
    for (const x of o.not) assert.not.ok(a.stdout.includes(x), `${c} help shows ${x}`);
  }
});

test("-V, --version and -v print package.json's version", () => {
  for (const f of ["-V", "--version", "-v"]) {
    const r = cli([f]);
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout.trim(), PKG_VERSION);
  }
});

test("info --json: one JSON document {files:[…]} for one file, two files and a failing file", () => {
  const one = cli(["info", "--json", SAMPLE]);
  assert.is(one.status, 0, one.stderr);
  const a = JSON.parse(one.stdout);
  assert.is(a.command, "info");
  assert.is(a.files.length, 1);
  assert.is(a.files[0].ok, true);
  assert.is(a.files[0].records.CONCURRENT_KERNEL, 442);
  assert.equal(a.files[0].loss, { bytes: 0, activityChunks: 0, activityBytes: 0, rangesTotal: 0, ranges: [] });
  const two = cli(["info", "--json", SAMPLE, join(ROOT, "samples/alexnet_a100_rank0.rawtrace")]);
  assert.is(two.status, 0, two.stderr);
  const b = JSON.parse(two.stdout);
  assert.is(b.files.length, 2);
  assert.equal(b.files[0], a.files[0]);
  assert.ok(b.files[1].file.includes("alexnet"));
  const bad = cli(["info", "--json", SAMPLE, "missing.rawtrace"]);
  assert.is(bad.status, 1);
  const c = JSON.parse(bad.stdout);
  assert.is(c.files.length, 2);
  assert.equal(c.files[1].ok, false);
  assert.is(c.files[1].error.code, "IO");
  assert.equal(c.files.map((f: { input: string }) => f.input), [SAMPLE, "missing.rawtrace"], "each entry's path as given");
  // Two dumps of one name in different folders: told apart by `input` (`file` is the base name of both).
  const twin = join(mkdtempSync(join(tmpdir(), "rawtrace-twin-")), basename(SAMPLE));
  copyFileSync(SAMPLE, twin);
  const d = JSON.parse(cli(["info", "--json", SAMPLE, twin]).stdout);
  assert.equal(d.files.map((f: { file: string }) => f.file), [basename(SAMPLE), basename(SAMPLE)]);
  assert.equal(d.files.map((f: { input: string }) => f.input), [SAMPLE, twin]);
  rmSync(dirname(twin), { recursive: true });
});

/** A minimal RFC 4180 reader: rows of fields (quoted fields may hold commas and doubled quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let f = "";
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (q) {
      if (ch === '"' && text[i + 1] === '"') (f += '"'), i++;
      else if (ch === '"') q = false;
      else f += ch;
    } else if (ch === '"') q = true;
    else if (ch === ",") row.push(f), (f = "");
    else if (ch === "\n") row.push(f), rows.push(row), (row = []), (f = "");
    else f += ch;
  }
  return rows;
}

const KINDS = ["kernel", "memcpy", "memset", "runtime", "driver", "sync", "event", "overhead", "range", "instant", "graph"];

test("stats: kind names in the text, --json and --csv (one table, a file column for several files)", () => {
  const text = cli(["stats", SAMPLE, "--top", "3"]);
  assert.is(text.status, 0, text.stderr);
  assert.match(text.stdout, /kind\s+count\s+total ms/);
  assert.match(text.stdout, /\n\s+runtime\s+386\s+55\.086/);

  const j = cli(["stats", SAMPLE, "--json"]);
  assert.is(j.status, 0, j.stderr);
  const doc = JSON.parse(j.stdout);
  const names = doc.files[0].stats.names as Array<{ kind: unknown; name: string; count: number }>;
  assert.ok(names.length > 40);
  for (const n of names) assert.ok(KINDS.includes(n.kind as string), `kind ${String(n.kind)}`);
  assert.is(names.filter((n) => n.kind === "kernel").reduce((s, n) => s + n.count, 0), 442);
  assert.is(names.find((n) => n.name === "cudaLaunchKernel")!.kind, "runtime");
  assert.is(doc.files[0].stats.copies[0].direction, "HtoD");
  assert.is(doc.files[0].stats.copies[0].copyKind, undefined);

  const other = join(ROOT, "samples/alexnet_a100_rank0.rawtrace");
  const c = cli(["stats", SAMPLE, other, "--csv"]);
  assert.is(c.status, 0, c.stderr);
  const rows = parseCsv(c.stdout);
  assert.equal(rows[0], ["file", "kind", "name", "count", "total_ns", "mean_ns", "min_ns", "max_ns"]);
  for (const r of rows) assert.is(r.length, 8, r.join("|"));
  const body = rows.slice(1);
  assert.equal([...new Set(body.map((r) => r[0]))], [SAMPLE, other]);
  const mine = body.filter((r) => r[0] === SAMPLE);
  assert.is(mine.length, names.length);
  for (const r of body) assert.ok(KINDS.includes(r[1]), r[1]);
  // A kernel name with commas survives quoting; the numbers are the JSON's.
  const bn = names.find((n) => n.name.startsWith("void cudnn::bn_fw_tr_1C11_kernel_NCHW")) as Record<string, any>;
  const row = mine.find((r) => r[2] === bn.name)!;
  assert.ok(row, "quoted kernel name row");
  assert.equal(row.slice(1).map(String), ["kernel", bn.name, bn.count, bn.totalNs, Math.round(bn.meanNs), bn.minNs, bn.maxNs].map(String));
});

/** The ACTIVITY chunks of a dump: header offset, seq, payload length (docs/format.md: 16-byte preamble, 24-byte headers). */
function activityChunks(b: Uint8Array): Array<{ off: number; seq: number; len: number; total: number }> {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out = [];
  for (let p = 16; p + 24 <= b.length;) {
    const len = dv.getUint32(p + 12, true);
    const total = 24 + ((len + 7) & ~7);
    if (dv.getUint16(p + 4, true) === 5) out.push({ off: p, seq: dv.getUint32(p + 8, true), len, total });
    p += total;
  }
  return out;
}

const original = readFileSync(SAMPLE);
const acts = activityChunks(original);
/** Three flipped bytes: two in the payload of the first activity chunk, one in the last's. */
const damaged = Buffer.from(original);
const hit = [acts[0], acts[acts.length - 1]];
damaged[hit[0].off + 24 + 100] ^= 0x5a;
damaged[hit[0].off + 24 + (hit[0].len >> 1)] ^= 0x01;
damaged[hit[1].off + 24 + hit[1].len - 1] ^= 0x80;
const DAMAGED = join(tmp, "damaged.rawtrace");
writeFileSync(DAMAGED, damaged);
const expectRanges = hit.map((a) => ({ from: a.off, to: a.off + a.total, code: "BAD_PAYLOAD_CRC", seq: a.seq }));

test("damage: stderr names the skipped byte ranges, the trailer holds them, --strict exits 6", () => {
  assert.is(acts.length, 3);
  const ok = cli(["convert", SAMPLE, "-o", join(tmp, "ok.json"), "--strict"]);
  assert.is(ok.status, 0, ok.stderr);
  assert.not.ok(ok.stderr.includes("DATA LOST"), ok.stderr);
  const okTrace = JSON.parse(readFileSync(join(tmp, "ok.json"), "utf8"));
  assert.is(okTrace.rawtrace.lost, undefined);

  const r = cli(["convert", DAMAGED, "-o", join(tmp, "damaged.json")]);
  assert.is(r.status, 0, r.stderr);
  assert.ok(r.stderr.includes(`rawtrace: ${DAMAGED}: DATA LOST: skipped ${(hit[0].total + hit[1].total).toLocaleString("en-US")} damaged bytes in 2 ranges`), r.stderr);
  assert.ok(r.stderr.includes("2 activity buffers of events"), r.stderr);
  for (const x of expectRanges) {
    assert.ok(r.stderr.includes(`skipped bytes ${x.from}–${x.to} (chunk seq ${x.seq}: BAD_PAYLOAD_CRC)`), r.stderr);
  }
  const t = JSON.parse(readFileSync(join(tmp, "damaged.json"), "utf8"));
  assert.equal(t.rawtrace.lost, {
    bytes: hit[0].total + hit[1].total, activity_chunks: 2, activity_bytes: hit[0].len + hit[1].len, ranges_total: 2,
    ranges: expectRanges,
  });
  assert.ok(t.rawtrace.events < okTrace.rawtrace.events, `${t.rawtrace.events} events of ${okTrace.rawtrace.events}`);

  const strict = cli(["convert", DAMAGED, "-o", join(tmp, "strict.json"), "--strict"]);
  assert.is(strict.status, 6, strict.stderr);
  assert.ok(existsSync(join(tmp, "strict.json")), "--strict still writes the output");
  assert.is(cli(["stats", DAMAGED, "--strict"]).status, 6);
  assert.is(cli(["stats", SAMPLE, "--strict"]).status, 0);
  assert.is(cli(["stats", DAMAGED]).status, 0);

  const info = JSON.parse(cli(["info", "--json", DAMAGED]).stdout);
  assert.equal(info.files[0].loss.ranges, expectRanges);
});

test("damage in XSpace: each skipped range is an XSpace error; --strict exits 6", () => {
  const out = join(tmp, "damaged.xplane.pb");
  const r = cli(["convert", DAMAGED, "--format", "xspace", "-o", out, "--strict"]);
  assert.is(r.status, 6, r.stderr);
  const space = fromBinary(XSpaceSchema, readFileSync(out));
  for (const x of expectRanges) {
    assert.ok(space.errors.includes(`rawtrace skipped bytes ${x.from}-${x.to} (chunk seq ${x.seq}: BAD_PAYLOAD_CRC)`), space.errors.join("\n"));
  }
});

test("damage: more ranges than the 16 kept are counted, and the list stays bounded", () => {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION.cuda13, pid: 1, rank: 0, worldSize: 1, startNs: T0, hostname: "h", commandLine: "app" });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  for (let i = 0; i < 20; i++) {
    w.activity(C.apiRecord("cuda13", { kind: 5, cbid: 211, start: T0 + BigInt(i * 1000), end: T0 + BigInt(i * 1000 + 500), processId: 1, threadId: 1, correlationId: i + 1 }));
  }
  w.end();
  const bytes = Buffer.from(w.bytes());
  const chunks = activityChunks(bytes);
  assert.is(chunks.length, 20);
  for (const a of chunks) bytes[a.off + 24 + 8] ^= 0xff;
  const file = join(tmp, "many.rawtrace");
  writeFileSync(file, bytes);
  const r = cli(["convert", file, "-o", join(tmp, "many.json")]);
  assert.is(r.status, 0, r.stderr);
  assert.is(lines(r.stderr).filter((l) => l.startsWith("  skipped bytes ")).length, 16, r.stderr);
  assert.ok(r.stderr.includes("… and 4 more ranges"), r.stderr);
  const lost = JSON.parse(readFileSync(join(tmp, "many.json"), "utf8")).rawtrace.lost;
  assert.is(lost.ranges_total, 20);
  assert.is(lost.ranges.length, 16);
  assert.is(lost.activity_chunks, 20);
  assert.is(lost.bytes, chunks.reduce((n, a) => n + a.total, 0));
  assert.equal(lost.ranges[15], { from: chunks[15].off, to: chunks[15].off + chunks[15].total, code: "BAD_PAYLOAD_CRC", seq: chunks[15].seq });
});

const YEARS_NS = 3n * 365n * 86_400n * 1_000_000_000n;
const rank0 = join(tmp, "rank0.rawtrace");
const rank1 = join(tmp, "rank1.rawtrace");
const rank1Near = join(tmp, "rank1_near.rawtrace");
writeFileSync(rank0, sampleDump({ rank: 0, hostname: "node-a" }));
writeFileSync(rank1, sampleDump({ rank: 1, hostname: "node-b", clockOffset: YEARS_NS }));
writeFileSync(rank1Near, sampleDump({ rank: 1, hostname: "node-b", clockOffset: 2_000_000n }));
const rank2 = join(tmp, "rank2.rawtrace");
writeFileSync(rank2, sampleDump({ rank: 2, hostname: "node-c", clockOffset: 3_000_000n }));
const YEARS_TEXT = `${(Number(YEARS_NS) / 1e6).toFixed(3)} ms (${(Number(YEARS_NS) / 1e9 / (365.25 * 86400)).toFixed(2)} years)`;

test("merge: ranks whose clocks are years apart are reported by rank; --max-skew makes it an error", () => {
  // Three ranks, two agreeing: the third is the one off.
  const out = join(tmp, "skew.json");
  const r = cli(["merge", rank0, rank1, rank2, "-o", out]);
  assert.is(r.status, 0, r.stderr);
  const warning = lines(r.stderr).filter((l) => l.startsWith("rawtrace: warning CLOCK_SKEW: "));
  assert.is(warning.length, 1, r.stderr);
  const offText = `${((Number(YEARS_NS) - 3e6) / 1e6).toFixed(3)} ms (3.00 years)`;
  assert.ok(warning[0].includes(`rank 1 (node-b), ${rank1}: clock ${offText} after the median start`), warning[0]);
  const clock = JSON.parse(readFileSync(out, "utf8")).rawtrace.merge.clock;
  assert.is(clock.skew_threshold_ns, 1_000_000_000);
  assert.is(clock.skew_undecided, false);
  assert.equal(clock.skewed_ranks, [{ rank: 1, slot: 1, host: "node-b", file: rank1, offset_ns: Number(YEARS_NS) - 3_000_000 }]);
  const j = cli(["merge", rank0, rank1, rank2, "-o", join(tmp, "skew2.json"), "--json"]);
  assert.is(JSON.parse(j.stdout).clock.skewed[0].rank, 1);

  // Two ranks that disagree: neither is known to be the one off, and the one line names both.
  const two = cli(["merge", rank0, rank1, "-o", join(tmp, "skew_two.json")]);
  assert.is(two.status, 0, two.stderr);
  const said = lines(two.stderr).filter((l) => l.startsWith("rawtrace: warning CLOCK_SKEW: "));
  assert.is(said.length, 1, two.stderr);
  assert.ok(said[0].includes(`rank 0 (node-a), ${rank0} and rank 1 (node-b), ${rank1}: clocks ${YEARS_TEXT} apart`), said[0]);
  assert.ok(said[0].includes("which clock is off cannot be told"), said[0]);
  const twoClock = JSON.parse(readFileSync(join(tmp, "skew_two.json"), "utf8")).rawtrace.merge.clock;
  assert.is(twoClock.skew_undecided, true);
  assert.equal(twoClock.skewed_ranks.map((s: { rank: number }) => s.rank), [1]);

  const failed = join(tmp, "skew_fail.json");
  const e = cli(["merge", rank0, rank1, "-o", failed, "--max-skew", "1000"]);
  assert.is(e.status, 7, e.stderr);
  assert.is(lines(e.stderr).length, 1, e.stderr);
  assert.ok(e.stderr.includes("rank 1 (node-b)") && e.stderr.includes("beyond 1000 ms (--max-skew"), e.stderr);
  assert.not.ok(existsSync(failed), "nothing written when the skew is over the limit");

  // A dump that does not know its rank is named in the warning as in the merge's summary: by its file's stem.
  const anon = join(tmp, "worker7.rawtrace");
  writeFileSync(anon, sampleDump({ rank: -1, hostname: "node-c", clockOffset: YEARS_NS }));
  const named = cli(["merge", rank0, anon, "-o", join(tmp, "skew_anon.json")]);
  assert.is(named.status, 0, named.stderr);
  const anonLine = lines(named.stderr).find((l) => l.startsWith("rawtrace: warning CLOCK_SKEW: "))!;
  assert.ok(anonLine.includes(`worker7 (node-c), ${anon}`) && !anonLine.includes("slot"), anonLine);
  assert.match(named.stderr, "worker7 (node-c)");

  // Ranks 2 ms apart: no report by default; over a 1 ms limit, an error.
  const near = cli(["merge", rank0, rank1Near, "-o", join(tmp, "near.json")]);
  assert.is(near.status, 0, near.stderr);
  assert.not.ok(near.stderr.includes("CLOCK_SKEW"), near.stderr);
  assert.equal(JSON.parse(readFileSync(join(tmp, "near.json"), "utf8")).rawtrace.merge.clock.skewed_ranks, []);
  assert.is(cli(["merge", rank0, rank1Near, "-o", join(tmp, "near2.json"), "--max-skew", "1"]).status, 7);
  assert.is(cli(["merge", rank0, rank1Near, "-o", join(tmp, "near3.json"), "--max-skew", "5"]).status, 0);
});

test("merge --format xspace: the clock skew is a warning in every host's XSpace", () => {
  const logdir = join(tmp, "skew_xprof");
  const r = cli(["merge", rank0, rank1, "--format", "xspace", "-o", logdir]);
  assert.is(r.status, 0, r.stderr);
  assert.ok(r.stderr.includes(`warning CLOCK_SKEW: rank 0 (node-a), ${rank0} and rank 1 (node-b)`), r.stderr);
  const run = join(logdir, "plugins", "profile");
  const files = readdirSync(run).flatMap((d) => readdirSync(join(run, d)).map((f) => join(run, d, f)));
  assert.equal(files.map((f) => f.replace(/^.*\//, "")).sort(), ["node-a.xplane.pb", "node-b.xplane.pb"]);
  for (const f of files) {
    const space = fromBinary(XSpaceSchema, readFileSync(f));
    const skew = space.warnings.filter((w) => w.startsWith("rawtrace CLOCK_SKEW: "));
    assert.is(skew.length, 1, space.warnings.join("\n"));
    assert.ok(skew[0].includes(`rank 0 (node-a), ${rank0} and rank 1 (node-b), ${rank1}: clocks ${YEARS_TEXT} apart`), skew[0]);
    assert.ok(space.planes.length > 0);
  }
});

test("info: an unknown world size is ?, an unknown local rank is left out; one activity buffer is singular", () => {
  const r = cli(["info", join(ROOT, "samples/alexnet_a100_rank0.rawtrace")]);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /\n  rank {10}0 of \?\n/);
  assert.match(r.stdout, /\(1 activity buffer, /);
});

test("convert's summary line: a gzipped output gives the file's size too; a small dump in kB", () => {
  const out = join(tmp, "summary.json.gz");
  const r = cli(["convert", join(ROOT, "samples/alexnet_a100_rank0.rawtrace"), "-o", out]);
  assert.is(r.status, 0, r.stderr);
  const size = statSync(out).size;
  assert.ok(r.stderr.includes(`JSON (${(size / 1e3).toFixed(1)} kB gzipped) out`), r.stderr);
  assert.match(r.stderr, /: 500 events, \d+\.\d kB in, /);
  // Counts grouped by three digits, as stats and info print them (before: "1981 events").
  const big = cli(["convert", join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"), "-o", join(tmp, "summary-big.json")]);
  assert.is(big.status, 0, big.stderr);
  assert.match(big.stderr, /: 1,981 events, /);
  const merged = cli(["merge", join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"), "-o", join(tmp, "summary-merged.json")]);
  assert.match(merged.stderr, /→ \S+: 1,981 events, [^\n]*\n {2}\S[^\n]*, 1,981 events, /);
});

test("merge of a file named twice: merged once, and said", () => {
  const r = cli(["merge", rank0, rank1, rank0, "-o", join(tmp, "twice.json")]);
  assert.is(r.status, 0, r.stderr);
  assert.ok(lines(r.stderr).includes(`rawtrace: ${rank0} is named more than once; merge reads it once`), r.stderr);
  assert.match(r.stderr, /merged 2 ranks/);
});

test("merge --strict: a rank that lost data (records the collector dropped) exits 6", () => {
  // sampleDump's collector reports 7 dropped records.
  const r = cli(["merge", rank0, rank1Near, "-o", join(tmp, "strict_merge.json"), "--strict"]);
  assert.is(r.status, 6, r.stderr);
  assert.ok(r.stderr.includes("the collector dropped 7 records"), r.stderr);
  // A damaged rank: its skipped ranges on stderr and in its rawtrace.merge.ranks entry.
  const out = join(tmp, "damaged_merge.json");
  const d = cli(["merge", rank0, DAMAGED, "-o", out]);
  assert.is(d.status, 0, d.stderr);
  for (const x of expectRanges) assert.ok(d.stderr.includes(`skipped bytes ${x.from}–${x.to} (chunk seq ${x.seq}: BAD_PAYLOAD_CRC)`), d.stderr);
  const ranks = JSON.parse(readFileSync(out, "utf8")).rawtrace.merge.ranks as Array<Record<string, any>>;
  assert.equal(ranks.find((x) => x.file === DAMAGED)!.lost.ranges, expectRanges);
  assert.is(ranks.find((x) => x.file === rank0)!.lost, undefined);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("contradicting options and negative numbers are usage errors that say what was given, before any work", () => {
  usageError(["convert", SAMPLE, "-o", "a.json", "--out-dir", "d"], "-o a.json and --out-dir d: give one");
  usageError(["convert", SAMPLE, "-o", "g.json", "--gzip"], "--gzip with -o g.json: gzip output is named .json.gz");
  usageError(["convert", SAMPLE, "-F", "xspace", "-o", "y.json"], "XSpace goes to a log directory or a .xplane.pb file");
  usageError(["stats", SAMPLE, "--gap-min", "5"], "--gap-min sets the shortest gap --gaps reports");
  usageError(["merge", SAMPLE, SAMPLE, "--gzip", "-o", "m.json"], "--gzip with -o m.json");
  usageError(["merge", SAMPLE, SAMPLE, "-F", "xspace", "-o", "mx.json"], "merge writes XSpace to a log directory");
  usageError(["convert", SAMPLE, "--jobs", "-1"], "--jobs -1: a value cannot start with '-' (--jobs takes no negative numbers)");
  usageError(["convert", SAMPLE, "-j", "-2"], "-j -2: a value cannot start with '-'");
  usageError(["stats", SAMPLE, "--top", "-3"], "--top -3:");
  // --jobs: decimal digits from 1 to 1,024 (each worker slot is made up front: 2^32 threw, 1e7 took gigabytes).
  for (const j of ["4294967296", "10000000", "1025", "1e3", "0x10", "2.5", "0"]) {
    usageError(["convert", SAMPLE, "--jobs", j, "-o", "j.json"], `--jobs must be a whole number from 1 to 1024, not '${j}'`);
  }
  usageError(["stats", SAMPLE, "-j", "9007199254740993"], "--jobs must be a whole number from 1 to 1024");
  // Every number option takes what it documents, in decimal: Number() took 0x10, 1e3, ' 3', 1.0 (audit).
  for (const t of ["0x10", "1.0", " 3", "1e1"]) usageError(["stats", SAMPLE, "--top", t], `--top must be a whole number, not '${t}'`);
  for (const t of ["0x10", "1e3", " 5", "Infinity"]) {
    usageError(["stats", SAMPLE, "--gaps", "--gap-min", t], `--gap-min must be a decimal number of µs ≥ 0 (such as 10 or 2.5), not '${t}'`);
    usageError(["merge", SAMPLE, join(ROOT, "samples/alexnet_a100_rank0.rawtrace"), "--max-skew", t, "-o", "m.json"], `--max-skew must be a decimal number of milliseconds ≥ 0 (such as 5 or 0.5), not '${t}'`);
  }
  usageError(["convert", SAMPLE, "--gzip", "--gzip-level", "0x5", "-o", "g.json.gz"], "--gzip-level must be a whole number from 0 (fastest) to 9 (smallest), not '0x5'");
  // An option given twice is refused (the last one used to win silently).
  usageError(["convert", SAMPLE, "-o", "a.json", "--output=b.json"], "--output given twice ('a.json', then 'b.json')");
  usageError(["batch", SAMPLE, "--shard", "0/2", "--shard", "1/2"], "--shard given twice");
  assert.equal(readdirSync(tmp).filter((f) => /^(a\.json|b\.json|j\.json|d|g\.json|y\.json|m\.json|mx\.json)$/.test(f)), [], "nothing made");
  const h = cli(["help", "--help"]);
  assert.is(h.status, 0, h.stderr);
  assert.match(h.stdout, /^rawtrace \d/);
});

test("info takes folders and globs like convert and stats; a glob that matches nothing fails alone; blocks name the path given", () => {
  const d = join(tmp, "info-dir");
  mkdirSync(join(d, "sub"), { recursive: true });
  writeFileSync(join(d, "sub/a.rawtrace"), readFileSync(SAMPLE));
  const r = cli(["info", d, join(d, "nothing*.rawtrace")]);
  assert.is(r.status, 1, r.stderr);
  assert.match(r.stdout, new RegExp(`^${join(d, "sub/a.rawtrace").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: `, "m"));
  assert.match(r.stderr, /nothing\*\.rawtrace: no \.rawtrace file matches/);
});

test.run();
