/**
 * `rawtrace merge -` (src/node/merge.ts): a rank read from standard input is named `/dev/stdin` (its label `stdin`)
 * everywhere, as convert names it. The merge spools a non-seekable input into a temporary file to read it twice;
 * that path (/tmp/.stdin.<hex>.spool) leaked into the trailer's `rawtrace.merge.ranks[].file` and `skewed_ranks`,
 * the CLOCK_SKEW warning and the XSpace line labels of a host with several ranks.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliIn, ROOT } from "../helpers/cli.js";

const SAMPLE = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
const OTHER = join(ROOT, "samples/mi250_minitoy_rocprof.rawtrace");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-merge-stdin-"));
const { cli } = cliIn(tmp);

test("Chrome: the stdin rank is /dev/stdin in the trailer, the skewed ranks and the CLOCK_SKEW warning", () => {
  // The two samples' clocks are 1.76 years apart: the warning names both ranks.
  const r = cli(["merge", "-", OTHER, "-o", "m.json"], readFileSync(SAMPLE));
  assert.is(r.status, 0, r.stderr);
  assert.not.match(r.stderr, "spool");
  assert.match(r.stderr, /warning CLOCK_SKEW: .*stdin \(vm\), \/dev\/stdin/);
  const text = readFileSync(join(tmp, "m.json"), "utf8");
  assert.not.match(text, "spool");
  const m = JSON.parse(text).rawtrace.merge;
  assert.equal(m.ranks.map((x: { file: string }) => x.file), ["/dev/stdin", OTHER]);
  assert.ok(m.clock.skewed_ranks.every((x: { file: string }) => x.file === "/dev/stdin" || x.file === OTHER), JSON.stringify(m.clock));
});

test("XSpace: two ranks of one host, one from stdin: its lines are labelled 'stdin'", () => {
  const copy = join(tmp, "copy.rawtrace");
  copyFileSync(SAMPLE, copy);
  const r = cli(["merge", "-F", "xspace", "-", copy, "-o", "xprof"], readFileSync(SAMPLE));
  assert.is(r.status, 0, r.stderr);
  assert.not.match(r.stderr, "spool");
  const run = join(tmp, "xprof/plugins/profile");
  const pb = readFileSync(join(run, readdirSync(run)[0], "vm.xplane.pb")).toString("latin1");
  assert.not.match(pb, "spool");
  assert.match(pb, "stdin: ");
  assert.match(pb, "copy: ");
});

test("a stdin rank that fails: the error names /dev/stdin, not the spooled copy", () => {
  const r = cli(["merge", "-", OTHER, "-o", "bad.json"], readFileSync(SAMPLE).subarray(0, 10));
  assert.is(r.status, 1, r.stderr);
  assert.not.match(r.stderr, "spool");
  assert.match(r.stderr, /\/dev\/stdin: offset 0: file ends before the 16-byte preamble/);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
