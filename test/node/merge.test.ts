/**
 * `rawtrace merge` on the eight ranks of the real DLRM run (../shared/data/real/kineto-cuda/dlrm_v100_8ranks.tar.gz,
 * each rank rebuilt as a `.rawtrace` with src/tools/kineto_to_rawtrace.ts): one Chrome trace with eight rank
 * groups whose pids never collide, every event at the same absolute time as in its rank's own conversion, every
 * ac2g flow matched wherever the original trace had both ends, world size and the clock report; the gzip round
 * trip; a failing rank; the XSpace layout; the CLI.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { merge } from "../../src/node/merge.js";
import { WorkerPool } from "../../src/node/pool.js";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { absoluteNs, microsToNs, parseKinetoJson, traceBaseNs, type KinetoEvent, type KinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { dlrmRanks } from "../helpers/dlrm.js";
import { asRank } from "../helpers/dump_rank.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-merge-"));
const ranks = dlrmRanks();
const paths = ranks.map((r) => {
  const p = join(tmp, `rank${r.rank}.rawtrace`);
  writeFileSync(p, r.bytes);
  return p;
});
const SLOT = 2 ** 32;

/** Flow ids with both an "s" and an "f" in a trace. */
function pairedFlows(t: KinetoTrace): Set<number> {
  const s = new Set<number>();
  const f = new Set<number>();
  for (const e of t.traceEvents) {
    if (e.cat !== "ac2g") continue;
    if (e.ph === "s") s.add(Number(e.id));
    if (e.ph === "f") f.add(Number(e.id));
  }
  return new Set([...s].filter((id) => f.has(id)));
}

/** A rank's events as comparable keys: category, name, tid, absolute ns start and duration. */
function eventKeys(evs: KinetoEvent[], base: bigint): string[] {
  return evs
    .filter((e) => (e.ph === "X" || e.ph === "i") && e.name !== "Record Window End")
    .map((e) => `${e.cat}|${e.name}|${e.tid}|${absoluteNs(e.ts!, base)}|${e.dur === undefined ? "" : microsToNs(e.dur)}`)
    .sort();
}

let merged: KinetoTrace;
let mergedText: string;

test("eight ranks → one trace: eight rank groups, disjoint pids, one time base, world size", async () => {
  const pool = new WorkerPool({ jobs: 2 });
  let r;
  try {
    r = await merge(paths, join(tmp, "job.json"), { pool });
  } finally {
    await pool.close();
  }
  mergedText = readFileSync(join(tmp, "job.json"), "utf8");
  merged = parseKinetoJson(mergedText);
  assert.is(r.ranks.length, 8);
  assert.is(r.plan.worldSize, 8);
  assert.equal(merged.distributedInfo, { world_size: 8 });
  const names = merged.traceEvents.filter((e) => e.ph === "M" && e.name === "process_name");
  const groups = new Map<number, Set<number>>();
  for (const e of names) {
    const m = /^rank (\d+) \(roundtrip\) /.exec(String(e.args?.name));
    assert.ok(m, `process_name says rank and host: ${e.args?.name}`);
    const rank = Number(m![1]);
    const pid = Number(e.pid);
    assert.ok(pid >= rank * 1000 && pid < rank * 1000 + 1000, `pid ${pid} in rank ${rank}'s range`);
    groups.set(rank, (groups.get(rank) ?? new Set()).add(pid));
  }
  assert.equal([...groups.keys()].sort(), [0, 1, 2, 3, 4, 5, 6, 7], "eight rank groups");
  // One name per process, and the array opens with rank 0's own process (HTA's index 0 is "no link": chromeLead).
  assert.is(new Set(names.map((e) => Number(e.pid))).size, names.length, "one process_name per pid");
  const lead = merged.traceEvents[0];
  assert.equal([lead.ph, lead.name, Number(lead.pid)], ["M", "process_name", 0]);
  for (const [rank, pids] of groups) {
    assert.ok(pids.has(rank * 1000), `rank ${rank} CPU process`);
    assert.ok([...pids].some((p) => p >= rank * 1000 + 100), `rank ${rank} GPU process`);
  }
  for (const e of merged.traceEvents) {
    if (e.ph === "X") assert.ok(Number(e.pid) >= 0 && Number(e.pid) < 8000, `event pid ${e.pid} belongs to a rank`);
  }
  assert.is(merged.traceEvents.filter((e) => e.name === "Record Window End").length, 1);
  assert.is(typeof merged.baseTimeNanoseconds, "string");
  assert.is(merged.deviceProperties!.length, ranks.reduce((n, x) => n + (x.original.deviceProperties?.length ?? 0), 0));
  const rt = merged.rawtrace as { events: number; merge: { world_size: number; ranks: unknown[] } };
  assert.is(rt.events, r.events);
  assert.is(rt.merge.ranks.length, 8);
});

test("every rank's events keep their absolute times (one baseTimeNanoseconds for all)", async () => {
  const base = traceBaseNs(merged);
  const engine = await createEngine();
  for (const [k, p] of paths.entries()) {
    const parts: Buffer[] = [];
    await engine.convert(fileSource(p), (b) => parts.push(Buffer.from(b)));
    const own = parseKinetoJson(Buffer.concat(parts).toString("utf8"));
    const mine = merged.traceEvents.filter((e) => Number(e.pid) >= ranks[k].rank * 1000 && Number(e.pid) < ranks[k].rank * 1000 + 1000);
    assert.equal(eventKeys(mine, base), eventKeys(own.traceEvents, traceBaseNs(own)),
      `rank ${ranks[k].rank}: same events at the same absolute times`);
  }
});

test("every flow is matched: each \"f\" has its \"s\" wherever the original had both", () => {
  const s = new Map<number, KinetoEvent>();
  const f = new Map<number, KinetoEvent>();
  for (const e of merged.traceEvents) {
    if (e.cat !== "ac2g") continue;
    const id = Number(e.id);
    assert.ok(Number.isSafeInteger(id));
    const m = e.ph === "s" ? s : f;
    assert.not.ok(m.has(id), `flow id ${id} used once per phase`);
    m.set(id, e);
  }
  let matched = 0;
  for (const r of ranks) {
    const want = pairedFlows(r.original);
    assert.ok(want.size > 100, `rank ${r.rank} has flows`);
    for (const id of want) {
      const gid = r.rank * SLOT + id;
      assert.ok(s.has(gid) && f.has(gid), `rank ${r.rank} flow ${id}: s ${s.has(gid)} f ${f.has(gid)}`);
      const [a, b] = [Number(s.get(gid)!.pid), Number(f.get(gid)!.pid)];
      assert.ok(Math.floor(a / 1000) === r.rank && Math.floor(b / 1000) === r.rank, `flow ${gid} stays in rank ${r.rank}`);
      matched++;
    }
  }
  // And nothing pairs across ranks: every id's rank is its slot.
  for (const [id, e] of s) assert.is(Math.floor(id / SLOT), Math.floor(Number(e.pid) / 1000));
  console.log(`merge dlrm 8 ranks: ${matched} flows matched (${s.size} s, ${f.size} f)`);
});

test("clock report: per-rank start offsets and the residual skew (spread of collector starts)", async () => {
  const engine = await createEngine();
  const starts: bigint[] = [];
  for (const p of paths) starts.push((await engine.info(fileSource(p))).collectorStartNs);
  const spread = Number(starts.reduce((a, b) => (b > a ? b : a)) - starts.reduce((a, b) => (b < a ? b : a)));
  const clock = (merged.rawtrace as { merge: { clock: { residual_skew_ns: number }; ranks: Array<{ start_offset_ns: number; anchor_offset_ns: number }> } }).merge;
  assert.is(clock.clock.residual_skew_ns, spread);
  assert.ok(spread > 0);
  const offsets = clock.ranks.map((r) => r.start_offset_ns);
  assert.is(Math.max(...offsets) - Math.min(...offsets), spread);
  assert.ok(offsets.includes(0), "the median rank has offset 0");
  for (const r of clock.ranks) assert.is(r.anchor_offset_ns, 0, "round-trip dumps: vendor clock is CLOCK_REALTIME");
});

test("gzip merge round trip: job.json.gz gunzips to the same bytes as job.json", async () => {
  await merge(paths, join(tmp, "job.json.gz"), { jobs: 2 });
  const plain = readFileSync(join(tmp, "job.json"));
  // Same trace apart from the traceName (the output's own name).
  const text = gunzipSync(readFileSync(join(tmp, "job.json.gz"))).toString("utf8");
  assert.is(text.replace('"traceName":"job.json.gz"', '"traceName":"job.json"'), plain.toString("utf8"));
});

test("onProgress: the last report has every file done and every byte counted", async () => {
  const seen: Array<{ filesDone: number; files: number; bytesDone: number; bytesTotal: number }> = [];
  await merge(paths.slice(0, 2), join(tmp, "progress.json"), { jobs: 1, onProgress: (p) => seen.push(p), progressMs: 1 });
  const last = seen[seen.length - 1];
  assert.ok(last, "reported");
  assert.is(last.filesDone, 2);
  assert.is(last.files, 2);
  assert.ok(Math.abs(last.bytesDone - last.bytesTotal) < 1, `${last.bytesDone} of ${last.bytesTotal}`);
});

test("a failing rank fails the merge and leaves nothing behind; existing outputs need --force", async () => {
  const dir = join(tmp, "bad");
  mkdirSync(dir);
  const bad = [...paths.slice(0, 3), join(dir, "rank9.rawtrace")];
  writeFileSync(bad[3], "not a dump at all");
  const out = join(dir, "job.json");
  const e = await merge(bad, out, { jobs: 2 }).catch((x) => x);
  assert.is(e.name, "BAD_MAGIC");
  assert.match(e.message, /rank9\.rawtrace/);
  assert.equal(readdirSync(dir), ["rank9.rawtrace"], "no output, no fragment");
  const exists = await merge(paths, join(tmp, "job.json"), { jobs: 2 }).catch((x) => x);
  assert.is(exists.name, "EXISTS");
});

test("a bad jobs is USAGE before anything is made, also with the caller's pool: no temporary, no lock, and the corrected call goes through (before: its lock refused it for 2 minutes)", async () => {
  const dir = join(tmp, "badjobs");
  mkdirSync(dir);
  const out = join(dir, "job.json");
  for (const jobs of [0, 2.5, -5]) {
    const e = await merge(paths.slice(0, 2), out, { jobs }).catch((x) => x);
    assert.is(e.name, "USAGE", e.message);
    assert.equal(readdirSync(dir), [], `jobs ${jobs}: nothing made`);
  }
  const pool = new WorkerPool({ jobs: 1 });
  try {
    const e = await merge(paths.slice(0, 2), out, { jobs: -5, pool }).catch((x) => x);
    assert.is(e.name, "USAGE", "with a pool too (before: accepted)");
    const r = await merge(paths.slice(0, 2), out, { jobs: 1, pool });
    assert.ok(r.events > 0);
  } finally {
    await pool.close();
  }
  assert.equal(readdirSync(dir), ["job.json"]);
});

test("one dump given twice (by any spelling of its path) is USAGE before any output: its events would be counted twice", async () => {
  const dir = join(tmp, "twice");
  mkdirSync(dir);
  for (const [list, also] of [[[paths[0], paths[1], paths[0]], false], [[paths[0], `${dirname(paths[0])}/./x/../${paths[0].split("/").pop()!}`], true]] as const) {
    const e = await merge([...list], join(dir, "job.json")).catch((x) => x);
    assert.is(e.name, "USAGE", e.message);
    assert.match(e.message, "is given more than once");
    if (also) assert.match(e.message, `(also as ${paths[0]})`);
    assert.equal(readdirSync(dir), [], "nothing written");
  }
  // The same file under another name: a symlink, a hard link (told by device and inode, not by the path).
  const link = join(tmp, "link-rank0.rawtrace");
  const hard = join(tmp, "hard-rank0.rawtrace");
  symlinkSync(paths[0], link);
  linkSync(paths[0], hard);
  for (const other of [link, hard]) {
    const e = await merge([paths[0], paths[1], other], join(dir, "job.json")).catch((x) => x);
    assert.is(e.name, "USAGE", e.message);
    assert.match(e.message, `merge: ${other} is given more than once (also as ${paths[0]})`);
    assert.equal(readdirSync(dir), [], "nothing written");
  }
  // The CLI keeps such an input once and says so.
  const cli = spawnSync(process.execPath, ["--import", "tsx", "src/cli.ts", "merge", paths[0], link, hard, "-o", join(dir, "cli.json")], { cwd: ROOT, encoding: "utf8", timeout: 120000 });
  assert.is(cli.status, 0, cli.stderr);
  assert.match(cli.stderr, `rawtrace: ${link} is the same file as ${paths[0]}; merge reads it once`);
  assert.match(cli.stderr, `rawtrace: ${hard} is the same file as ${paths[0]}; merge reads it once`);
  assert.match(cli.stderr, /merged 1 rank \(world size 8\)/);
});

test("maxSkewMs that is not a finite number ≥ 0 is USAGE naming it, before any output (NaN switched the skew check off)", async () => {
  const dir = join(tmp, "skew-option");
  mkdirSync(dir);
  for (const [bad, shown] of [[NaN, "NaN"], [-1, "-1"], [Infinity, "Infinity"], ["5", '"5" (a string)']] as const) {
    const e = await merge(paths.slice(0, 2), join(dir, "job.json"), { maxSkewMs: bad as number }).catch((x) => x);
    assert.is(e.name, "USAGE", `${shown}: ${e.message}`);
    assert.is(e.message, `maxSkewMs must be a number of milliseconds ≥ 0 (finite), not ${shown}`);
  }
  assert.equal(readdirSync(dir), [], "nothing written");
});

test("ranks the merge cannot settle are said: one rank in two files (a damaged HEADER), world sizes that disagree", async () => {
  const dir = join(tmp, "conflict");
  mkdirSync(dir);
  // Rank 3 reads as rank 7 (one changed bit of its HEADER), rank 5 says a world of 16.
  const three = join(dir, "rank3.rawtrace");
  writeFileSync(three, asRank(readFileSync(paths[3]), { rank: 7 }));
  const five = join(dir, "rank5.rawtrace");
  writeFileSync(five, asRank(readFileSync(paths[5]), { world: 16 }));
  const inputs = paths.map((p, i) => (i === 3 ? three : i === 5 ? five : p));
  const out = join(dir, "job.json");
  const r = await merge(inputs, out, { jobs: 2 });
  assert.equal(r.rankWarnings.map((w) => w.code), ["DUPLICATE_RANK", "WORLD_SIZES_DIFFER"]);
  assert.match(r.rankWarnings[0].message, `rank 7 is the rank of 2 files (${three}, ${paths[7]})`);
  assert.match(r.rankWarnings[1].message, `8 (${paths[0]}`);
  assert.match(r.rankWarnings[1].message, `16 (${five}); the dumps may not be of one run; world size 16 is used`);
  assert.equal(r.ranks.map((x) => x.slot), [0, 1, 2, 3, 4, 5, 6, 7], "numbered by input position");
  const doc = JSON.parse(readFileSync(out, "utf8"));
  assert.equal(doc.rawtrace.merge.rank_warnings, r.rankWarnings);
  // The CLI says them; the XSpace files carry them.
  const cli = spawnSync(process.execPath, ["--import", "tsx", "src/cli.ts", "merge", ...inputs, "-o", join(dir, "cli.json")], { cwd: ROOT, encoding: "utf8", timeout: 120000 });
  assert.is(cli.status, 0, cli.stderr);
  assert.match(cli.stderr, "rawtrace: warning DUPLICATE_RANK: rank 7 is the rank of 2 files");
  assert.match(cli.stderr, "rawtrace: warning WORLD_SIZES_DIFFER: ");
  const x = await merge(inputs.slice(3, 8), join(dir, "xprof"), { jobs: 2, format: "xspace" });
  const space = fromBinary(XSpaceSchema, readFileSync(x.outputs[0]));
  assert.ok(space.warnings.some((w) => w.startsWith("rawtrace DUPLICATE_RANK: rank 7 is the rank of 2 files")), space.warnings.join("\n"));
  // Distinct ranks and one world size: nothing to say.
  assert.equal((await merge(paths.slice(0, 2), join(dir, "fine.json"), { jobs: 2 })).rankWarnings, []);
});

test("XSpace merge: the ranks of one host in one .xplane.pb, hostnames set, on the merge's profile start", async () => {
  const logdir = join(tmp, "xprof");
  const r = await merge(paths.slice(0, 3), logdir, { jobs: 2, format: "xspace" });
  assert.is(r.outputs.length, 1, "one host, one file");
  assert.match(r.outputs[0], /\/plugins\/profile\/\d{4}(_\d\d){5}\/roundtrip\.xplane\.pb$/);
  assert.equal(r.ranks.map((x) => x.output), [r.outputs[0], r.outputs[0], r.outputs[0]]);
  const space = fromBinary(XSpaceSchema, readFileSync(r.outputs[0]));
  assert.equal(space.hostnames, ["roundtrip"]);
  assert.is(space.planes.filter((p) => p.name === "/host:CPU").length, 1, "one host plane");
  const host = space.planes.find((p) => p.name === "/host:CPU")!;
  const labels = new Set(host.lines.map((l) => /^rank (\d+): /.exec(l.displayName)?.[1]));
  assert.equal([...labels].sort(), ["0", "1", "2"], "every rank's threads, labelled");
  let events = 0;
  for (const p of space.planes) for (const l of p.lines) events += l.events.length;
  assert.is(events, r.events, "every event of the three ranks");
  const task = space.planes.find((p) => p.name === "Task Environment")!;
  const st = task.stats.find((s) => task.statMetadata[String(s.metadataId)]?.name === "profile_start_time")!;
  assert.is(st.value.value as bigint, r.plan.profileStartNs);
  // One rank per host: the file is that rank's own XSpace, named after the host.
  const one = await merge(paths.slice(0, 1), join(tmp, "xprof1"), { jobs: 1, format: "xspace" });
  assert.match(one.outputs[0], /\/roundtrip\.xplane\.pb$/);
});

test("rawtrace merge CLI: summary on stderr, --json on stdout, exits on its own", () => {
  const cli = (args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "src/cli.ts", "merge", ...args], { cwd: ROOT, encoding: "utf8", timeout: 120000 });
  const out = join(tmp, "cli.json");
  const r = cli([...paths, "-o", out, "--jobs", "2"]);
  assert.is(r.signal, null);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, /merged 8 ranks \(world size 8\)/);
  assert.match(r.stderr, /rank 7 \(roundtrip\)/);
  assert.match(r.stderr, /residual skew/);
  assert.ok(readFileSync(out).equals(Buffer.from(mergedText.replace('"traceName":"job.json"', '"traceName":"cli.json"'))));
  const j = cli([...paths, "-o", out, "--force", "--json"]);
  assert.is(j.status, 0, j.stderr);
  const s = JSON.parse(j.stdout);
  assert.is(s.ranks.length, 8);
  assert.ok(existsSync(s.output));
});

test("the merged header: ROCm ranks' device fields as one rank's conversion writes them; the CUDA versions of the first rank whose HEADER is whole", async () => {
  /** A trace's deviceProperties without their ids (a merge renumbers them). */
  const props = (t: KinetoTrace) => (t.deviceProperties ?? []).map((d) => JSON.stringify({ ...(d as object), id: 0 }));
  const alone = async (p: string) => {
    const parts: Buffer[] = [];
    await (await createEngine()).convert(fileSource(p), (b) => parts.push(Buffer.from(b)));
    return parseKinetoJson(Buffer.concat(parts).toString("utf8"));
  };
  const pool = new WorkerPool({ jobs: 2 });
  try {
    const mi = readFileSync(join(ROOT, "samples/mi250_minitoy_rocprof.rawtrace"));
    const rocm = [0, 1].map((rank) => {
      const p = join(tmp, `mi250_rank${rank}.rawtrace`);
      writeFileSync(p, asRank(mi, { rank, world: 2 }));
      return p;
    });
    await merge(rocm, join(tmp, "rocm.json"), { pool });
    const own = props(await alone(rocm[0]));
    assert.ok(own.length > 0 && own.every((d) => d.includes('"gcnArchName"')), "one rank's conversion writes Kineto's ROCm fields");
    // Before: the merge's header lacked gcnArchName, gfxTargetVersion, maxSharedMemoryPerMultiProcessor, simdPerCu
    // and maxWavesPerCu.
    assert.equal(props(parseKinetoJson(readFileSync(join(tmp, "rocm.json"), "utf8"))), [...own, ...own]);
    const h100 = readFileSync(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"));
    const cut = join(tmp, "h100_rank0_cut.rawtrace");
    writeFileSync(cut, asRank(h100, { rank: 0, world: 2 }).subarray(0, 100)); // cut inside its HEADER
    const whole = join(tmp, "h100_rank1.rawtrace");
    writeFileSync(whole, asRank(h100, { rank: 1, world: 2, uuidTail: 2 }));
    await merge([cut, whole], join(tmp, "cuda.json"), { pool });
    const m = parseKinetoJson(readFileSync(join(tmp, "cuda.json"), "utf8")) as Record<string, unknown>;
    const one = (await alone(whole)) as Record<string, unknown>;
    for (const k of ["cupti_version", "cuda_runtime_version", "cuda_driver_version"]) {
      assert.ok(one[k] !== undefined, `${k} in the rank's own conversion`);
      assert.is(m[k], one[k], `${k}: the whole rank's (before: none, the first rank's HEADER being cut)`);
    }
  } finally {
    await pool.close();
  }
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
