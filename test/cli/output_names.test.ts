/**
 * The command line's choices made from an output's name and its options' values (src/cli.ts, src/node/commands.ts):
 * a *.xplane.pb output is XSpace without --format (convert) and refused by merge, whose XSpace is a folder; the
 * gzip and .xplane.pb tests ignore case; empty option values and usage errors of one input carry the
 * `rawtrace: usage: ` line of docs/errors.md; `-` is standard output, never a folder; the help's exit codes and
 * --strict wording.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, cliIn, lines } from "../helpers/cli.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { xspaceProfilePath } from "../../src/node/convert.js";

const SAMPLE = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
const OTHER = join(ROOT, "samples/alexnet_a100_rank0.rawtrace");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-cli-names-"));

const { cli, usageError } = cliIn(tmp);
const isGzip = (p: string) => readFileSync(p).subarray(0, 2).equals(Buffer.from([0x1f, 0x8b]));

test("convert -o x.xplane.pb without --format writes XSpace, the bytes of --format xspace; --format chrome with it is a usage error", () => {
  const inferred = join(tmp, "inferred.xplane.pb");
  const r = cli(["convert", SAMPLE, "-o", inferred]);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, /XSpace out/);
  const named = join(tmp, "named.xplane.pb");
  assert.is(cli(["convert", SAMPLE, "--format", "xspace", "-o", named]).status, 0);
  assert.ok(readFileSync(inferred).equals(readFileSync(named)), "the same XSpace bytes");
  assert.is(readFileSync(inferred)[0], 0x0a, "a protobuf (XSpace field 1), not JSON");
  // Any case: one file, not a log directory named X.XPLANE.PB.
  const upper = join(tmp, "UPPER.XPLANE.PB");
  assert.is(cli(["convert", SAMPLE, "-o", upper]).status, 0);
  assert.ok(statSync(upper).isFile());
  assert.ok(readFileSync(upper).equals(readFileSync(named)));
  usageError(["convert", SAMPLE, "--format", "chrome", "-o", "c.xplane.pb"], "--format chrome with -o c.xplane.pb");
  assert.not.ok(existsSync(join(tmp, "c.xplane.pb")));
});

test("merge -o x.xplane.pb is a usage error that says to give --format xspace a directory (or a .json name)", () => {
  usageError(["merge", SAMPLE, OTHER, "-o", "m.xplane.pb"], "give --format xspace -o DIR");
  usageError(["merge", SAMPLE, OTHER, "-F", "xspace", "-o", "M.XPLANE.PB"], "one <host>.xplane.pb per host under a log directory");
  // The .json refusal names what merge takes: a log directory, not a .xplane.pb file it would refuse.
  const r = cli(["merge", SAMPLE, OTHER, "-F", "xspace", "-o", "m.json"]);
  assert.is(r.status, 2, r.stderr);
  assert.ok(r.stderr.startsWith("rawtrace: usage: "), r.stderr);
  assert.match(r.stderr, /merge writes XSpace to a log directory/);
  assert.not.match(r.stderr, /or a \.xplane\.pb file/);
  assert.equal(readdirSync(tmp).filter((f) => /^m(\.json|\.xplane\.pb)$/i.test(f)), [], "nothing written");
});

test("- as a folder (--out-dir -, merge --format xspace -o -) is a usage error: - is standard output, no folder named - is made", () => {
  usageError(["convert", SAMPLE, "--out-dir", "-"], "--out-dir -: --out-dir names a folder, not standard output");
  usageError(["convert", "-d", "-", SAMPLE, OTHER], "--out-dir -: --out-dir names a folder, not standard output");
  usageError(["batch", SAMPLE, "--out-dir", "-"], "--out-dir -: --out-dir names a folder, not standard output");
  usageError(["merge", SAMPLE, OTHER, "-F", "xspace", "-o", "-"], "-o -: an XSpace merge writes a log directory");
  assert.not.ok(existsSync(join(tmp, "-")), "no folder named -");
});

test("an output named .JSON.GZ is gzipped as .json.gz is (convert, merge, --gzip-level); XSpace never", () => {
  const out = join(tmp, "upper.JSON.GZ");
  const r = cli(["convert", SAMPLE, "-o", out]);
  assert.is(r.status, 0, r.stderr);
  assert.ok(isGzip(out), "gzip bytes");
  assert.match(r.stderr, /gzipped\) out/);
  const lower = join(tmp, "lower.json.gz");
  assert.is(cli(["convert", SAMPLE, "-o", lower]).status, 0);
  assert.ok(readFileSync(out).equals(readFileSync(lower)), "the same bytes as .json.gz");
  const level = join(tmp, "level.Json.Gz");
  assert.is(cli(["convert", SAMPLE, "-o", level, "--gzip-level", "1"]).status, 0);
  assert.ok(isGzip(level));
  const m = join(tmp, "merged.JSON.GZ");
  assert.is(cli(["merge", SAMPLE, OTHER, "-o", m]).status, 0);
  assert.ok(isGzip(m));
  usageError(["convert", SAMPLE, "-F", "xspace", "-o", "x.GZ"], "XSpace is never gzipped");
});

test("usage errors of the one input (output a directory or the input, standard input without -o) say 'usage:'", () => {
  const dir = join(tmp, "existdir");
  mkdirSync(dir);
  usageError(["convert", SAMPLE, "-o", dir], "is a directory, not an output file");
  const same = join(tmp, "same.rawtrace");
  copyFileSync(SAMPLE, same);
  usageError(["convert", same, "-o", same], "is the input");
  usageError(["convert", "-"], "name it with -o or --out-dir", readFileSync(SAMPLE));
});

test("an empty option value is a usage error naming the option", () => {
  usageError(["convert", SAMPLE, "-o", ""], "-o needs a value");
  usageError(["convert", SAMPLE, "--output="], "--output needs a value");
  usageError(["convert", SAMPLE, "--out-dir", ""], "--out-dir needs a value");
  usageError(["stats", SAMPLE, "--top="], "--top needs a value");
  usageError(["diff", SAMPLE, SAMPLE, "--top="], "--top needs a value");
  usageError(["merge", SAMPLE, OTHER, "--max-skew", ""], "--max-skew needs a value");
  assert.not.ok(existsSync(join(tmp, "h100_torch_train_nvtx.json")), "--out-dir '' wrote nothing beside the input");
});

test("help: the exit codes of docs/errors.md, -v, diff's [options], --strict of stats and diff writes no outputs", () => {
  const h = cli(["help"]);
  assert.is(h.status, 0, h.stderr);
  for (const x of ["141", "130", "143", "-V | -v | --version"]) assert.ok(h.stdout.includes(x), `help lacks ${x}`);
  for (const c of ["stats", "diff"]) {
    const s = cli(["help", c]).stdout;
    assert.not.ok(s.includes("outputs are still written"), `${c}: ${s}`);
    assert.ok(s.includes("the statistics are still printed"), s);
  }
  assert.match(cli(["help", "diff"]).stdout, /rawtrace diff <A\.rawtrace> <B\.rawtrace> .*\[options\]/);
  assert.match(cli(["help", "convert"]).stdout, /xspace when -o ends in \.xplane\.pb/);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("an XSpace log directory for a host name past 160 characters (a damaged or crafted HEADER): its start and a hash of the whole, two such hosts two files (before: ENAMETOOLONG, exit 4)", () => {
  const dumps = ["a", "b"].map((tail) => {
    const p = join(tmp, `long-${tail}.rawtrace`);
    writeFileSync(p, sampleDump({ hostname: "h".repeat(300) + tail, rank: tail === "a" ? 0 : 1 }));
    return p;
  });
  const r = cli(["convert", dumps[0], "--format", "xspace", "-o", join(tmp, "long_logs")]);
  assert.is(r.status, 0, r.stderr);
  const runs = readdirSync(join(tmp, "long_logs/plugins/profile"));
  const files = readdirSync(join(tmp, "long_logs/plugins/profile", runs[0]));
  assert.equal(files, [xspaceProfilePath("", 0n, "h".repeat(300) + "a").split("/").pop()]);
  assert.ok(files[0].startsWith("h".repeat(151) + "_") && files[0].length === 160 + ".xplane.pb".length, files[0]);
  const m = cli(["merge", ...dumps, "--format", "xspace", "-o", join(tmp, "long_merged")]);
  assert.is(m.status, 0, m.stderr);
  const mruns = readdirSync(join(tmp, "long_merged/plugins/profile"));
  assert.is(readdirSync(join(tmp, "long_merged/plugins/profile", mruns[0])).filter((f) => f.endsWith(".xplane.pb")).length, 2, "two hosts, two files");
});

test.run();
