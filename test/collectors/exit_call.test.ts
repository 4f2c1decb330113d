/**
 * The exit flush's bounded vendor call (rt_exit_call_owned, collectors/common/rawtrace_queue.c): when the waiter gives
 * up on a call (a termination signal asked for the flush, and the call did not return within its share of half the
 * exit timeout), what the call makes once it returns belongs to the call's own thread, which frees it; when the call
 * returned in time it is the caller's. test/collectors/exit_call_app.c runs the cases — no signal (waited for as long
 * as it takes), a call held past the bound, a bound already spent by earlier calls of the flush, a quick call, and 400
 * calls racing the waiter's decision — built as is, with AddressSanitizer + UBSan (a job freed twice, or used after
 * the other side freed it) and with ThreadSanitizer. test/collectors/exit_queue_app.c runs the queue's exit side (a
 * batch stopped at the exit, the flush's deadline, the queue's locks held for ever by a thread a signal stopped),
 * built as is and with ThreadSanitizer.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/exit_call");
const COMMON = join(ROOT, "collectors/common");
const CC = process.env.CC ?? "cc";
/** The case programs and how many "ok" lines each prints. */
const PROGRAMS = { exit_call_app: 12, exit_queue_app: 25 } as const;
type Program = keyof typeof PROGRAMS;

/** Builds case program `prog` as `name` with `flags`; the compiler's output when it fails. */
function build(name: string, flags: string[], prog: Program = "exit_call_app"): { bin: string; error: string | null } {
  mkdirSync(BUILD, { recursive: true });
  const bin = join(BUILD, name);
  const srcs = ["rawtrace_queue.c", "rawtrace_heap.c", "rawtrace_collector.c", "rawtrace_writer.c", "rawtrace_checksum.c"].map((f) => join(COMMON, f));
  const r = spawnSync(CC, ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", ...flags, `-I${COMMON}`,
    join(ROOT, `test/collectors/${prog}.c`), ...srcs, "-o", bin, "-pthread"], { encoding: "utf8" });
  return { bin, error: r.status === 0 ? null : `${r.stdout}${r.stderr}` };
}

/** Runs a built case program. */
function run(bin: string) {
  return spawnSync(bin, [], { encoding: "utf8", timeout: 120_000, env: { ...process.env, ASAN_OPTIONS: "detect_leaks=0", TSAN_OPTIONS: "halt_on_error=1" } });
}

/** Every check of `prog` passed, nothing reported by a sanitizer. */
function passed(bin: string, r: ReturnType<typeof run>, prog: Program = "exit_call_app") {
  assert.is(r.status, 0, `${bin} exited ${r.status} (${r.signal ?? ""}):\n${r.stdout}${r.stderr}`);
  assert.is(r.stdout.split("\n").filter((l) => l.startsWith("ok ")).length, PROGRAMS[prog], r.stdout);
  assert.not.match(r.stderr, /Sanitizer/, r.stderr);
}

/** Builds with a sanitizer: null (and a line saying why) when this compiler or machine has none. */
function buildSanitized(name: string, flags: string[], prog: Program = "exit_call_app"): string | null {
  const b = build(name, flags, prog);
  if (b.error && /fsanitize|lib[at]san|libubsan|cannot find -l/i.test(b.error)) {
    console.log(`  (${flags[0]} not available to ${CC}: ${b.error.split("\n")[0]})`);
    return null;
  }
  assert.is(b.error, null, b.error ?? "");
  return b.bin;
}

test("bounded exit calls: the caller owns what a call made in time, the call's thread what it made after the waiter gave up", () => {
  const b = build("exit_call_app", []);
  assert.is(b.error, null, b.error ?? "");
  passed(b.bin, run(b.bin));
});

test("the same with AddressSanitizer and UBSan: no job freed twice or used after the other side freed it", () => {
  const bin = buildSanitized("exit_call_app_asan", ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]);
  if (bin) passed(bin, run(bin));
});

/** Runs `prog` built with ThreadSanitizer (nothing where the machine cannot run it). */
function underTsan(prog: Program): void {
  const bin = buildSanitized(`${prog}_tsan`, ["-fsanitize=thread"], prog);
  if (!bin) return;
  const r = run(bin);
  if (/unexpected memory mapping/.test(r.stderr ?? "")) { // some kernels' address-space layouts
    console.log(`  (ThreadSanitizer cannot run here: ${r.stderr.split("\n")[0]})`);
    return;
  }
  passed(bin, r, prog);
}

test("the same with ThreadSanitizer: the hand-over races nothing", () => underTsan("exit_call_app"));

test("the queue at exit: a batch stops at the exit and its rest stays queued in order; the flush's deadline leaves and counts what would not fit; a lock a stopped thread holds costs one 100 ms try, not one per item", () => {
  const b = build("exit_queue_app", [], "exit_queue_app");
  assert.is(b.error, null, b.error ?? "");
  passed(b.bin, run(b.bin), "exit_queue_app");
});

test("the queue at exit with ThreadSanitizer: the writer's exit state races nothing", () => underTsan("exit_queue_app"));

test.run();
