// SPDX-License-Identifier: MIT
/**
 * The log directories rawtrace writes, opened the way `xprof --logdir <dir>` opens them: XProf 2.24.2's own profile
 * plugin and web app (test/interop/xprof_logdir_check.py, in-process, no sockets) lists the sessions, their tools and
 * hosts, then renders trace_viewer and overview_page for each host. Covers scripts/sample.sh's out/sample_xprof (what
 * the README tells a new user to open), the default log directory of `rawtrace convert --format xspace` and the
 * one-file-per-host log directory of `rawtrace merge --format xspace`.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { sampleDump } from "../helpers/sample_dump.js";
import { xprofPython } from "../helpers/interop.js";

interface HostView {
  host: string;
  /** Complete ("X") events per trace-viewer process (plane) name. */
  planes: Record<string, number>;
  overview: Record<string, string | null>;
}
interface RunView {
  run: string;
  tools: string[];
  hosts: HostView[];
}
interface LogdirView {
  ok: boolean;
  failures: string[];
  runs: RunView[];
}

const work = mkdtempSync(join(tmpdir(), "rawtrace-xprof-logdir-"));

/** What XProf lists and renders for `logdir`. */
function openLogdir(logdir: string): LogdirView {
  const r = spawnSync(xprofPython(), ["test/interop/xprof_logdir_check.py", logdir], { encoding: "utf8", maxBuffer: 64 << 20, timeout: 300_000 });
  const last = r.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(last) as LogdirView;
  } catch {
    throw new Error(`checker printed no result (rc ${r.status}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-4000)}`);
  }
}

const RUN_NAME = /^\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d$/;

test("scripts/sample.sh: XProf lists out/sample_xprof's session and renders its trace viewer and overview page", () => {
  const out = join(work, "sample_out");
  const r = spawnSync("bash", ["scripts/sample.sh", "--no-setup", out], { encoding: "utf8", timeout: 300_000 });
  assert.is(r.status, 0, r.stderr);
  const logdir = join(out, "sample_xprof");
  assert.ok(r.stdout.includes(`xprof --logdir ${logdir}`), `the summary names the log directory to open:\n${r.stdout}`);
  assert.not.ok(existsSync(join(out, "sample.xplane.pb")), "no loose .xplane.pb outside the layout");

  // A relative --logdir, as the README writes it (xprof makes it absolute).
  const view = openLogdir(relative(process.cwd(), logdir));
  assert.ok(view.ok, view.failures.join("\n"));
  assert.is(view.runs.length, 1, `one session: ${JSON.stringify(view.runs.map((x) => x.run))}`);
  const [run] = view.runs;
  assert.match(run.run, RUN_NAME);
  assert.equal(readdirSync(join(logdir, "plugins", "profile")), [run.run], "the session XProf lists is the directory written");
  for (const t of ["overview_page", "kernel_stats"]) assert.ok(run.tools.includes(t), `${t} in ${run.tools}`);
  assert.ok(run.tools.some((t) => t.startsWith("trace_viewer")), `a trace viewer in ${run.tools}`);
  assert.equal(run.hosts.map((h) => h.host), ["vm"], "the host the sample was recorded on");

  // Every event of the sample's Chrome JSON shows in XProf's trace viewer on the matching plane (the NVTX ranges
  // Kineto projects onto GPU streams, gpu_user_annotation, exist in Chrome JSON only: docs/xspace.md).
  const trace = JSON.parse(readFileSync(join(out, "sample.json"), "utf8")) as { traceEvents: { ph: string; cat?: string; pid: number }[] };
  const device = new Set(["kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"]);
  const host = new Set(["cuda_runtime", "cuda_driver", "overhead", "user_annotation"]);
  const x = trace.traceEvents.filter((e) => e.ph === "X");
  const onDevice = x.filter((e) => device.has(e.cat ?? "")).length;
  const onHost = x.filter((e) => host.has(e.cat ?? "")).length;
  assert.is(onDevice + onHost + x.filter((e) => e.cat === "gpu_user_annotation").length, x.length, "every category accounted for");
  assert.ok(onDevice > 400 && onHost > 1000, `${onDevice} device, ${onHost} host events`);
  const [h] = run.hosts;
  assert.equal(h.planes, { "/host:CPU": onHost, "/device:GPU:0": onDevice });

  // The overview page of an H100 without framework step markers (docs/xspace.md, "Not done").
  assert.is(h.overview.device_type, "Nvidia GPU (Hopper)");
  assert.is(h.overview.hardware_type, "GPU");
  assert.is(h.overview.host_count, "1");
  assert.match(h.overview.statement ?? "", /No step time measured/);
  console.log(`  sample: session ${run.run}, host vm, trace viewer ${onHost} host + ${onDevice} device events, tools ${run.tools.length}`);
});

test("convert --format xspace without -o: the default log directory next to the input is one session XProf lists", () => {
  const dir = join(work, "default");
  mkdirSync(dir, { recursive: true });
  const dump = join(dir, "run.rawtrace");
  writeFileSync(dump, sampleDump());
  const r = spawnSync(process.execPath, ["dist/node/cli.js", "convert", dump, "--format", "xspace"], { encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  const view = openLogdir(join(dir, "run_xprof"));
  assert.ok(view.ok, view.failures.join("\n"));
  assert.equal(view.runs.map((x) => x.run), ["2026_05_28_20_26_40"], "run named after the profile start (UTC)");
  const [h] = view.runs[0].hosts;
  assert.is(h.host, "gpu-node-1");
  assert.ok(h.planes["/device:GPU:0"] >= 4 && h.planes["/host:CPU"] >= 2, JSON.stringify(h.planes));
  assert.is(h.overview.hardware_type, "GPU");
});

test("merge --format xspace of two hosts: one session, one host each, every host's trace rendered", () => {
  const dir = join(work, "hosts");
  mkdirSync(dir, { recursive: true });
  const a = join(dir, "a.rawtrace");
  const b = join(dir, "b.rawtrace");
  writeFileSync(a, sampleDump({ hostname: "node-a" }));
  writeFileSync(b, sampleDump({ hostname: "node-b" }));
  const logdir = join(dir, "logs");
  const r = spawnSync(process.execPath, ["dist/node/cli.js", "merge", a, b, "--format", "xspace", "-o", logdir], { encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  const view = openLogdir(logdir);
  assert.ok(view.ok, view.failures.join("\n"));
  assert.is(view.runs.length, 1, "both hosts in one session (the shared profile start)");
  const { hosts } = view.runs[0];
  assert.equal(hosts.map((h) => h.host), ["node-a", "node-b"]);
  assert.equal(hosts[0].planes, hosts[1].planes, "the same dump on each host");
  assert.ok(hosts[0].planes["/device:GPU:0"] >= 4, JSON.stringify(hosts[0].planes));
  assert.is(hosts[0].overview.host_count, "1");
});

test("the old flat file (out/sample.xplane.pb) is no session: XProf lists nothing, which is why the layout matters", () => {
  const dir = join(work, "flat");
  mkdirSync(dir, { recursive: true });
  const [run] = readdirSync(join(work, "default", "run_xprof", "plugins", "profile"));
  copyFileSync(join(work, "default", "run_xprof", "plugins", "profile", run, "gpu-node-1.xplane.pb"), join(dir, "sample.xplane.pb"));
  const view = openLogdir(dir);
  assert.ok(view.ok, view.failures.join("\n"));
  assert.equal(view.runs, []);
});

test.after(() => {
  rmSync(work, { recursive: true, force: true });
});

test.run();
