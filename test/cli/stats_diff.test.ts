/**
 * What `rawtrace stats` and `rawtrace diff` say on standard error (src/node/commands.ts, src/node/diff.ts): every
 * warning of a file, as convert lists them (not only the losses), the failure summary with codes of docs/errors.md
 * after several inputs, and the change column of a row that is 0 in both files.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { T0 } from "../helpers/sample_dump.js";
import { ROOT, cliIn, lines } from "../helpers/cli.js";

const SAMPLE = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-cli-stats-"));

const { cli } = cliIn(tmp);

/** Three runtime calls and no HEADER chunk: one warning, NO_HEADER, which is not a loss. */
const NO_HEADER = join(tmp, "no_header.rawtrace");
{
  const w = RawtraceWriter.inMemory();
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  for (let i = 0; i < 3; i++) {
    w.activity(C.apiRecord("cuda13", { kind: 5, cbid: 211, start: T0 + BigInt(i * 1000), end: T0 + BigInt(i * 1000 + 500), processId: 1, threadId: 1, correlationId: i + 1 }));
  }
  w.end();
  writeFileSync(NO_HEADER, w.bytes());
}
const WARNING = "  warning NO_HEADER ×1 (offset 16): no HEADER chunk before the first activity (its chunk header damaged, or never written): the vendor was read from the other chunks (vendor 1); process id, rank, versions and host name are unknown";

test("convert, stats (text, --csv) and diff list a file's non-loss warnings on standard error, the same line", () => {
  const c = cli(["convert", NO_HEADER, "-o", join(tmp, "nh.json")]);
  assert.is(c.status, 0, c.stderr);
  assert.ok(lines(c.stderr).includes(WARNING), c.stderr);
  for (const args of [["stats", NO_HEADER], ["stats", NO_HEADER, "--csv"], ["diff", SAMPLE, NO_HEADER], ["diff", NO_HEADER, SAMPLE, "--json"]]) {
    const r = cli(args);
    assert.is(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
    const err = lines(r.stderr);
    const at = err.indexOf(WARNING);
    assert.ok(at > 0, `${args.join(" ")}: ${r.stderr}`);
    assert.is(err[at - 1], `rawtrace: ${NO_HEADER}: warnings`, "headed by the file's name");
    assert.not.match(r.stderr, /DATA LOST/);
  }
  // --json has them in its document: standard error stays quiet.
  const j = cli(["stats", NO_HEADER, "--json"]);
  assert.is(j.status, 0, j.stderr);
  assert.is(j.stderr, "");
  assert.is(JSON.parse(j.stdout).files[0].warnings[0].code, "NO_HEADER");
  // A file without warnings: nothing.
  assert.is(cli(["stats", SAMPLE]).stderr, "");
});

test("stats of several inputs, some failing: each error, then the failure summary with codes; exit 1", () => {
  const text = join(tmp, "text.rawtrace");
  writeFileSync(text, "hello, not a dump\n");
  const missing = join(tmp, "nonexist.rawtrace");
  for (const form of [[], ["--csv"]]) {
    const r = cli(["stats", SAMPLE, text, missing, ...form]);
    assert.is(r.status, 1, r.stderr);
    const err = lines(r.stderr);
    assert.ok(err.some((l) => l.startsWith(`rawtrace: ${text}: offset 0: not a .rawtrace file`)), r.stderr);
    const at = err.indexOf("2 failed:");
    assert.ok(at >= 0, r.stderr);
    assert.equal(err.slice(at + 1), [`  ${text} (BAD_MAGIC)`, `  ${missing} (IO)`]);
  }
  // One input: its own code and no summary, as convert.
  const one = cli(["stats", text]);
  assert.is(one.status, 1, one.stderr);
  assert.not.match(one.stderr, /failed:/);
  // --steps and --gaps read each input twice (a pipe is spooled first): a pipe that is not a dump fails alone there too.
  for (const opt of ["--steps", "--gaps"]) {
    const args = opt === "--steps" ? "--steps '^ProfilerStep#\\d+$'" : "--gaps";
    const r = spawnSync("bash", ["-c", `"${process.execPath}" "${join(ROOT, "dist/node/cli.js")}" stats ${args} "${SAMPLE}" <(echo hello)`],
      { cwd: tmp, encoding: "utf8", timeout: 60000 });
    assert.is(r.status, 1, r.stderr);
    assert.match(r.stdout, "busy", `${opt}: the good file's statistics are printed`);
    assert.match(r.stderr, /1 failed:\n  \/dev\/fd\/\d+ \(BAD_MAGIC\)/, r.stderr);
  }
});

test("diff: a row 0 in both files is unchanged (0.0%), not new; a row only B has is new", () => {
  const r = cli(["diff", NO_HEADER, NO_HEADER, "--steps", "no_such_step"]);
  assert.is(r.status, 0, r.stderr);
  const steps = lines(r.stdout).find((l) => l.trimStart().startsWith("steps (count)"))!;
  assert.ok(steps, r.stdout);
  assert.equal(steps.trim().split(/\s+/).slice(2), ["0", "0", "0", "0.0%"]);
  assert.not.match(r.stdout, /\bnew\b/);
  const ab = cli(["diff", NO_HEADER, SAMPLE, "--top", "1000"]);
  assert.is(ab.status, 0, ab.stderr);
  assert.match(ab.stdout, /kernel ms\s+0\.000\s+\S+\s+\S+\s+new\s+0→\d+/);
});

test("stats and diff: names their 120-character cut would show alike (PyTorch's optimizer kernels) end with a word each alone has", () => {
  const torch = join(ROOT, "test/fixtures/real/h100/torch.rawtrace");
  const r = cli(["stats", torch, "--top", "30"]);
  assert.is(r.status, 0, r.stderr);
  const names = r.stdout.split("\n").filter((l) => l.includes("multi_tensor_apply_kernel")).map((l) => l.replace(/^\s*(\S+\s+){4}/, ""));
  assert.ok(names.length >= 5, r.stdout);
  // Before: the six rows read as two texts, "…TensorListMetadata…" and "…TensorListScalarLi…".
  assert.is(new Set(names).size, names.length, names.join("\n"));
  assert.ok(names.every((n) => n.length <= 120 && / \[\w+\]$/.test(n)), names.join("\n"));
  const d = cli(["diff", torch, torch, "--top", "200"]);
  const dn = d.stdout.split("\n").filter((l) => l.includes("multi_tensor_apply_kernel")).map((l) => l.slice(l.indexOf("void ")));
  assert.is(new Set(dn).size, dn.length, dn.join("\n"));
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("diff reads standard input and a FIFO once, for --steps too, and `diff - -` compares the input with itself (before: a false \"file ends before the 16-byte preamble (0 bytes)\", or a wait forever on the FIFO)", () => {
  const rows = (r: ReturnType<typeof cli>) => {
    assert.is(r.status, 0, r.stderr);
    return (JSON.parse(r.stdout) as { rows: unknown[] }).rows;
  };
  const want = rows(cli(["diff", SAMPLE, SAMPLE, "--steps", "ProfilerStep", "--json"]));
  assert.ok(want.some((x) => (x as { group: string }).group.startsWith("step")), "step rows");
  const bytes = readFileSync(SAMPLE);
  assert.equal(rows(cli(["diff", "-", SAMPLE, "--steps", "ProfilerStep", "--json"], bytes)), want);
  assert.equal(rows(cli(["diff", "-", "-", "--steps", "ProfilerStep", "--json"], bytes)), want);
  // A failure names the input as given, never the temporary copy (before: /tmp/.stdin.<hex>.spool, already gone).
  const future = Buffer.from(bytes);
  future.writeUInt16LE(99, 8); // format major version 99
  for (const args of [["diff", "-", "-"], ["diff", "-", SAMPLE, "--steps", "ProfilerStep"], ["stats", "-", "--steps", "ProfilerStep"]]) {
    const r = cli(args, future);
    assert.is(r.status, 1, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, "rawtrace: /dev/stdin: offset 8: written by a newer rawtrace", args.join(" "));
    assert.not.match(r.stderr, "spool", args.join(" "));
  }
  const fifo = join(tmp, "steps.fifo");
  execFileSync("mkfifo", [fifo]);
  const writer = spawn("sh", ["-c", 'cat "$0" > "$1"', SAMPLE, fifo], { stdio: "ignore" });
  try {
    assert.equal(rows(cli(["diff", fifo, SAMPLE, "--steps", "ProfilerStep", "--json"])), want);
  } finally {
    writer.kill();
  }
});

test.run();
