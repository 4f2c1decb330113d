/**
 * Bytes after a gzip member that start no member (src/node/file_source.ts, src/core/gunzip.ts). zlib's gunzip stops
 * silently at a zero byte after a member (its padding rule), so zeros between members lost every later member with no
 * word (the dump's TRUNCATED and NO_END only, naming neither the gzip nor the padding); garbage that is not zeros made
 * it fail, and the member walk stopped there. Now the members after such bytes are read (skipped up to the next
 * 1f 8b 08) and GZIP_DAMAGED names the first of them; only zeros after the last member (tar's or dd's padding, no byte
 * lost) are not said. The CLI and the viewer (web/file_source.ts) say the same.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { convertFile } from "../../src/node/convert.js";
import type { Warning } from "../../src/core/codes.js";
import { fileByteSource, addGzipDamage } from "../../web/file_source.js";
import { createEngine } from "../../src/node/wasm.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-gz-padding-"));
const raw = readFileSync("samples/alexnet_a100_rank0.rawtrace");
const half = Math.floor(raw.length / 2);
const a = gzipSync(raw.subarray(0, half));
const b = gzipSync(raw.subarray(half));
const inflate = async () => new WebAssembly.Module(readFileSync("build/inflate.wasm"));

/** Converts `bytes` to Chrome JSON as `<dir>/d.rawtrace[.gz]` (one trace name for all): its warnings and output. */
async function convert(dir: string, bytes: Uint8Array, gz = true) {
  mkdirSync(join(tmp, dir));
  const input = join(tmp, dir, gz ? "d.rawtrace.gz" : "d.rawtrace");
  writeFileSync(input, bytes);
  const out = join(tmp, dir, "d.json");
  const r = await convertFile(input, out, { force: true });
  const text = readFileSync(out, "utf8");
  // Everything but the output's own warnings (where the host's GZIP_DAMAGED is listed: checked as `said`).
  const t = JSON.parse(text);
  const said = t.rawtrace.warnings as Array<{ code: string; count: number; offset: number; detail: number }>;
  return { warnings: r.info.warnings, json: Buffer.from(text.replace(/"warnings":\[[^\]]*\]/, '"warnings":[]')), said };
}

/** The viewer's GZIP_DAMAGED for `bytes` (web/file_source.ts, as web/worker.ts adds it), or null. */
async function viewerWarning(bytes: Uint8Array): Promise<Warning | null> {
  const src = fileByteSource(new Blob([bytes]), "d.rawtrace.gz", { inflate });
  const r = await (await createEngine()).convert(src, () => {}, { format: "chrome", traceName: "d" });
  return addGzipDamage(r.info.warnings, src.gzipDamage).find((w) => w.code === "GZIP_DAMAGED") ?? null;
}

/** The output lists the result's GZIP_DAMAGED (the source hands it to the core before the end). */
function saidInOutput(r: { warnings: Warning[]; said: Array<{ code: string; count: number; offset: number; detail: number }> }): void {
  assert.equal(r.said.map((w) => [w.code, w.count, w.offset, w.detail]), r.warnings.map((w) => [w.code, w.count, w.offset, w.detail]));
}

let plain: Buffer;
test.before(async () => {
  plain = (await convert("plain", raw, false)).json;
});

test("zeros between two members (the reproducer): the whole dump, the plain dump's bytes, one GZIP_DAMAGED where they start; the viewer says the same", async () => {
  const file = Buffer.concat([a, Buffer.alloc(8), b]);
  const r = await convert("zeros8", file);
  assert.ok(r.json.equals(plain), "the same output as the plain dump (before: 231 of 500 events)");
  assert.equal(r.warnings.map((w) => w.code), ["GZIP_DAMAGED"], "no TRUNCATED or NO_END: the dump is whole");
  saidInOutput(r);
  const w = r.warnings[0];
  assert.is(w.offset, a.length, "the compressed byte where the zeros start");
  assert.is(w.detail, raw.length);
  assert.match(w.message, `8 bytes after a gzip member are not a gzip member (zeros): skipped up to the next member at compressed byte ${a.length + 8}`);
  assert.equal(await viewerWarning(file), w);
});

test("only zeros after the last member (padding: 1 byte, a tar block, 2 MiB over several reads): the whole dump, nothing said, in the CLI and the viewer", async () => {
  for (const n of [1, 10240, 2 << 20]) {
    const file = Buffer.concat([a, b, Buffer.alloc(n)]);
    const r = await convert(`tail${n}`, file);
    assert.ok(r.json.equals(plain), `${n} zeros`);
    assert.equal(r.warnings, [], `${n} zeros: no warning`);
    assert.equal(r.said, [], `${n} zeros: none in the output`);
    assert.is(await viewerWarning(file), null, `${n} zeros: the viewer`);
  }
});

test("garbage between members (not zeros, zeros then garbage, a chance 1f 8b 08 in it, a magic across a 1 MiB read): every member read, GZIP_DAMAGED at its first byte, CLI and viewer alike", async () => {
  const cases: Array<[string, Buffer, string]> = [
    ["text", Buffer.from("xyz"), "3 bytes after a gzip member are not a gzip member: skipped"],
    ["zeros then text", Buffer.from("\0\0xyz", "latin1"), "5 bytes after a gzip member are not a gzip member: skipped"],
    // a member's magic, flags 0, then bytes that are no DEFLATE data: skipped too, the count to the real member
    ["a false magic", Buffer.concat([Buffer.from("ab"), Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255, 0xff, 0xff, 0xff])]), "15 bytes after a gzip member are not a gzip member: skipped"],
    // the walk starts where zlib stopped; the next member's magic straddles its first 1 MiB read
    ["zeros across a read", Buffer.alloc((1 << 20) - 1), `${(1 << 20) - 1} bytes after a gzip member are not a gzip member (zeros): skipped`],
  ];
  for (const [what, junk, message] of cases) {
    const file = Buffer.concat([a, junk, b]);
    const r = await convert(what.replace(/ /g, "_"), file);
    assert.ok(r.json.equals(plain), `${what}: the whole dump`);
    assert.equal(r.warnings.map((w) => w.code), ["GZIP_DAMAGED"], what);
    saidInOutput(r);
    assert.is(r.warnings[0].offset, a.length, what);
    assert.match(r.warnings[0].message, `${message} up to the next member at compressed byte ${a.length + junk.length}`, what);
    assert.equal(await viewerWarning(file), r.warnings[0], `${what}: the viewer`);
  }
});

test("bytes after the last member that are not only zeros: the whole dump, GZIP_DAMAGED where they start (zeros included), CLI and viewer alike", async () => {
  for (const junk of [Buffer.from("junk"), Buffer.concat([Buffer.alloc(10), Buffer.from("junk")])]) {
    const file = Buffer.concat([a, b, junk]);
    const r = await convert(`trailing${junk.length}`, file);
    assert.ok(r.json.equals(plain));
    assert.equal(r.warnings.map((w) => w.code), ["GZIP_DAMAGED"]);
    saidInOutput(r);
    assert.is(r.warnings[0].offset, a.length + b.length);
    assert.match(r.warnings[0].message, `${junk.length} bytes after the last gzip member are not a gzip member`);
    assert.equal(await viewerWarning(file), r.warnings[0]);
  }
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));
test.run();
