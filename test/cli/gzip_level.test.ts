// SPDX-License-Identifier: MIT
/**
 * `rawtrace convert --gzip-level N` (the built CLI): at levels 0 (the default: rawtrace's own encoder in worker
 * threads), 1, 3 and 6 the `.json.gz` is the parallel block gzip of the plain conversion at that level, byte for byte (several members: the JSON spans several
 * 1 MiB blocks), and Node's zlib and Python's gzip module both read it back to exactly the plain JSON; higher levels
 * are smaller; merge takes the level too. Bad levels, a level without gzip output and a level with XSpace are usage errors (exit 2).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { BlockGzip, DEFAULT_GZIP_LEVEL } from "../../src/node/block_gzip.js";
import { generate } from "../../bench/generate.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-gzlevel-"));
const DUMP = join(tmp, "run.rawtrace");
generate(20_000, DUMP);

function cli(args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: tmp, encoding: "utf8", timeout: 120_000 });
  return { status: r.status, stderr: r.stderr };
}

/** The block gzip of `data` at `level`, as the CLI's writer makes it. */
async function blockGzip(data: Buffer, level: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  const gz = new BlockGzip((b) => parts.push(Buffer.from(b)), { level });
  gz.write(data);
  await gz.end();
  return Buffer.concat(parts);
}

/** Python's gzip.decompress of `path`, and how many gzip members the file holds (zlib with a gzip header each). */
function pythonRead(path: string): { json: Buffer; members: number } {
  const code = "import gzip, sys, zlib\n" +
    "raw = open(sys.argv[1], 'rb').read()\n" +
    "n, rest = 0, raw\n" +
    "while rest:\n" +
    "    d = zlib.decompressobj(16 + zlib.MAX_WBITS); d.decompress(rest); rest = d.unused_data; n += 1\n" +
    "sys.stderr.write(str(n))\n" +
    "sys.stdout.buffer.write(gzip.decompress(raw))\n";
  const r = spawnSync("python3", ["-c", code, path], { maxBuffer: 1 << 28 });
  assert.is(r.status, 0, String(r.stderr));
  return { json: r.stdout, members: Number(String(r.stderr)) };
}

test("levels 0 (default), 1, 3 and 6: the block gzip of the plain JSON at that level; zlib and Python read it back", async () => {
  assert.is(cli(["convert", DUMP, "-o", "plain.json"]).status, 0);
  const plain = readFileSync(join(tmp, "plain.json"));
  assert.ok(plain.length > 3 << 20, `${plain.length} bytes of JSON: several 1 MiB members`);
  const sizes = new Map<number, number>();
  for (const level of [undefined, 0, 1, 3, 6]) {
    const out = `l${level ?? "default"}.json.gz`;
    const r = cli(["convert", DUMP, "-o", out, ...(level === undefined ? [] : ["--gzip-level", String(level)])]);
    assert.is(r.status, 0, r.stderr);
    const gz = readFileSync(join(tmp, out));
    const want = level ?? DEFAULT_GZIP_LEVEL;
    assert.ok(gz.equals(await blockGzip(plain, want)), `${out}: the block gzip at level ${want}`);
    assert.ok(gunzipSync(gz).equals(plain), `${out}: Node's zlib reads the plain JSON`);
    const py = pythonRead(join(tmp, out));
    assert.ok(py.json.equals(plain), `${out}: Python's gzip reads the plain JSON`);
    assert.is(py.members, Math.ceil(plain.length / (1 << 20)), `${out}: one member per 1 MiB block`);
    sizes.set(want, gz.length);
  }
  assert.is(DEFAULT_GZIP_LEVEL, 0);
  assert.ok(sizes.get(1)! > sizes.get(3)! && sizes.get(3)! > sizes.get(6)!, JSON.stringify([...sizes]));
  assert.ok(sizes.get(0)! < sizes.get(1)!, `level 0 smaller than level 1 on this JSON: ${JSON.stringify([...sizes])}`);
});

test("--gzip-level: 0 to 9, with gzip output, never with XSpace (exit 2)", () => {
  for (const bad of ["10", "0.5", "1.5", "fast", " "]) {
    const r = cli(["convert", DUMP, "-o", "x.json.gz", "--force", "--gzip-level", bad]);
    assert.is(r.status, 2, bad);
    assert.match(r.stderr, "--gzip-level must be a whole number from 0 (fastest) to 9 (smallest)");
  }
  // An empty value is no value (as for every option).
  const empty = cli(["convert", DUMP, "-o", "x.json.gz", "--force", "--gzip-level", ""]);
  assert.is(empty.status, 2);
  assert.match(empty.stderr, "rawtrace: usage: --gzip-level needs a value, not an empty one");
  const plain = cli(["convert", DUMP, "-o", "y.json", "--gzip-level", "3"]);
  assert.is(plain.status, 2);
  assert.match(plain.stderr, "--gzip-level needs gzip output");
  const xs = cli(["convert", DUMP, "--format", "xspace", "--gzip-level", "3"]);
  assert.is(xs.status, 2);
  assert.match(xs.stderr, "XSpace output is never gzipped");
  const batch = cli(["batch", DUMP, "--gzip", "--gzip-level", "9", "--out-dir", "b"]);
  assert.is(batch.status, 0, batch.stderr);
  assert.ok(gunzipSync(readFileSync(join(tmp, "b", "run.json.gz"))).equals(readFileSync(join(tmp, "plain.json"))), "batch --gzip-level 9");
});

test("merge --gzip-level 6: the block gzip at level 6 of the merged JSON", async () => {
  const second = join(tmp, "rank1.rawtrace");
  generate(5_000, second);
  const plain = cli(["merge", DUMP, second, "-o", "m.json"]);
  assert.is(plain.status, 0, plain.stderr);
  const gz = cli(["merge", DUMP, second, "-o", "m.json.gz", "--gzip-level", "6"]);
  assert.is(gz.status, 0, gz.stderr);
  // The merged trace names its output (rawtrace.merge traceName): the only difference between the two.
  const json = Buffer.from(readFileSync(join(tmp, "m.json"), "utf8").replace('"traceName":"m.json"', '"traceName":"m.json.gz"'));
  const file = readFileSync(join(tmp, "m.json.gz"));
  assert.ok(gunzipSync(file).equals(json), "the merged JSON");
  assert.ok(file.equals(await blockGzip(json, 6)), "at level 6");
  assert.not.ok(file.equals(await blockGzip(json, 1)));
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
