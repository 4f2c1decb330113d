/**
 * The CLI's standard output into pipes (src/cli.ts): a reader slower than rawtrace still gets every byte (the exit
 * waits until stdout has taken what was written), a reader that stops early (`| head`) ends the run quietly with
 * status 141, as a command ended by SIGPIPE, instead of an unhandled EPIPE stack trace, and a full device is IO.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const SAMPLE = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
const sh = (script: string) => spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 120000 });

test("a slow reader gets the whole stats text (more than a pipe's 64 KiB), as a file does", () => {
  const args = `${q(process.execPath)} ${q(CLI)} stats ${q(SAMPLE)} --gaps --top 1000`;
  const whole = sh(`${args} | wc -c`);
  const size = Number(whole.stdout.trim());
  assert.ok(size > 65536, `the text is larger than a pipe's buffer (${size} bytes)`);
  // The reader starts only after rawtrace has written everything it has: before the fix, the bytes Node still held
  // for the full pipe were lost at exit.
  for (let i = 0; i < 2; i++) {
    const slow = sh(`set -o pipefail; ${args} | (sleep 2; wc -c)`);
    assert.is(slow.status, 0, slow.stderr);
    assert.is(Number(slow.stdout.trim()), size);
  }
});

test("a reader that stops early: status 141, nothing on standard error", () => {
  const r = sh(`${q(process.execPath)} ${q(CLI)} stats ${q(SAMPLE)} --gaps --csv | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`);
  assert.is(r.stderr, "");
  assert.is(r.stdout.trim(), "141");
});

test("-o - whose reader stops early (convert Chrome JSON and XSpace, merge): status 141, nothing on standard error", () => {
  for (const args of [["convert", SAMPLE, "-o", "-"], ["convert", SAMPLE, "-F", "xspace", "-o", "-"], ["convert", SAMPLE, "-o", "-", "--jobs", "1"]]) {
    const r = sh(`${q(process.execPath)} ${q(CLI)} ${args.map(q).join(" ")} | head -c 100 >/dev/null; echo "\${PIPESTATUS[0]}"`);
    assert.is(r.stderr, "", args.join(" "));
    assert.is(r.stdout.trim(), "141", args.join(" "));
  }
  const m = sh(`${q(process.execPath)} ${q(CLI)} merge ${q(SAMPLE)} ${q(SAMPLE.replace("h100_torch_train_nvtx", "alexnet_a100_rank0"))} -o - | head -c 100 >/dev/null; echo "\${PIPESTATUS[0]}"`);
  assert.not.match(m.stderr, /EPIPE|cannot write/);
  assert.is(m.stdout.trim(), "141");
});

test("-o /dev/fd/1 or /proc/self/fd/1 is standard output as -o - is: 141 quietly into a reader that stops early, and --json with it is USAGE (it printed EPIPE with exit 4, or appended the summary to the trace)", () => {
  const big = join(ROOT, "test/fixtures/real/h100/torch.rawtrace");
  for (const o of ["/dev/fd/1", "/proc/self/fd/1"]) {
    const r = sh(`${q(process.execPath)} ${q(CLI)} convert ${q(big)} -o ${o} | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`);
    assert.is(r.stderr, "", o);
    assert.is(r.stdout.trim(), "141", o);
    const j = sh(`${q(process.execPath)} ${q(CLI)} convert ${q(SAMPLE)} -o ${o} --json | head -c 1 >/dev/null; echo "\${PIPESTATUS[0]}"`);
    assert.is(j.stdout.trim(), "2", `${o} --json: ${j.stderr}`);
    assert.match(j.stderr, `--json prints its summary on standard output, where -o ${o} writes the trace`);
  }
});

test("standard output that cannot take the bytes (/dev/full): exit 4 (IO) with one line, not exit 0 with the report lost", () => {
  for (const args of [["stats", SAMPLE], ["info", SAMPLE, "--json"]]) {
    const r = sh(`${q(process.execPath)} ${q(CLI)} ${args.map(q).join(" ")} > /dev/full`);
    assert.is(r.status, 4, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^rawtrace: standard output: cannot write: ENOSPC/);
  }
});

test.run();
