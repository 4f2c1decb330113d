/**
 * `rawtrace stats --gaps` on the bundled H100 sample against the same figures computed independently from the raw
 * records (test/interop/fidelity_records.ts reads the container and the CUPTI records itself; nothing here comes from
 * our emitters): every GPU idle gap of at least 10 µs with its start and length, the op that ends it and its launch
 * call's thread and delay, the time that thread spent in API calls during the gap, the call overlapping it most and
 * the innermost NVTX range containing it; per device the span, busy and idle time. Plus the CLI's --csv and --json.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { timelinePass } from "../../src/core/step_stats.js";
import { gapsOf } from "../../src/core/gaps.js";
import { GAPS_CSV_COLUMNS } from "../../src/node/gap_report.js";
import { readDump, type ApiCall } from "./fidelity_records.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FILE = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
const MIN = 10_000n;

/** The gaps of the records, by the definition in docs/analysis.md (`allApi`: with the calls Kineto hides, as --all-api). */
function expected(bytes: Uint8Array, allApi = false) {
  const dump = readDump(bytes, allApi);
  const launch = new Map(dump.apis.map((a) => [a.correlation, a]));
  const byThread = new Map<string, ApiCall[]>();
  for (const a of dump.apis) {
    const k = `${a.pid}/${a.tid}`;
    byThread.set(k, [...(byThread.get(k) ?? []), a]);
  }
  const devices = [...new Set(dump.ops.filter((o) => o.kind !== "sync").map((o) => o.device))].sort((a, b) => a - b);
  return devices.map((device) => {
    const ops = dump.ops.filter((o) => o.kind !== "sync" && o.device === device).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    let end = ops[0].end;
    let busy = 0n;
    let seg = ops[0].start;
    const gaps: Array<Record<string, unknown>> = [];
    for (const o of ops.slice(1)) {
      if (o.start <= end) {
        if (o.end > end) end = o.end;
        continue;
      }
      busy += end - seg;
      const [a, b] = [end, o.start];
      if (b - a >= MIN) {
        const l = launch.get(o.correlation);
        const calls = l ? byThread.get(`${l.pid}/${l.tid}`)! : [];
        // In API: ns of [a, b) inside any call of the thread (calls may nest: count each ns once).
        const cuts = calls.filter((c) => c.start < b && c.end > a).map((c): [bigint, bigint] => [c.start > a ? c.start : a, c.end < b ? c.end : b]);
        cuts.sort((x, y) => (x[0] < y[0] ? -1 : 1));
        let inApi = 0n;
        let ce = -1n;
        for (const [x, y] of cuts) {
          if (x > ce) inApi += y - x;
          else if (y > ce) inApi += y - ce;
          if (y > ce) ce = y;
        }
        let best: ApiCall | undefined;
        let bestOv = 0n;
        for (const c of calls) {
          const ov = (c.end < b ? c.end : b) - (c.start > a ? c.start : a);
          if (ov > 0n && (ov > bestOv || (ov === bestOv && c.start < best!.start))) [best, bestOv] = [c, ov];
        }
        const ranges = l ? dump.ranges.filter((r) => r.pid === l.pid && r.tid === l.tid && r.start <= a && r.end >= b) : [];
        ranges.sort((x, y) => (x.start > y.start ? -1 : x.start < y.start ? 1 : Number(x.end - y.end)));
        gaps.push({
          start: a, dur: Number(b - a), next: o.correlation, tid: l?.tid, delay: l ? Number(l.start - a) : undefined,
          inApi: Number(inApi), call: best?.correlation, overlap: best ? Number(bestOv) : undefined, range: ranges[0]?.name ?? null,
        });
      }
      seg = o.start;
      end = o.end;
    }
    busy += end - seg;
    const span = end - ops[0].start;
    gaps.sort((x, y) => (y.dur as number) - (x.dur as number) || ((x.start as bigint) < (y.start as bigint) ? -1 : 1));
    return { device, span: Number(span), busy: Number(busy), gaps };
  });
}

test("the H100 sample's gaps equal the records'", async () => {
  const bytes = new Uint8Array(readFileSync(FILE));
  const want = expected(bytes);
  const got = gapsOf(await timelinePass(await createEngine(), memorySource(bytes), {}), Number(MIN));
  assert.equal(got.map((d) => [d.device, d.spanNs, d.busyNs, d.idleNs]), want.map((d) => [d.device, d.span, d.busy, d.span - d.busy]));
  for (const [i, d] of got.entries()) {
    const w = want[i];
    assert.ok(w.gaps.length > 100, `${w.gaps.length} gaps`);
    assert.equal(d.list.map((g) => ({
      start: g.startNs, dur: g.durNs, next: g.next.correlation, tid: g.launch?.tid, delay: g.launch?.delayNs,
      inApi: g.inApiNs, call: g.call?.correlation, overlap: g.call?.overlapNs, range: g.range,
    })), w.gaps);
    assert.is(d.gapNs, w.gaps.reduce((n, g) => n + (g.dur as number), 0));
    assert.is(d.inApiNs + d.betweenNs, d.gapNs);
    console.log(`gaps GPU ${d.device}: ${d.gaps} gaps ≥ 10 µs, ${(d.gapNs / 1e6).toFixed(3)} ms of ${(d.spanNs / 1e6).toFixed(3)} ms, ` +
      `host in API ${(d.inApiNs / 1e6).toFixed(3)} ms, between launches ${(d.betweenNs / 1e6).toFixed(3)} ms`);
  }
});

test("--all-api: a gap whose next op was launched by a driver call that starts no flow (JAX: cuMemsetD32Async, cuGraphLaunch) names that call, as its correlation id says", async () => {
  const bytes = new Uint8Array(readFileSync(join(ROOT, "test/fixtures/real/h100/jax_step.rawtrace")));
  const want = expected(bytes, true);
  const got = gapsOf(await timelinePass(await createEngine(), memorySource(bytes), { allApi: true }), Number(MIN));
  for (const [i, d] of got.entries()) {
    const w = want[i];
    assert.equal(d.list.map((g) => ({ start: g.startNs, next: g.next.correlation, tid: g.launch?.tid, inApi: g.inApiNs })),
      w.gaps.map((g) => ({ start: g.start, next: g.next, tid: g.tid, inApi: g.inApi })));
    assert.ok(d.list.every((g) => g.launch !== null), "every gap's next op has its launch call");
  }
});

test("rawtrace stats --gaps --csv / --json: one row per gap, the same gaps", async () => {
  const cli = join(ROOT, "dist/node/cli.js");
  const csv = execFileSync("node", [cli, "stats", FILE, "--gaps", "--csv"], { encoding: "utf8", maxBuffer: 64 << 20 }).trimEnd().split("\n");
  assert.is(csv[0], GAPS_CSV_COLUMNS.join(","));
  const want = expected(new Uint8Array(readFileSync(FILE)));
  const rows = csv.slice(1);
  assert.is(rows.length, want.reduce((n, d) => n + d.gaps.length, 0));
  const first = want[0].gaps[0];
  // file,device,start_ns,dur_ns,launch_delay_ns,in_api_ns,… (the longest gap first)
  assert.equal(rows[0].split(",").slice(1, 6), [String(want[0].device), String(first.start), String(first.dur), String(first.delay), String(first.inApi)]);
  const doc = JSON.parse(execFileSync("node", [cli, "stats", FILE, "--gaps", "--gap-min", "1000", "--json"], { encoding: "utf8", maxBuffer: 64 << 20 }));
  const g = doc.files[0].gaps;
  assert.is(g.minGapNs, 1_000_000);
  assert.equal(g.devices[0].list.map((x: { durNs: number }) => x.durNs), want[0].gaps.filter((x) => (x.dur as number) >= 1_000_000).map((x) => x.dur));
  assert.throws(() => execFileSync("node", [cli, "stats", FILE, "--gaps", "--steps", "train_step", "--csv"], { stdio: ["ignore", "pipe", "pipe"] }),
    (e: { status: number; stderr: Buffer }) => e.status === 2 && /one table: --steps or --gaps/.test(e.stderr.toString()));
});

test("rawtrace stats --steps --csv: one row per step and device, the figures of --json", () => {
  const cli = join(ROOT, "dist/node/cli.js");
  const csv = execFileSync("node", [cli, "stats", FILE, "--steps", "^train_step$", "--csv"], { encoding: "utf8" }).trimEnd().split("\n");
  const doc = JSON.parse(execFileSync("node", [cli, "stats", FILE, "--steps", "^train_step$", "--json"], { encoding: "utf8", maxBuffer: 64 << 20 }));
  const steps = doc.files[0].steps as Array<Record<string, number | string>>;
  assert.is(csv[0], "file,step,name,device,host_start_ns,host_ns,step_ns,busy_pct,kernel_pct,memcpy_pct,memset_pct,idle_pct,kernels,launch_p50_ns,launch_p99_ns");
  assert.is(csv.length - 1, steps.length);
  assert.is(steps.length, 7);
  csv.slice(1).forEach((line, i) => {
    const f = line.split(",");
    const s = steps[i];
    assert.equal(f.slice(1, 7), [s.step, s.name, s.device, s.hostStartNs, s.hostNs, s.spanNs].map(String));
    assert.is(Number(f[7]), s.busyPct);
    assert.is(Number(f[12]), s.kernels);
  });
});

test.run();
