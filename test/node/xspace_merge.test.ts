/**
 * `rawtrace merge --format xspace` with several ranks on one host: one `<host>.xplane.pb` per host holding every
 * rank (src/node/xspace_merge.ts, assembly/emit/options.ts). Small dumps built with the real CUPTI record layouts:
 * ranks that each see "their" GPU as device 0 (CUDA_VISIBLE_DEVICES) get the host's ordinals 0 and 1; ranks that
 * share one GPU (same UUID) with colliding tids and stream ids get one GPU plane with relocated, labelled rows; the
 * joined planes hold exactly the events of the ranks' own conversions, with every metadata reference resolvable,
 * one `correlation_id` stat per plane and correlation ids that never collide; hosts and unknown hosts get their
 * own files; diagnostics say which rank they are from; the profile spans every rank.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { RawtraceError } from "../../src/core/codes.js";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, type XPlane, type XSpace } from "../../src/gen/xplane_pb.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { merge } from "../../src/node/merge.js";
import { WorkerPool } from "../../src/node/pool.js";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";

const L: C.CuptiLayout = "cuda13";
const T0 = 1_780_000_000_000_000_000n;
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-xsmerge-"));
const pool = new WorkerPool({ jobs: 2 });

interface RankSpec {
  rank: number;
  host: string;
  pid: number;
  tid: number;
  /** UUID byte of the rank's device 0 (0: no UUID). */
  uuid: number;
  stream: number;
  kernel: string;
  /** Start offset of the rank's work, ns. */
  at: bigint;
  dropped?: number;
  /** No DEVICES chunk (a damaged one is skipped alike): its device is one the dump does not list. */
  noDevices?: boolean;
}

/** A rank's dump: 3 launches of `kernel` on device 0 and a copy, one thread, one stream. */
function rankDump(s: RankSpec): string {
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 13000, driverVersion: 13000, pid: s.pid, rank: s.rank,
    worldSize: 4, startNs: T0 + s.at, hostname: s.host, commandLine: "python\0train.py",
  });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, v]) => [Number(k), v] as const));
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [2, 41, "cudaMemcpyAsync_v3020"]]);
  w.strings([[0x10n, s.kernel]]);
  const uuid = new Uint8Array(16);
  uuid[0] = s.uuid;
  if (!s.noDevices) w.devices([{
    id: 0, multiprocessors: 132, globalMemoryBytes: 80n << 30n, memoryBandwidth: 3350000000000n, coreClockKhz: 1980000,
    ccMajor: 9, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536,
    regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 233472,
    sharedMemPerBlockOptin: 232448, maxBlocksPerMultiprocessor: 32, name: "NVIDIA H100 80GB HBM3", uuid: s.uuid ? uuid : undefined,
  }]);
  w.threadNames([[s.pid, s.tid, "pt_main_thread"]]);
  const api: Uint8Array[] = [];
  const dev: Uint8Array[] = [];
  for (let i = 0; i < 3; i++) {
    const t = T0 + s.at + BigInt(i * 10_000);
    api.push(C.apiRecord(L, { kind: 5, cbid: 211, start: t, end: t + 2000n, processId: s.pid, threadId: s.tid, correlationId: i + 1 }));
    dev.push(C.kernelRecord(L, {
      start: t + 3000n, end: t + 3000n + BigInt(1000 + 100 * s.rank), deviceId: 0, contextId: 1, streamId: s.stream, correlationId: i + 1,
      namePtr: 0x10n, gridX: 8 * (s.rank + 1), gridY: 1, gridZ: 1, blockX: 256, blockY: 1, blockZ: 1, registersPerThread: 32,
    }));
  }
  const t = T0 + s.at + 40_000n;
  api.push(C.apiRecord(L, { kind: 5, cbid: 41, start: t, end: t + 500n, processId: s.pid, threadId: s.tid, correlationId: 4 }));
  dev.push(C.memcpyRecord(L, { start: t + 1000n, end: t + 3000n, deviceId: 0, contextId: 1, streamId: s.stream, correlationId: 4, bytes: 4096n, copyKind: 1, srcKind: 2, dstKind: 3, async: true }));
  w.activity(C.concat(api));
  w.activity(C.concat(dev));
  if (s.dropped) w.dropped(s.dropped, 1);
  w.end();
  const p = join(tmp, `${s.host || "nohost"}_rank${s.rank}.rawtrace`);
  writeFileSync(p, w.bytes());
  return p;
}

/** An event as XProf reads it: plane, row, name, start (ps after the profile start), duration, stats by name. */
interface Ev {
  plane: string;
  line: bigint;
  row: string;
  name: string;
  ps: bigint;
  dur: bigint;
  stats: Map<string, unknown>;
}

function statsOf(p: XPlane, stats: XPlane["stats"]): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (const s of stats) {
    const md = p.statMetadata[String(s.metadataId)];
    assert.ok(md, `${p.name}: stat metadata ${s.metadataId} exists`);
    const v = s.value;
    if (v.case === "refValue") {
      const ref = p.statMetadata[String(v.value)];
      assert.ok(ref, `${p.name}: ref ${v.value} of ${md.name} resolves`);
      m.set(md.name, ref.name);
    } else m.set(md.name, v.value);
  }
  return m;
}

/** Every event of `space`, checking that each metadata reference resolves and names are unique per stat. */
function events(space: XSpace): Ev[] {
  const out: Ev[] = [];
  for (const p of space.planes) {
    const names = Object.values(p.statMetadata).map((m) => m.name);
    for (const wk of ["correlation_id", "device_id", "kernel_details", "memcpy_details", "context_id"]) {
      assert.ok(names.filter((n) => n === wk).length <= 1, `${p.name}: one ${wk} stat metadata`);
    }
    for (const l of p.lines) {
      for (const e of l.events) {
        const md = p.eventMetadata[String(e.metadataId)];
        assert.ok(md, `${p.name}: event metadata ${e.metadataId} exists`);
        const offset = e.data.case === "offsetPs" ? e.data.value : 0n;
        out.push({
          plane: p.name, line: l.id, row: l.displayName || l.name, name: md.name, ps: l.timestampNs * 1000n + offset,
          dur: e.durationPs, stats: statsOf(p, e.stats),
        });
      }
    }
  }
  return out;
}

const key = (e: Ev) => `${e.name}|${e.ps}|${e.dur}`;

/** A rank converted alone to XSpace on the given profile start. */
async function alone(file: string, baseTimeNs: bigint): Promise<XSpace> {
  const engine = await createEngine();
  const parts: Buffer[] = [];
  await engine.convert(fileSource(file), (b) => parts.push(Buffer.from(b)), { format: "xspace", merge: { namespace: 0, baseTimeNs } });
  return fromBinary(XSpaceSchema, Buffer.concat(parts));
}

test("ranks that each see their GPU as device 0 (different UUIDs): one XSpace, GPU planes 0 and 1, launches point at them", async () => {
  const files = [
    rankDump({ rank: 0, host: "node-a", pid: 100, tid: 100, uuid: 0xa1, stream: 7, kernel: "gemm_r0", at: 0n }),
    rankDump({ rank: 1, host: "node-a", pid: 200, tid: 200, uuid: 0xa2, stream: 7, kernel: "gemm_r1", at: 1000n }),
  ];
  const r = await merge(files, join(tmp, "vis"), { format: "xspace", pool });
  assert.equal(r.outputs, [r.outputs[0]]);
  assert.is(basename(r.outputs[0]), "node-a.xplane.pb");
  assert.equal(r.ranks.map((x) => x.output), [r.outputs[0], r.outputs[0]]);
  const space = fromBinary(XSpaceSchema, readFileSync(r.outputs[0]));
  assert.equal(space.hostnames, ["node-a"]);
  assert.equal(space.planes.map((p) => p.name), ["/host:CPU", "/device:GPU:0", "/device:GPU:1", "/host:metadata", "Task Environment"]);
  assert.equal(space.planes.slice(1, 3).map((p) => p.id), [0n, 1n]);
  const evs = events(space);
  for (const [k, plane] of ["/device:GPU:0", "/device:GPU:1"].entries()) {
    const ks = evs.filter((e) => e.plane === plane && e.name.startsWith("gemm"));
    assert.equal(ks.map((e) => e.name), [`gemm_r${k}`, `gemm_r${k}`, `gemm_r${k}`], `${plane}: rank ${k}'s kernels`);
    // Not shared: the rows keep XLA's names without a rank label.
    assert.equal([...new Set(evs.filter((e) => e.plane === plane).map((e) => e.row))], ["Stream #7(Compute,MemcpyH2D)"]);
    const copy = evs.find((e) => e.plane === plane && e.name === "MemcpyHToD")!;
    assert.match(String(copy.stats.get("memcpy_details")), new RegExp(` dest:${k} `), "memcpy dest is the host ordinal");
  }
  const launches = evs.filter((e) => e.plane === "/host:CPU");
  assert.is(launches.length, 8);
  for (const l of launches) {
    const k = l.line === 100n ? 0 : 1;
    assert.is(l.stats.get("device_id"), BigInt(k), `${l.row}: device_id is the host ordinal`);
    const corr = l.stats.get("correlation_id") as bigint;
    assert.is(corr >> 32n, BigInt(k), "correlation ids in the rank's range");
    const target = evs.filter((e) => e.plane === `/device:GPU:${k}` && e.stats.get("correlation_id") === corr);
    assert.is(target.length, 1, `launch ${corr} has its device event`);
    assert.ok(l.row.startsWith(`rank ${k}: thread `), l.row);
  }
});

test("ranks that each list one device without a UUID (Gaudi's cards, a CUDA dump without UUIDs): a GPU plane each, not one for all", async () => {
  const files = [0, 1, 2].map((rank) => rankDump({
    rank, host: "node-n", pid: 100 + rank, tid: 100 + rank, uuid: 0, stream: 7, kernel: `k_r${rank}`, at: BigInt(rank * 1000),
  }));
  const r = await merge(files, join(tmp, "nouuid"), { format: "xspace", pool });
  const space = fromBinary(XSpaceSchema, readFileSync(r.outputs[0]));
  // Before: one /device:GPU:0 holding the three ranks' kernels on rank-labelled rows.
  assert.equal(space.planes.filter((p) => p.name.startsWith("/device:GPU:")).map((p) => p.name), ["/device:GPU:0", "/device:GPU:1", "/device:GPU:2"]);
  const evs = events(space);
  for (const k of [0, 1, 2]) {
    assert.equal(evs.filter((e) => e.plane === `/device:GPU:${k}` && e.name.startsWith("k_r")).map((e) => e.name), [`k_r${k}`, `k_r${k}`, `k_r${k}`]);
  }
});

test("a rank whose dump lists no device (its DEVICES chunk lost): its GPU gets a plane above the host's, not another rank's", async () => {
  const files = [
    rankDump({ rank: 0, host: "node-d", pid: 100, tid: 100, uuid: 0xd1, stream: 7, kernel: "listed_r0", at: 0n }),
    rankDump({ rank: 1, host: "node-d", pid: 200, tid: 200, uuid: 0, stream: 7, kernel: "unlisted_r1", at: 1000n, noDevices: true }),
  ];
  const r = await merge(files, join(tmp, "nodev"), { format: "xspace", pool });
  const space = fromBinary(XSpaceSchema, readFileSync(r.outputs[0]));
  const evs = events(space);
  const planeOf = (k: string) => [...new Set(evs.filter((e) => e.name === k).map((e) => e.plane))];
  assert.equal(planeOf("listed_r0"), ["/device:GPU:0"]);
  // Before: /device:GPU:0 too, rank 0's GPU and rank 1's on one plane.
  assert.equal(planeOf("unlisted_r1"), ["/device:GPU:257"], "the second rank's first unlisted device: above GPU 0, 256 per rank");
  const launch = evs.find((e) => e.plane === "/host:CPU" && e.row.startsWith("rank 1:") && e.stats.get("device_id") !== undefined)!;
  assert.is(launch.stats.get("device_id"), 257n, "its launches point at that plane");
});

test("ranks sharing one GPU with colliding tids and streams: one plane each, rows relocated and labelled, events equal to each rank's own", async () => {
  const files = [
    rankDump({ rank: 2, host: "node-b", pid: 1, tid: 7, uuid: 0xb1, stream: 13, kernel: "conv_r2", at: 0n }),
    rankDump({ rank: 3, host: "node-b", pid: 1, tid: 7, uuid: 0xb1, stream: 13, kernel: "conv_r3", at: 500n }),
  ];
  const r = await merge(files, join(tmp, "shared"), { format: "xspace", pool });
  const space = fromBinary(XSpaceSchema, readFileSync(r.outputs[0]));
  assert.equal(space.planes.map((p) => p.name), ["/host:CPU", "/device:GPU:0", "/host:metadata", "Task Environment"]);
  for (const p of space.planes.slice(0, 2)) {
    assert.is(p.lines.length, 2, `${p.name}: a row per rank`);
    assert.is(new Set(p.lines.map((l) => Number(l.id & 0xffffffffn))).size, 2, `${p.name}: row ids differ in the low 32 bits`);
    assert.equal(p.lines.map((l) => (l.displayName || l.name).slice(0, 8)), ["rank 2: ", "rank 3: "]);
  }
  const own = await alone(files[0], r.plan.profileStartNs);
  assert.is(space.planes[1].stats.length, own.planes[1].stats.length, "the GPU's capabilities once");
  assert.is(space.planes[1].stats.length, 8);
  const merged = events(space);
  // The same events as each rank converted alone on the same profile start.
  const want: string[] = [];
  for (const f of files) for (const e of events(await alone(f, r.plan.profileStartNs))) want.push(`${e.plane}|${key(e)}`);
  assert.equal(merged.map((e) => `${e.plane}|${key(e)}`).sort(), want.sort());
  const corr = merged.filter((e) => e.plane === "/device:GPU:0").map((e) => e.stats.get("correlation_id"));
  assert.is(new Set(corr).size, 8, "eight distinct correlation ids on the shared GPU");
  for (const e of merged.filter((x) => x.name.startsWith("conv_"))) {
    const k = e.name === "conv_r2" ? 0n : 1n;
    assert.is((e.stats.get("correlation_id") as bigint) >> 32n, k);
    assert.match(String(e.stats.get("kernel_details")), new RegExp(`grid:${e.name === "conv_r2" ? 24 : 32},1,1 `));
  }
});

test("an XSpace merge of ranks sharing a host that fails while converting: no part, no run folder, no empty log directory left (before: the parts kept the tree until the folders were tried)", async () => {
  const files = [
    rankDump({ rank: 2, host: "node-f", pid: 1, tid: 7, uuid: 0xc1, stream: 13, kernel: "conv_r2", at: 0n }),
    rankDump({ rank: 3, host: "node-f", pid: 2, tid: 7, uuid: 0xc2, stream: 13, kernel: "conv_r3", at: 500n }),
  ];
  // The second rank's conversion fails once the first wrote its part.
  let converts = 0;
  const failing = {
    size: pool.size, info: (f: string) => pool.info(f), active: () => pool.active(), close: () => pool.close(),
    convert: async (job: Parameters<WorkerPool["convert"]>[0]) => {
      if (++converts === 2) throw new RawtraceError("IO", `${job.input}: injected failure`, job.input);
      return pool.convert(job);
    },
  } as unknown as WorkerPool;
  const out = join(tmp, "failed-merge");
  const e = await merge(files, out, { format: "xspace", pool: failing, jobs: 1 }).catch((x) => x);
  assert.match(String(e?.message), "injected failure");
  assert.is(converts, 2);
  assert.not.ok(existsSync(out), `nothing left: ${existsSync(out) ? readdirSync(out, { recursive: true }).join(", ") : ""}`);
});

test("two hosts and a rank with no host name: a file each; diagnostics name the rank; the profile spans every rank", async () => {
  const files = [
    rankDump({ rank: 0, host: "h1", pid: 10, tid: 10, uuid: 1, stream: 7, kernel: "k0", at: 0n }),
    rankDump({ rank: 1, host: "h1", pid: 11, tid: 11, uuid: 2, stream: 7, kernel: "k1", at: 0n, dropped: 5 }),
    rankDump({ rank: 2, host: "h2", pid: 12, tid: 12, uuid: 3, stream: 7, kernel: "k2", at: 0n }),
    rankDump({ rank: 3, host: "", pid: 13, tid: 13, uuid: 4, stream: 7, kernel: "k3", at: 9_000_000n }),
  ];
  const r = await merge(files, join(tmp, "hosts"), { format: "xspace", pool });
  assert.equal(r.outputs.map((f) => basename(f)), ["h1.xplane.pb", "h2.xplane.pb", "unknown_host_rank3.xplane.pb"]);
  assert.equal(r.ranks.map((x) => basename(x.output!)), ["h1.xplane.pb", "h1.xplane.pb", "h2.xplane.pb", "unknown_host_rank3.xplane.pb"]);
  const h1 = fromBinary(XSpaceSchema, readFileSync(r.outputs[0]));
  assert.ok(h1.warnings.some((w) => w.startsWith("rank 1: Detected GPU events dropped on h1: ")), h1.warnings.join("\n"));
  const task = h1.planes.find((p) => p.name === "Task Environment")!;
  const st = statsOf(task, task.stats);
  assert.is(st.get("profile_start_time"), r.plan.profileStartNs);
  // h1's ranks end at 43 µs; the rank on another host starts 9 ms later and does not stretch h1's profile.
  const stop = st.get("profile_stop_time") as bigint;
  assert.ok(stop >= T0 + 43_000n && stop < T0 + 9_000_000n, `profile stop ${stop - T0}`);
  const h2 = fromBinary(XSpaceSchema, readFileSync(r.outputs[1]));
  assert.equal(h2.planes.map((p) => p.name), ["/host:CPU", "/device:GPU:0", "/host:metadata", "Task Environment"]);
  assert.equal(h2.planes[0].lines.map((l) => l.displayName), ["thread 12 (pt_main_thread)"], "a host of one rank: no labels");
  const file = await merge(files, join(tmp, "job.xplane.pb"), { format: "xspace", pool }).catch((e) => e);
  assert.is(file.name, "USAGE");
  assert.match(file.message, /one <host>\.xplane\.pb per host under a log directory/);
  // Existing outputs need --force.
  const again = await merge(files, join(tmp, "hosts"), { format: "xspace", pool }).catch((e) => e);
  assert.is(again.name, "EXISTS");
  await merge(files, join(tmp, "hosts"), { format: "xspace", pool, force: true });
});

test.after(async () => {
  await pool.close();
  rmSync(tmp, { recursive: true, force: true });
});

test.run();
