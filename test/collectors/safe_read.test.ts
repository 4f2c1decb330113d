/**
 * The collectors' fault-free reads of the program's memory (collectors/common/rawtrace_safe_read.c), on both paths:
 * process_vm_readv and the pipe fallback taken where a sandbox refuses it. test/collectors/safe_read_app.c runs the
 * cases (short heap strings, strings at an unmapped page, unmapped and null addresses, page-crossing reads, four
 * threads at once) built as is and with AddressSanitizer + UBSan: a program built with AddressSanitizer intercepts
 * libc's write(), and the fallback's write of a piece past a string's end made it abort (the fallback now makes the
 * system call itself).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/safe_read");
const CC = process.env.CC ?? "cc";

/** Builds the case program with `flags`; the compiler's output when it fails. */
function build(name: string, flags: string[]): { bin: string; error: string | null } {
  mkdirSync(BUILD, { recursive: true });
  const bin = join(BUILD, name);
  const r = spawnSync(CC, ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", ...flags, `-I${join(ROOT, "collectors/common")}`,
    join(ROOT, "test/collectors/safe_read_app.c"), join(ROOT, "collectors/common/rawtrace_safe_read.c"), "-o", bin, "-pthread"], { encoding: "utf8" });
  return { bin, error: r.status === 0 ? null : `${r.stdout}${r.stderr}` };
}

/** Runs a built case program: every case passed on both paths. */
function runCases(bin: string): void {
  const r = spawnSync(bin, [], { encoding: "utf8", timeout: 60_000, env: { ...process.env, ASAN_OPTIONS: "detect_leaks=0" } });
  const lines = r.stdout.trim().split("\n");
  assert.is(r.status, 0, `${bin} exited ${r.status} (${r.signal ?? ""}):\n${r.stdout}${r.stderr}`);
  for (const path of ["vm", "pipe"]) assert.is(lines.filter((l) => l.startsWith(`ok ${path} `)).length, 10, `${path}: ${r.stdout}`);
}

test("safe reads on both paths, as built for the collectors", () => {
  const b = build("safe_read_app", []);
  assert.is(b.error, null, b.error ?? "");
  runCases(b.bin);
});

test("safe reads on both paths in a program built with AddressSanitizer and UBSan", () => {
  const b = build("safe_read_app_asan", ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]);
  if (b.error && /fsanitize|asan|cannot find/i.test(b.error)) {
    console.log(`  (AddressSanitizer not available to ${CC}: ${b.error.split("\n")[0]})`);
    return;
  }
  assert.is(b.error, null, b.error ?? "");
  runCases(b.bin);
});

test.run();
