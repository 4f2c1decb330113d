/**
 * A gzipped dump one of whose first three bytes (gzip's 1f 8b 08) is damaged (src/core/gzip_magic.ts): both hosts
 * read it as gzip with those bytes repaired and say GZIP_MAGIC_DAMAGED, not a loss. Before, hosts chose gzip by 1f 8b
 * alone: a changed magic byte lost the whole dump to BAD_MAGIC (with a hint to repair it by hand), and a changed
 * method byte to "cannot decompress (damaged gzip) … incorrect header check".
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { cliIn } from "../helpers/cli.js";
import { createEngine } from "../../src/node/wasm.js";
import { addSourceWarnings, fileByteSource, gzipOptions } from "../../web/file_source.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-gz-magic-"));
const { cli } = cliIn(tmp);
const SAMPLES = ["alexnet_a100_rank0", "mi250_minitoy_rocprof", "xpu_train_pti", "gaudi2_mlp_synapse", "h100_torch_train_nvtx"];
const inflate = new WebAssembly.Module(readFileSync("build/inflate.wasm"));

interface Warn { code: string; count: number; offset: number; detail: number }
/** The Chrome JSON's events part (its warnings list emptied) and its warnings. */
function read(path: string): { json: string; said: Warn[] } {
  const text = readFileSync(path, "utf8");
  return { json: text.replace(/"warnings":\[[^\]]*\]/, '"warnings":[]'), said: JSON.parse(text).rawtrace.warnings };
}

/** `bytes` with byte `at` set to `v`. */
const withByte = (bytes: Buffer, at: number, v: number) => {
  const b = Buffer.from(bytes);
  b[at] = v;
  return b;
};

test("each of the first three bytes changed, five samples: the intact .gz's output, GZIP_MAGIC_DAMAGED at 0 (not a loss: --strict exits 0)", () => {
  for (const s of SAMPLES) {
    const gz = gzipSync(readFileSync(`samples/${s}.rawtrace`));
    // One name for both (the trace's name comes from it), in folders of their own.
    mkdirSync(join(tmp, "ok"), { recursive: true });
    mkdirSync(join(tmp, "bad"), { recursive: true });
    writeFileSync(join(tmp, "ok/d.gz"), gz);
    assert.is(cli(["convert", "ok/d.gz", "-o", "ok.json", "--force"]).status, 0);
    const ok = read(join(tmp, "ok.json"));
    for (const [at, v] of [[0, 0x1e], [1, 0x0b], [2, 0x09]] as const) {
      writeFileSync(join(tmp, "bad/d.gz"), withByte(gz, at, v));
      const r = cli(["convert", "bad/d.gz", "-o", "bad.json", "--force", "--strict"]);
      assert.is(r.status, 0, `${s} byte ${at}: ${r.stderr}`);
      assert.match(r.stderr, "warning GZIP_MAGIC_DAMAGED ×1 (offset 0)");
      assert.match(r.stderr, /first bytes \([0-9a-f ]+\) are not gzip's 1f 8b 08 \(1 of the 3 changed\)/);
      const bad = read(join(tmp, "bad.json"));
      assert.ok(bad.json === ok.json, `${s} byte ${at}: the same events as the intact .gz`);
      assert.equal(bad.said, [...ok.said, { code: "GZIP_MAGIC_DAMAGED", count: 1, offset: 0, detail: 1 }], `${s} byte ${at}`);
    }
  }
});

test("through a pipe, to XSpace, and in info: read alike", () => {
  const gz = withByte(gzipSync(readFileSync("samples/alexnet_a100_rank0.rawtrace")), 1, 0);
  const r = cli(["convert", "-", "-o", "pipe.json", "--force"], gz);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, "GZIP_MAGIC_DAMAGED");
  assert.is(JSON.parse(readFileSync(join(tmp, "pipe.json"), "utf8")).traceEvents.filter((e: { ph: string }) => e.ph === "X").length > 400, true);
  writeFileSync(join(tmp, "m.gz"), gz);
  const x = cli(["convert", "m.gz", "--format", "xspace", "-o", "m.xplane.pb", "--force"]);
  assert.is(x.status, 0, x.stderr);
  assert.ok(readFileSync(join(tmp, "m.xplane.pb")).includes("rawtrace GZIP_MAGIC_DAMAGED: 1 occurrence"), "XSpace.warnings");
  const info = cli(["info", "m.gz"]);
  assert.is(info.status, 0, info.stderr);
  assert.match(info.stdout, "device 7");
  assert.match(info.stdout, "GZIP_MAGIC_DAMAGED ×1");
});

test("the viewer's source reads it as the CLI does: the same output and warning", async () => {
  const gz = withByte(gzipSync(readFileSync("samples/mi250_minitoy_rocprof.rawtrace")), 0, 0x9f);
  writeFileSync(join(tmp, "v.gz"), gz);
  assert.is(cli(["convert", "v.gz", "-o", "v.json", "--force"]).status, 0);
  const blob = new Blob([gz]);
  const opts = await gzipOptions(blob);
  assert.ok(opts.gzip && opts.gzipMagicDamaged, "chosen as gzip by its bytes");
  const src = fileByteSource(blob, "v.rawtrace.gz", { ...opts, inflate: async () => inflate });
  const parts: Buffer[] = [];
  const res = await (await createEngine()).convert(src, (b) => parts.push(Buffer.from(b)), { format: "chrome", traceName: "v.gz" });
  const ws = addSourceWarnings(res.info.warnings, src);
  const w = ws.find((x) => x.code === "GZIP_MAGIC_DAMAGED");
  assert.ok(w && w.message.includes("(9f 8b 08)"), JSON.stringify(ws));
  const cliOut = read(join(tmp, "v.json"));
  const text = Buffer.concat(parts).toString("utf8");
  assert.ok(text.replace(/"warnings":\[[^\]]*\]/, '"warnings":[]') === cliOut.json, "the same Chrome JSON as the CLI's");
  assert.equal(JSON.parse(text).rawtrace.warnings, cliOut.said);
});

test("damage after a damaged magic is said too (GZIP_DAMAGED), and what the members after it hold is converted", () => {
  const raw = readFileSync("samples/alexnet_a100_rank0.rawtrace");
  const half = Math.floor(raw.length / 2 / 8) * 8;
  const a = withByte(gzipSync(raw.subarray(0, half)), 2, 0);
  const b = gzipSync(raw.subarray(half));
  writeFileSync(join(tmp, "two.gz"), Buffer.concat([a, Buffer.from("junk"), b]));
  const r = cli(["convert", "two.gz", "-o", "two.json", "--force"]);
  assert.is(r.status, 0, r.stderr);
  const said = read(join(tmp, "two.json")).said.map((w) => w.code);
  assert.ok(said.includes("GZIP_MAGIC_DAMAGED") && said.includes("GZIP_DAMAGED"), said.join(" "));
  assert.match(r.stderr, `${a.length} (4 bytes after a gzip member are not a gzip member`);
});

test("bytes that only look like such a header fail with what was tried; two changed bytes are not read as gzip", () => {
  const fake = Buffer.concat([Buffer.from([0x1f, 0x9b, 8, 0, 0, 0, 0, 0, 0, 3]), Buffer.alloc(300, 0xff)]);
  writeFileSync(join(tmp, "fake.gz"), fake);
  const r = cli(["convert", "fake.gz", "-o", "fake.json", "--force"]);
  assert.is(r.status, 4, r.stderr);
  assert.match(r.stderr, /cannot decompress \(damaged gzip\): at compressed byte \d+, before any byte of the dump: .* \(its first bytes 1f 9b 08 were read as gzip's 1f 8b 08, one of them taken as damaged: it may not be a gzip file\)/);
  const two = gzipSync(readFileSync("samples/alexnet_a100_rank0.rawtrace"));
  two[0] = 0x1e;
  two[8] = 9; // XFL no writer writes
  writeFileSync(join(tmp, "two.gz"), two);
  const t = cli(["convert", "two.gz", "-o", "t.json", "--force"]);
  assert.is(t.status, 1, t.stderr);
  assert.match(t.stderr, "not a .rawtrace file");
  assert.match(t.stderr, "look like a gzip header whose magic is damaged");
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));
test.run();
