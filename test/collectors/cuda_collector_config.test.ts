/**
 * The CUDA collector (collectors/cuda) without a GPU: its settings and outputs, and the errors they and CUPTI can
 * meet. A FIFO nobody reads or another process writes, RAWTRACE_PROCESS, settings that cannot work, two processes on
 * one RAWTRACE_OUTPUT, RAWTRACE_CHECKSUM, /dev/full, a write error mid-run, a CUPTI error: each says why in one line
 * and none reaches the program. Setup and helpers: cuda_harness.ts.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  APP, envFor, lib, dir, runSync, runAsync, outPath, ok, one, convert, byCat, T, chunks, readLog, cudaSuite,
} from "./cuda_harness.js";

// ---- setup -----------------------------------------------------------------------------------------------------

cudaSuite(test);

// ---- outputs and settings ------------------------------------------------------------------------------------------

test("a FIFO nobody reads: the program is not blocked; one line says why nothing is recorded", () => {
  const fifo = join(dir, "unread.fifo");
  execFileSync("mkfifo", [fifo]);
  const run = runSync("cu13", "plain", "fifo", { RAWTRACE_OUTPUT: fifo });
  ok(run, "FIFO without reader");
  const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0], /cannot create .*unread\.fifo: no process is reading that FIFO/);
});

test("a FIFO another process writes (a child with the same RAWTRACE_OUTPUT): one line, nothing interleaved into it", async () => {
  const fifo = join(dir, "taken.fifo");
  execFileSync("mkfifo", [fifo]);
  // A shell that opens the FIFO (read and write: it does not block) and holds the writer's lock, as a first collector does.
  const holder = spawn("bash", ["-c", `exec 3<>'${fifo}'; flock -n 3 && echo locked && sleep 30`], { stdio: ["ignore", "pipe", "ignore"] });
  try {
    await new Promise<void>((res, rej) => {
      holder.stdout!.on("data", (d: Buffer) => (d.toString().includes("locked") ? res() : undefined));
      holder.on("exit", () => rej(new Error("the lock holder ended")));
    });
    const run = runSync("cu13", "plain", "taken", { RAWTRACE_OUTPUT: fifo });
    ok(run, "FIFO taken");
    const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
    assert.is(lines.length, 1, run.stderr);
    assert.match(lines[0], /cannot create .*taken\.fifo: another process writes that FIFO/);
  } finally {
    holder.kill("SIGKILL");
  }
});

test("RAWTRACE_PROCESS: a program it does not name is not traced, silently; one it names is", () => {
  const other = runSync("cu13", "plain", "process-other", { RAWTRACE_PROCESS: "python*" });
  ok(other, "not named");
  assert.not.match(other.stderr, /rawtrace\[/);
  assert.not.ok(existsSync(outPath("cu13", "process-other", other.pid)));
  const mine = runSync("cu13", "plain", "process-mine", { RAWTRACE_PROCESS: "python*,cuda_app" });
  ok(mine, "named");
  assert.ok(existsSync(outPath("cu13", "process-mine", mine.pid)));
  // The script a program runs (its first argument that is not an option: here the scenario), spaces trimmed.
  const script = runSync("cu13", "plain", "process-script", { RAWTRACE_PROCESS: " python* , plain " });
  ok(script, "named by its first argument");
  assert.ok(existsSync(outPath("cu13", "process-script", script.pid)));
  // A list of blanks names nothing: as unset, every process is traced.
  const blank = runSync("cu13", "plain", "process-blank", { RAWTRACE_PROCESS: ", ,," });
  ok(blank, "blank list");
  assert.ok(existsSync(outPath("cu13", "process-blank", blank.pid)));
});

test("settings that cannot work are refused with a line that says why; the program runs normally", () => {
  const said = (extra: Record<string, string>, what: string, runs = true): string[] => {
    const run = runSync("cu13", "plain", "refused", extra);
    if (runs) ok(run, what);
    return run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  };
  // An output pattern whose expansion does not fit a path: refused, not cut (a cut name lost the pid and extension).
  const long = said({ RAWTRACE_OUTPUT: join(dir, "d".repeat(4090), "trace-%h-%p.rawtrace") }, "long path");
  assert.is(long.length, 1, long.join("\n"));
  assert.match(long[0], /error: cannot create .*: File name too long; nothing is recorded/);
  assert.equal(readdirSync(dir).filter((f) => f.startsWith("ddd")), []);
  // A pattern longer than a path whose first PATH_MAX - 1 bytes end in a '/' and, through its %% escapes, name an
  // existing folder 16 levels down: copied and cut there, it named that folder and the default name went in it.
  // Refused now, never cut.
  const top = join(dir, "pct", "x".repeat(268 - join(dir, "pct").length));
  const deep = join(top, ...Array<string>(15).fill("%".repeat(127)));
  mkdirSync(deep, { recursive: true });
  const cutValue = join(top, ...Array<string>(16).fill("%%".repeat(127)), "mine-%p.rawtrace");
  assert.is(cutValue.slice(0, 4095).endsWith("/"), true, "the cut would end at a folder");
  const cut = said({ RAWTRACE_OUTPUT: cutValue }, "pattern longer than a path");
  assert.is(cut.length, 1, cut.join("\n"));
  assert.match(cut[0], /error: cannot create .*: File name too long; nothing is recorded/);
  assert.equal(readdirSync(deep), [], "nothing written where the cut pattern pointed");
  // RAWTRACE_ACTIVITIES with no kind this collector knows.
  const none = said({ RAWTRACE_ACTIVITIES: "@@@" }, "no kinds");
  assert.ok(none.some((l) => /unknown activity '@@@'/.test(l)), none.join("\n"));
  assert.ok(none.some((l) => /RAWTRACE_ACTIVITIES names no activity kind; nothing is recorded/.test(l)), none.join("\n"));
  assert.not.ok(none.some((l) => /CUPTI_SUCCESS/.test(l)), none.join("\n"));
  // A number with anything after it is no kind (not kind 10).
  const digits = said({ RAWTRACE_ACTIVITIES: "10abc" }, "digits then letters");
  assert.ok(digits.some((l) => /unknown activity '10abc'/.test(l)), digits.join("\n"));
  assert.ok(digits.some((l) => /names no activity kind; nothing is recorded/.test(l)), digits.join("\n"));
  // RAWTRACE_CUPTI_LIB naming a library that loads but is not CUPTI: the line names the variable and the reason.
  // (The test app then stops: it drives the fake through that same variable.)
  const libc = said({ RAWTRACE_CUPTI_LIB: "libc.so.6" }, "not CUPTI", false);
  assert.is(libc.length, 1, libc.join("\n"));
  assert.match(libc[0], /RAWTRACE_CUPTI_LIB=libc\.so\.6: it has no cupti\w+ \(not a libcupti\); nothing is recorded/);
  // An unknown RAWTRACE_PRELOAD: said, and the default (eager) used.
  const pre = said({ RT_APP_LOAD: "preload", LD_PRELOAD: lib("cu13"), RAWTRACE_PRELOAD: "maybe" }, "preload");
  assert.ok(pre.some((l) => /RAWTRACE_PRELOAD=maybe is not eager, lazy or off; eager is used/.test(l)), pre.join("\n"));
  // Seconds beyond what the timers hold (inf, 1e30): warned and ignored, not an endless or an at-once timeout.
  const inf = said({ RAWTRACE_EXIT_TIMEOUT: "inf", RAWTRACE_DURATION: "1e30" }, "inf");
  assert.ok(inf.some((l) => /RAWTRACE_EXIT_TIMEOUT/.test(l)) && inf.some((l) => /RAWTRACE_DURATION/.test(l)), inf.join("\n"));
  // Seconds followed by something else ("1x"): warned and ignored, not read as 1; "2s" is 2 seconds.
  const junk = said({ RAWTRACE_DURATION: "1x", RAWTRACE_EXIT_TIMEOUT: "2s" }, "junk after seconds");
  assert.equal(junk.filter((l) => /is not a number of seconds/.test(l)).map((l) => /(RAWTRACE_\w+)=/.exec(l)?.[1]), ["RAWTRACE_DURATION"]);
  // A zero exit timeout would give the exit flush no time at all: said, and the default used; a zero duration is
  // no limit, as documented.
  const zero = said({ RAWTRACE_EXIT_TIMEOUT: "0", RAWTRACE_DURATION: "0" }, "zero seconds");
  assert.equal(zero, [`rawtrace[${zero[0]?.match(/\[(\d+)\]/)?.[1]}]: warning: RAWTRACE_EXIT_TIMEOUT=0 is not a number of seconds above 0, up to 1e6; ignored`]);
  // A size with something after its unit: said and ignored; "256KiB" and "1MB" are sizes.
  const size = said({ RAWTRACE_BUFFER_SIZE: "64kilo", RAWTRACE_MAX_MEMORY: "256KiB" }, "junk after a size");
  assert.equal(size.filter((l) => /is not a size/.test(l)).map((l) => /(RAWTRACE_\w+)=/.exec(l)?.[1]), ["RAWTRACE_BUFFER_SIZE"]);
  // A log level it does not know: said, and warn used.
  const log = said({ RAWTRACE_LOG: "verbose" }, "unknown log level");
  assert.ok(log.some((l) => /RAWTRACE_LOG=verbose is not off, error, warn, info, debug or 0-4; warn is used/.test(l)), log.join("\n"));
});

test("a program that execs another with %p in RAWTRACE_OUTPUT: the second dump is numbered and the line says why (not 'add %p')", () => {
  // The shell makes the dump's name taken for its own pid, then execs the program in the same process, as a
  // launcher that execs a trainer does (the collector loads again into the new program).
  const env = envFor("cu13", "exec", { RAWTRACE_OUTPUT: join(dir, "exec-%p.rawtrace") });
  const r = spawnSync("sh", ["-c", `: > "${dir}/exec-$$.rawtrace"; exec "$0" plain`, APP], { env, encoding: "utf8", timeout: 120_000 });
  assert.is(r.status, 0, r.stderr);
  const lines = r.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, r.stderr);
  assert.match(lines[0], /exec-\d+\.rawtrace already exists \(this process wrote it before it exec'd a new program, or an earlier process had this pid\); writing .*exec-\d+\.1\.rawtrace instead/);
  assert.not.match(lines[0], /add %p/);
});

test("two processes with the same RAWTRACE_OUTPUT (no %p): exclusive create, the second gets a numbered name and says so", async () => {
  const out = join(dir, "shared.rawtrace");
  // Both start at once and stay in the program until both have created their files.
  const extra = { RAWTRACE_OUTPUT: out };
  const [a, b] = await Promise.all([
    runAsync("cu13", "basic", "sharedA", extra, () => {}),
    runAsync("cu13", "basic", "sharedB", extra, () => {}),
  ]);
  ok(a, "first");
  ok(b, "second");
  const files = readdirSync(dir).filter((f) => f.startsWith("shared")).sort();
  assert.equal(files, ["shared.1.rawtrace", "shared.rawtrace"]);
  const notes = [a, b].map((r) => r.stderr).filter((e) => /already exists .* writing .*shared\.1\.rawtrace instead/.test(e));
  assert.is(notes.length, 1, `exactly one process says it took another name:\n${a.stderr}\n---\n${b.stderr}`);
  // Each file holds one whole process: complete, its own pid, all of its kernels.
  const pids = new Set<number>();
  for (const f of files) {
    const c = await convert(join(dir, f));
    assert.is(c.r.info.complete, true, f);
    assert.not.ok(c.r.info.warnings.some((w) => w.code === "DUPLICATE_CHUNK" || w.code === "SEQ_REUSED"), f);
    pids.add(c.r.info.pid);
    const run = c.r.info.pid === a.pid ? a : b;
    assert.is(byCat(c, "kernel").length, run.events.filter((e) => e.ev === "kernel").length, f);
  }
  assert.equal([...pids].sort((x, y) => x - y), [a.pid, b.pid].sort((x, y) => x - y));
  // A third run while both names exist takes .2; an existing device is written, never replaced.
  const c3 = runSync("cu13", "plain", "third", extra);
  ok(c3, "third");
  assert.ok(readdirSync(dir).includes("shared.2.rawtrace"));
});

// ---- errors never reach the program --------------------------------------------------------------------------------

test("RAWTRACE_CHECKSUM: XXH64 payload checks by default, XXH32 or CRC-32 when asked (format 1.1 / 1.0 readers verify those), other values warned and ignored", async () => {
  const flagsOf = (path: string) => {
    const b = readFileSync(path);
    assert.is(b.readUInt16LE(10), 2, "format minor 2");
    return new Set(chunks(path).map((c) => b.readUInt16LE(c.off + 6) & 7));
  };
  for (const [value, flags, warned] of [
    [undefined, 4, false], ["xxh64", 4, false], ["XXH64", 4, false], ["crc32", 1, false], ["CRC32", 1, false], ["xxh32", 2, false],
    ["Xxh32", 2, false], ["md5", 4, true],
  ] as const) {
    const name = `sum-${value ?? "unset"}`;
    const run = runSync("cu13", "plain", name, { RAWTRACE_CHECKSUM: value });
    ok(run, name);
    const path = join(dir, `cu13-${name}-${run.pid}.rawtrace`);
    assert.equal([...flagsOf(path)], [flags], `${name}: every chunk's payload check`);
    assert.is(/RAWTRACE_CHECKSUM=md5 is not xxh64, xxh32 or crc32; ignored/.test(run.stderr), warned, `${name}: ${run.stderr}`);
    const c = await convert(path);
    assert.ok(c.r.events > 0, name);
    assert.not.ok(c.r.info.warnings.some((w) => w.code === "BAD_PAYLOAD_CRC" || w.code === "BAD_CHUNK_HEADER"), `${name}: every payload verified`);
  }
});

test("names whose memory is gone before the buffer is written never fault the program, also where process_vm_readv is refused (a sandbox)", async () => {
  for (const deny of [false, true]) {
    const name = deny ? "stale-sandbox" : "stale";
    // CUDA_APP_DENY_VM_READV: the program installs a seccomp filter (process_vm_readv → EPERM) before the collector loads.
    const run = runSync("cu13", "stale_name", name, deny ? { CUDA_APP_DENY_VM_READV: "1" } : {});
    ok(run, name);
    const c = await convert(outPath("cu13", name, run.pid));
    const names = byCat(c, "kernel").map((k) => k.name);
    assert.is(names.length, 3, `${name}: ${names}`);
    assert.ok(names.includes("kernel_still_named"), `${name}: an ordinary name is still read: ${names}`);
    assert.not.ok(names.includes("kernel_from_unloaded_module"), `${name}: the unmapped page's name is not made up`);
  }
});

test("RAWTRACE_OUTPUT=/dev/full: one error line, the program runs normally", () => {
  const run = runSync("cu13", "plain", "full", { RAWTRACE_OUTPUT: "/dev/full" });
  ok(run, "/dev/full");
  const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0], /error: cannot create \/dev\/full: No space left on device/);
  assert.ok(statSync("/dev/full").isCharacterDevice(), "the device is written, never replaced");
  assert.not.ok(readdirSync("/dev").includes("full.1"));
});

test("write error mid-run (file size limit): writing stops, the file stays a valid prefix, the program goes on", async () => {
  const run = runSync("cu13", "write_limit", "limit", { RAWTRACE_BUFFER_SIZE: "64K" });
  ok(run, "write_limit");
  const st = one(run, "stats");
  assert.is(st.state, 3, "disabled");
  assert.is(st.error, -27, "EFBIG");
  assert.is(st.kernel_enabled, 0, "CUPTI collection turned off after the error");
  const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0], /File too large/);
  const path = outPath("cu13", "limit", run.pid);
  assert.ok(statSync(path).size <= 256 * 1024);
  const c = await convert(path);
  assert.is(c.r.info.complete, false);
  const n = byCat(c, "kernel").length;
  assert.ok(n > 0 && n < 20000, `${n} kernels`);
});

test("a write error at start-up (no byte may be written, SIGXFSZ at its default action): one error line, the program runs to its end", () => {
  // The collector's first chunks are written on the program's own thread: the signal a failed write raises there
  // must not end the program (collectors/common/rawtrace_writer.c write_all).
  const run = runSync("cu13", "write_limit_start", "limit0");
  ok(run, "write_limit_start");
  assert.is(run.signal, null, "not ended by SIGXFSZ");
  const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0], /File too large/);
});

test("the collector's log line to a stderr nobody reads (its pipe's reader gone) or at a file size limit does not end the program", () => {
  // The log line is written on the program's thread, as the first chunks are: SIGPIPE and SIGXFSZ stay away from it
  // (rt_log_line through rt_write_quiet). The program itself writes nothing to stderr.
  const env = envFor("cu13", "log-epipe", { RAWTRACE_ACTIVITIES: "@@@" });
  const py = "import os, subprocess, sys\nr, w = os.pipe()\nos.close(r)\n" +
    "p = subprocess.run([sys.argv[1], 'plain'], stdout=subprocess.DEVNULL, stderr=w)\nprint(p.returncode)";
  const pipe = spawnSync("python3", ["-c", py, APP], { env, encoding: "utf8", timeout: 120_000 });
  assert.is(pipe.stdout.trim(), "0", `stderr a pipe without reader: ${pipe.stdout}${pipe.stderr}`);
  const file = spawnSync("bash", ["-c", `ulimit -f 0; "$0" plain 2>"$1" >/dev/null; echo $?`, APP, join(dir, "log-limit.txt")], { env, encoding: "utf8", timeout: 120_000 });
  assert.is(file.stdout.trim(), "0", `stderr a file at its size limit: ${file.stdout}${file.stderr}`);
});

test("a CUPTI error disables collection: one log line, one LOG chunk, END, the program runs normally", async () => {
  const run = runSync("cu12", "plain", "cupti-error", { FAKE_CUPTI_FAIL: "cuptiActivityRegisterCallbacks" });
  ok(run, "CUPTI error");
  const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0], /error: cuptiActivityRegisterCallbacks failed: CUPTI_ERROR_UNKNOWN \(999\)/);
  assert.is(one(run, "stats").state, 3);
  const path = outPath("cu12", "cupti-error", run.pid);
  const cs = chunks(path);
  const logs = cs.filter((x) => x.type === T.LOG).map((x) => readLog(x.p));
  assert.is(logs.length, 1);
  assert.is(logs[0].level, 2);
  assert.match(logs[0].msg, /cuptiActivityRegisterCallbacks failed/);
  assert.is(cs[cs.length - 1].type, T.END);
  const c = await convert(path);
  assert.is(c.r.info.complete, true);
  assert.is(c.r.info.activityChunks, 0);
  assert.ok(c.r.info.warnings.some((w) => w.code === "COLLECTOR_ERROR"));
});

test.run();
