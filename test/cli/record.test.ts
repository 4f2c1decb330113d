/**
 * `rawtrace record` (src/node/record.ts) through the built command line (dist/node/cli.js), with the collectors'
 * test doubles: the CUDA collector (cu13) on the CUPTI fake driven by test/collectors/cuda_app.c, the ROCm collector
 * on the rocprofiler-sdk fake driven by test/collectors/rocm_app.c, the HPU collector (LD_PRELOAD) on the libSynapse.so
 * double driven by test/collectors/hpu_app.c. The CUDA and ROCm dumps `record` leaves must convert, the HPU dump must
 * hold its trace chunks; exit codes and signals pass through; SIGTERM is forwarded; the vendor is detected from a
 * folder of fake runtime libraries; bad vendors and missing collectors are clear errors.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const CUDA = join(ROOT, "build/c/cuda");
const CUDA_LIB = join(CUDA, "cu13", "librawtrace_cuda.so");
const CUPTI_FAKE = join(CUDA, "cu13", "libcupti_fake.so");
const CUDA_APP = join(CUDA, "cuda_app");
const ROCM = join(ROOT, "build/c/rocm");
const ROCM_LIB = join(ROCM, "librawtrace_rocm.so");
const ROCM_SDK = join(ROCM, "fake/librocprofiler-sdk.so");
const ROCM_APP = join(ROCM, "rocm_app");
const HPU = join(ROOT, "build/c/hpu");
const HPU_LIB = join(HPU, "librawtrace_hpu.so");
const HPU_APP = join(HPU, "hpu_app");

let tmp = "";

/** The caller's environment without anything that steers a collector or `record`, plus `extra`. */
function envWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) {
    if (/^(RAWTRACE_|FAKE_|RT_APP_|ROCP_)/.test(k) || /^(CUDA_INJECTION64_PATH|NVTX_INJECTION64_PATH|LD_PRELOAD|RANK|LOCAL_RANK|HABANA_PROFILE)$/.test(k)) {
      delete env[k];
    }
  }
  return { ...env, ...extra };
}

const record = (args: string[], extra: Record<string, string> = {}) =>
  spawnSync(process.execPath, [CLI, "record", ...args], { cwd: tmp, env: envWith(extra), encoding: "utf8", timeout: 120_000 });

const cudaEnv = { RAWTRACE_CUPTI_LIB: CUPTI_FAKE, RAWTRACE_CUDA_DRIVER_LIB: CUPTI_FAKE };
/** cuda_app loads what CUDA_INJECTION64_PATH names and calls InitializeInjection, as the CUDA driver does. */
const cudaApp = (scenario: string) => ["sh", "-c", 'RT_APP_COLLECTOR="$CUDA_INJECTION64_PATH" exec "$0" "$1"', CUDA_APP, scenario];

function convert(file: string): { kernels: number; events: number } {
  const out = `${file}.json`;
  const r = spawnSync(process.execPath, [CLI, "convert", file, "-o", out], { encoding: "utf8", timeout: 120_000 });
  assert.is(r.status, 0, r.stderr);
  const doc = JSON.parse(readFileSync(out, "utf8")) as { traceEvents: { cat?: string }[] };
  return { kernels: doc.traceEvents.filter((e) => e.cat === "kernel").length, events: doc.traceEvents.length };
}

test.before(() => {
  tmp = mkdtempSync(join(tmpdir(), "rawtrace-record-"));
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/cuda"), "TAG=cu13", "test-bins"], { stdio: "pipe" });
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/rocm"), "test-bins"], { stdio: "pipe" });
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/xpu"), "test-bins"], { stdio: "pipe" }); // collector + PTI double
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/hpu"), "test-bins"], { stdio: "pipe" });
});

test.after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test("--vendor cuda: the program runs with the collector injected, the dump converts", () => {
  const dir = join(tmp, "cuda");
  const r = record(["--vendor", "cuda", "-o", dir, "--", ...cudaApp("basic")], cudaEnv);
  assert.is(r.status, 0, r.stderr);
  const loaded = r.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)).find((e) => e.ev === "loaded");
  assert.ok(loaded, r.stdout);
  assert.is(loaded.rc, 1, "InitializeInjection succeeded (returns 1, as the CUDA driver expects)");
  const dumps = readdirSync(dir);
  assert.equal(dumps, [`rawtrace-${hostname()}-rank0-${loaded.pid}.rawtrace`]);
  assert.match(r.stderr, `recording cuda with ${CUDA_LIB}`);
  assert.match(r.stderr, `rawtrace convert ${join(dir, dumps[0])}`);
  const { kernels } = convert(join(dir, dumps[0]));
  assert.ok(kernels > 0, "kernels in the converted trace");
});

test("--vendor cuda: RANK names the file, two processes list both dumps and the merge command", () => {
  const dir = join(tmp, "ranks");
  const r2 = record(["--vendor", "cuda", "-o", dir, "--", "sh", "-c",
    'export RT_APP_COLLECTOR="$CUDA_INJECTION64_PATH"; RANK=0 "$0" plain >/dev/null && RANK=1 "$0" plain >/dev/null', CUDA_APP], cudaEnv);
  assert.is(r2.status, 0, r2.stderr);
  const dumps = readdirSync(dir).filter((f) => /rank[01]-/.test(f));
  assert.ok(dumps.some((f) => f.includes("-rank0-")) && dumps.some((f) => f.includes("-rank1-")), dumps.join(" "));
  assert.match(r2.stderr, "2 dumps in");
  assert.match(r2.stderr, "rawtrace merge");
  for (const f of dumps) assert.ok(convert(join(dir, f)).kernels > 0, f);
});

test("--vendor rocm: ROCP_TOOL_LIBRARIES attaches the collector, the dump converts", () => {
  const dir = join(tmp, "rocm");
  const r = record(["--vendor", "rocm", "-o", dir, "--", ROCM_APP, "basic"],
    { RT_APP_SDK: ROCM_SDK, RT_APP_COLLECTOR: ROCM_LIB, FAKE_ROCP_SDK: "1.0", RT_APP_STEPS: "3" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, `recording rocm with ${ROCM_LIB}`);
  const dumps = readdirSync(dir);
  assert.is(dumps.length, 1, dumps.join(" "));
  const { kernels } = convert(join(dir, dumps[0]));
  assert.ok(kernels > 0, "kernels in the converted trace");
});

test("--vendor xpu: LD_PRELOAD attaches the collector to a PTI program (the PTI and Level Zero doubles), the dump converts", () => {
  const dir = join(tmp, "xpu");
  const xpu = join(ROOT, "build/c/xpu");
  const r = record(["--vendor", "xpu", "-o", dir, "--", join(xpu, "xpu_app"), "run"],
    { LD_LIBRARY_PATH: join(xpu, "fake"), RAWTRACE_PTI_LIB: join(xpu, "fake/libpti_view.so"), FAKE_PTI_VERSION: "1.2.0" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, `recording xpu with ${join(xpu, "librawtrace_xpu.so")}`);
  const dumps = readdirSync(dir);
  assert.is(dumps.length, 1, dumps.join(" "));
  const file = join(dir, dumps[0]);
  assert.is(readFileSync(file).readUInt32LE(16 + 24), 4, "HEADER vendor 4 (Intel XPU)");
  const { kernels } = convert(file);
  assert.ok(kernels > 0, "kernels in the converted trace");
});

/** Chunk types of a dump, read straight from the container (24-byte headers, payloads padded to 8). */
function chunkTypes(file: string): number[] {
  const b = readFileSync(file);
  const types: number[] = [];
  for (let o = 16; o + 24 <= b.length; o += 24 + b.readUInt32LE(o + 12) + ((8 - (b.readUInt32LE(o + 12) % 8)) % 8)) {
    types.push(b.readUInt16LE(o + 4));
  }
  return types;
}

test("--vendor hpu: LD_PRELOAD and HABANA_PROFILE=1 attach the collector to a Synapse program (the libSynapse double)", () => {
  const dir = join(tmp, "hpu");
  const r = record(["--vendor", "hpu", "-o", dir, "--", HPU_APP, "run"], { LD_LIBRARY_PATH: join(HPU, "fake"), RT_APP_STEPS: "5" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, `recording hpu with ${HPU_LIB}`);
  const app = r.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  assert.is(app[0].collector, 1, "the collector is in the process");
  assert.is(app.find((l) => "env" in l)?.env, "1", "Synapse initialized with HABANA_PROFILE=1");
  const dumps = readdirSync(dir);
  assert.equal(dumps, [`rawtrace-${hostname()}-rank0-${app[0].pid}.rawtrace`]);
  const file = join(dir, dumps[0]);
  assert.is(readFileSync(file).readUInt32LE(16 + 24), 5, "HEADER vendor 5 (Habana)");
  const types = chunkTypes(file);
  assert.ok(types.includes(14) && types.includes(15), `HPU_TRACE and HPU_DEVICE in ${types.join(",")}`);
  assert.is(types[types.length - 1], 10, "END");
  assert.match(r.stderr, `rawtrace convert ${file}`);
  // a HABANA_PROFILE the user set (not 0) is kept
  const keep = record(["--vendor", "hpu", "-o", join(tmp, "hpu-env"), "--", "sh", "-c", 'echo "$HABANA_PROFILE"'],
    { HABANA_PROFILE: "profile_api_light" });
  assert.is(keep.stdout.trim(), "profile_api_light");
});

test("exit codes pass through; a program ended by SIGINT, SIGTERM or SIGHUP ends record by the same signal (a shell loop stops), others 128 + n; a missing command 127", () => {
  const dir = join(tmp, "codes");
  assert.is(record(["--vendor", "cuda", "-o", dir, "--", "sh", "-c", "exit 7"]).status, 7);
  assert.is(record(["--vendor", "cuda", "-o", dir, "--", "sh", "-c", "exit 0"]).status, 0);
  for (const sig of ["TERM", "INT", "HUP"]) {
    const r = record(["--vendor", "cuda", "-o", dir, "--", "sh", "-c", `kill -${sig} $$`]);
    assert.is(r.signal, `SIG${sig}`, `${sig}: status ${r.status} ${r.stderr}`);
    assert.match(r.stderr, "no dump was written", "its report is printed before");
  }
  assert.is(record(["--vendor", "cuda", "-o", dir, "--", "sh", "-c", "kill -USR1 $$"]).status, 138);
  const r = record(["--vendor", "cuda", "-o", dir, "--", "./no-such-program-here"]);
  assert.is(r.status, 127);
  assert.match(r.stderr, "command not found");
  const none = record(["--vendor", "cuda", "-o", dir, "--", "true"]);
  assert.match(none.stderr, "no dump was written");
});

test("Ctrl-C (SIGINT to the terminal's whole process group) stops a shell loop around record, as around the program itself", async () => {
  const dir = join(tmp, "loop");
  const loop = spawn("bash", ["-c", `for i in 1 2 3; do "${process.execPath}" "${CLI}" record --vendor cuda -o "${dir}" -- sleep 30; echo "went on $i"; done`],
    { cwd: tmp, env: envWith({}), detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  loop.stdout!.on("data", (b: Buffer) => (out += b));
  const guard = setTimeout(() => process.kill(-loop.pid!, "SIGKILL"), 60_000);
  await new Promise<void>((ready) => loop.stderr!.on("data", (b: Buffer) => {
    err += b;
    if (err.includes("recording cuda")) ready();
  }));
  // Until `sleep` runs in the loop's process group (before: 200 ms after the message, which a slow machine could
  // spend before record started it); the deadline only turns a hang into a failure.
  const sleeping = () => readdirSync("/proc").some((p) => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const [comm, rest] = [stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), stat.slice(stat.lastIndexOf(")") + 2).split(" ")];
      return comm === "sleep" && Number(rest[2]) === loop.pid; // fields after comm: state, ppid, pgrp
    } catch {
      return false; // not a process, or gone
    }
  });
  for (let i = 0; i < 6000 && !sleeping(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(sleeping(), "sleep runs in the loop's process group");
  process.kill(-loop.pid!, "SIGINT");
  const [code, signal] = await new Promise<[number | null, string | null]>((done) => loop.on("close", (c, g) => done([c, g])));
  clearTimeout(guard);
  assert.is(out, "", "the loop did not go on");
  assert.ok(signal === "SIGINT" || code === 130, `bash ended by the interrupt: ${code} ${signal}`);
});

test("the printed commands name only this run's dumps, quoted: pasted into a shell they convert and merge them (a folder with a space and a '%', used twice)", () => {
  const dir = join(tmp, "sp ace 100%");
  const twoRanks = ["--vendor", "cuda", "-o", dir, "--", "sh", "-c",
    'export RT_APP_COLLECTOR="$CUDA_INJECTION64_PATH"; RANK=0 "$0" plain >/dev/null && RANK=1 "$0" plain >/dev/null', CUDA_APP];
  assert.is(record(twoRanks, cudaEnv).status, 0);
  const r = record(twoRanks, cudaEnv);
  assert.is(r.status, 0, r.stderr);
  assert.is(readdirSync(dir).filter((f) => f.endsWith(".rawtrace")).length, 4, "two runs, two ranks each: the '%' of the folder was not expanded");
  const lines = r.stderr.split("\n").map((l) => l.trim());
  const merge = lines.find((l) => l.startsWith("rawtrace merge "))!.replace(/ +\(one trace for all ranks\)$/, "");
  const conv = lines.find((l) => l.startsWith("rawtrace convert "))!;
  const sh = (cmd: string) => spawnSync("sh", ["-c", cmd.replace(/^rawtrace /, `"${process.execPath}" "${CLI}" `)], { cwd: tmp, encoding: "utf8", timeout: 60_000 });
  const m = sh(merge);
  assert.is(m.status, 0, `${merge}: ${m.stderr}`);
  assert.is((JSON.parse(readFileSync(join(dir, "job.json"), "utf8")).rawtrace.merge.ranks as unknown[]).length, 2, "this run's two ranks only");
  const c = sh(conv);
  assert.is(c.status, 0, `${conv}: ${c.stderr}`);
  assert.is(readdirSync(dir).filter((f) => f.endsWith(".json") && f !== "job.json").length, 2);
});

test("two runs writing into one folder at the same time: each lists only its own dumps, and leaves no marks behind", async () => {
  const dir = join(tmp, "together");
  const sync = join(tmp, "together-sync");
  mkdirSync(sync, { recursive: true });
  // Both runs are up before either makes its dump, and neither ends before both dumps exist: a listing by what
  // appeared in the folder during the run would give each run both dumps.
  const wait = (f: string) => `while [ ! -e "${sync}/${f}" ]; do sleep 0.02; done`;
  const script = (me: string, other: string, rank: number) =>
    `touch "${sync}/${me}_up"; ${wait(`${other}_up`)}; RT_APP_COLLECTOR="$CUDA_INJECTION64_PATH" RANK=${rank} "$0" plain >/dev/null; ` +
    `touch "${sync}/${me}_done"; ${wait(`${other}_done`)}`;
  const run = (me: string, other: string, rank: number) => new Promise<{ status: number | null; stderr: string }>((done) => {
    const child = spawn(process.execPath, [CLI, "record", "--vendor", "cuda", "-o", dir, "--", "sh", "-c", script(me, other, rank), CUDA_APP],
      { cwd: tmp, env: envWith(cudaEnv), stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("close", (status) => {
      clearTimeout(timer);
      done({ status, stderr });
    });
  });
  const [a, b] = await Promise.all([run("a", "b", 0), run("b", "a", 1)]);
  assert.is(a.status, 0, a.stderr);
  assert.is(b.status, 0, b.stderr);
  for (const [r, rank] of [[a, 0], [b, 1]] as const) {
    assert.match(r.stderr, "1 dump in", r.stderr);
    const listed = r.stderr.split("\n").filter((l) => /^ +rawtrace-.*\.rawtrace$/.test(l)).map((l) => l.trim());
    assert.is(listed.length, 1, r.stderr);
    assert.match(listed[0], `-rank${rank}-`);
    assert.match(r.stderr, new RegExp(`rawtrace convert .*rank${rank}-`));
    assert.not.match(r.stderr, new RegExp(`rank${1 - rank}-`));
  }
  assert.equal(readdirSync(dir).sort(), readdirSync(dir).filter((f) => f.endsWith(".rawtrace")).sort(), "no marks folder left");
  assert.is(readdirSync(dir).length, 2);
});

test("record's options end where the command starts: the program's own -o and --epochs reach it, with or without --", () => {
  const dir = join(tmp, "args");
  for (const sep of [[], ["--"]]) {
    const r = record(["--vendor", "cuda", "-o", dir, ...sep, "sh", "-c", 'echo "$@"', "prog", "-o", "zz", "--epochs", "3"]);
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout.trim(), "-o zz --epochs 3");
    assert.not.ok(existsSync(join(tmp, "zz")));
  }
});

test("an output folder where no file can be made is an error before the program runs", () => {
  const r = record(["--vendor", "cuda", "-o", "/proc", "--", "sh", "-c", "echo ran"]);
  assert.is(r.status, 4, r.stderr);
  assert.match(r.stderr, "/proc: the collector could not write its dumps there");
  assert.is(r.stdout, "", "the program did not run");
});

test("--vendor hpu with the collector in a folder whose name has a space (LD_PRELOAD splits there): attached through a link", () => {
  const spaced = join(tmp, "col lectors");
  mkdirSync(spaced, { recursive: true });
  writeFileSync(join(spaced, "librawtrace_hpu.so"), readFileSync(HPU_LIB));
  const dir = join(tmp, "hpu-space");
  const r = record(["--vendor", "hpu", "-o", dir, "--", HPU_APP, "run"],
    { LD_LIBRARY_PATH: join(HPU, "fake"), RT_APP_STEPS: "3", RAWTRACE_COLLECTOR_DIR: spaced });
  assert.is(r.status, 0, r.stderr);
  const app = r.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  assert.is(app[0].collector, 1, `the collector is in the process: ${r.stderr}`);
  assert.is(readdirSync(dir).length, 1);
  assert.equal(readdirSync(tmpdir()).filter((f) => f.startsWith("rawtrace-collector-")), [], "the link's folder is removed");
});

/**
 * Runs `record` on a program that exits with `code` on `sig` (a node script: a shell cannot trap a signal it
 * inherited as ignored), sends `sig` to rawtrace once the program is ready. Killed after 60 s (resolves null).
 */
function forwarded(sig: NodeJS.Signals, code: number, dir = join(tmp, "forward"), onSignal = ""): Promise<number | null> {
  const script = `process.on(${JSON.stringify(sig)}, () => { ${onSignal} process.exit(${code}); }); console.log("ready"); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, [CLI, "record", "--vendor", "cuda", "-o", dir, "--", process.execPath, "-e", script],
    { cwd: tmp, env: envWith({}), stdio: ["ignore", "pipe", "pipe"] });
  const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((done) => {
    let sent = false;
    child.stdout.on("data", (b: Buffer) => {
      if (!sent && b.toString().includes("ready")) {
        sent = true;
        child.kill(sig);
      }
    });
    child.on("close", (c) => {
      clearTimeout(guard);
      done(c);
    });
  });
}

test("SIGTERM and SIGINT sent to rawtrace reach the program", async () => {
  assert.is(await forwarded("SIGTERM", 42), 42);
  assert.is(await forwarded("SIGINT", 43), 43);
});

test("Ctrl-C keeps the output folder record made: the program may write its dump there after the signal", async () => {
  const dir = join(tmp, "late");
  const late = `require("node:fs").writeFileSync(${JSON.stringify(join(dir, "late.rawtrace"))}, "d");`;
  assert.is(await forwarded("SIGINT", 0, dir, late), 0);
  assert.ok(existsSync(join(dir, "late.rawtrace")), "the dump written after the signal is there");
});

test("--vendor auto: detected from a folder of runtime libraries; none or several is a usage error", () => {
  const libs = join(tmp, "libs");
  const mk = (name: string, files: string[]) => {
    const d = join(libs, name);
    mkdirSync(d, { recursive: true });
    for (const f of files) writeFileSync(join(d, f), "");
    return d;
  };
  const show = ["--", "sh", "-c", 'echo "cuda=$CUDA_INJECTION64_PATH rocm=$ROCP_TOOL_LIBRARIES out=$RAWTRACE_OUTPUT"'];
  const out = join(tmp, "auto");
  let r = record(["-o", out, ...show], { RAWTRACE_LIB_SEARCH: mk("nv", ["libcupti.so.13", "libfoo.so"]) });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, `cuda=${CUDA_LIB} rocm= out=${join(out, "rawtrace-%h-rank%r-%p.rawtrace")}`);
  r = record(["--vendor", "auto", "-o", out, ...show], { RAWTRACE_LIB_SEARCH: mk("amd", ["libamdhip64.so.6"]) });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, `cuda= rocm=${ROCM_LIB} `);
  r = record(["-o", out, ...show], { RAWTRACE_LIB_SEARCH: mk("none", ["libicudata.so.72", "libcudart.so.12"]) });
  assert.is(r.status, 2);
  assert.match(r.stderr, "no GPU runtime found");
  assert.match(r.stderr, "--vendor");
  const noDevs = join(tmp, "nodev");
  mkdirSync(noDevs, { recursive: true });
  r = record(["-o", out, ...show],
    { RAWTRACE_LIB_SEARCH: `${join(libs, "nv")}:${join(libs, "amd")}`, RAWTRACE_DEV_DIR: noDevs, RAWTRACE_SYS_DIR: noDevs });
  assert.is(r.status, 2);
  assert.match(r.stderr, "several GPU runtimes found");
  // Several vendors' libraries but one vendor's device nodes (an H100 box whose Python wheels carry a ROCm library):
  // the device decides.
  const both = `${join(libs, "nv")}:${join(libs, "amd")}`;
  const devs = join(tmp, "dev");
  mkdirSync(devs, { recursive: true });
  writeFileSync(join(devs, "nvidiactl"), "");
  r = record(["-o", out, ...show], { RAWTRACE_LIB_SEARCH: both, RAWTRACE_DEV_DIR: devs, RAWTRACE_SYS_DIR: devs });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, `cuda=${CUDA_LIB} rocm= `);
  writeFileSync(join(devs, "kfd"), "");
  r = record(["-o", out, ...show], { RAWTRACE_LIB_SEARCH: both, RAWTRACE_DEV_DIR: devs, RAWTRACE_SYS_DIR: devs });
  assert.is(r.status, 2);
  assert.match(r.stderr, "several GPU runtimes found");
  r = record(["-o", out, "--", "sh", "-c", 'echo "preload=$LD_PRELOAD profile=$HABANA_PROFILE"'],
    { RAWTRACE_LIB_SEARCH: mk("gaudi", ["libSynapse.so"]) });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, `preload=${HPU_LIB} profile=1`);
});

test("bad vendor, missing collector, missing command", () => {
  let r = record(["--vendor", "nvidia", "--", "true"]);
  assert.is(r.status, 2);
  assert.match(r.stderr, "unknown vendor 'nvidia'");
  r = record(["--vendor", "cuda"]);
  assert.is(r.status, 2);
  assert.match(r.stderr, "no command to run");
  const empty = join(tmp, "empty-collectors");
  mkdirSync(empty, { recursive: true });
  r = record(["--vendor", "xpu", "--", "true"], { RAWTRACE_COLLECTOR_DIR: empty });
  assert.is(r.status, 1);
  assert.match(r.stderr, `XPU collector is not built: none of ${join(empty, "librawtrace_xpu.so")}`);
  // The built XPU collector is preloaded (collectors/xpu, LD_PRELOAD).
  r = record(["--vendor", "xpu", "-o", join(tmp, "xdir"), "--", "sh", "-c", 'echo "$LD_PRELOAD"']);
  assert.is(r.status, 0, r.stderr);
  assert.ok(r.stdout.trim().endsWith("build/c/xpu/librawtrace_xpu.so"), r.stdout);
  r = record(["--vendor", "hpu", "--", "true"], { RAWTRACE_COLLECTOR_DIR: empty });
  assert.is(r.status, 1);
  assert.match(r.stderr, `HPU collector is not built: none of ${join(empty, "librawtrace_hpu.so")}`);
  assert.match(r.stderr, "make -C collectors hpu");
  r = record(["--vendor", "cuda", "--", "true"], { RAWTRACE_COLLECTOR_DIR: empty });
  assert.is(r.status, 1);
  assert.match(r.stderr, `CUDA collector is not built: none of ${join(empty, "librawtrace_cuda.so")}`);
  // RAWTRACE_COLLECTOR_DIR is used when set
  r = record(["--vendor", "cuda", "-o", join(tmp, "cdir"), "--", "sh", "-c", 'echo "$CUDA_INJECTION64_PATH"'],
    { RAWTRACE_COLLECTOR_DIR: join(CUDA, "cu13") });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout.trim(), CUDA_LIB);
});

test("--vendor cuda: NVTX ranges through the collector (NVTX_INJECTION64_PATH, nvtx kinds) unless the user chose", () => {
  const show = ["--", "sh", "-c", 'echo "nvtx=$NVTX_INJECTION64_PATH kinds=$RAWTRACE_ACTIVITIES"'];
  let r = record(["--vendor", "cuda", "-o", join(tmp, "nv1"), ...show]);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout.trim(), `nvtx=${CUDA_LIB} kinds=default,nvtx`);
  r = record(["--vendor", "cuda", "-o", join(tmp, "nv2"), ...show],
    { NVTX_INJECTION64_PATH: "/opt/cupti/libcupti.so.13", RAWTRACE_ACTIVITIES: "default" });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout.trim(), "nvtx=/opt/cupti/libcupti.so.13 kinds=default");
});

test.run();
