/**
 * src/core/sniff.ts: BAD_MAGIC's message says what a file that is not a dump looks like, from its first bytes, and
 * the engine adds it (the CLI and the viewer alike).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { gzipSync } from "node:zlib";
import { describeStart } from "../../src/core/sniff.js";
import { toChrome } from "../helpers/convert.js";
import { sampleDump } from "../helpers/sample_dump.js";

const b = (...v: number[]) => new Uint8Array(v);
const text = (s: string) => new TextEncoder().encode(s);

test("each kind of start is named, with what to do", () => {
  const gz = gzipSync(Buffer.from("RAWTRACE"));
  for (const [head, want] of [
    [b(0x1f, 0x89, 8, 0, 1, 2, 3), "look like a gzip header whose magic is damaged"],
    [b(0x1e, 0x8b, 8, 4, 1, 2, 3), "(1e 8b 08)"],
    [b(0x28, 0xb5, 0x2f, 0xfd, 0), "zstd -d"],
    [b(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0, 0), "xz -d"],
    [text("BZh91AY&SY"), "bzip2 -d"],
    [b(0x50, 0x4b, 3, 4, 20, 0), "zip archive"],
    [b(0x7f, 0x45, 0x4c, 0x46, 2, 1, 1), "ELF"],
    [text("SQLite format 3\0\x10\x00\x01\x01"), "SQLite database"],
    [text('\ufeff  \n[{"ph":"X"}]'), "JSON text"],
    [text("RAWTRACX\x01\x00\x02\x00"), "the magic with 1 byte(s) changed"],
    [new Uint8Array(40), "first 40 bytes are all zero"],
  ] as const) {
    assert.match(describeStart(head), want, `${Array.from(head.subarray(0, 4))}`);
    assert.ok(describeStart(head).startsWith("; "));
  }
  // Nothing in particular: no clause. Intact gzip never gets here (hosts decompress it), nor does a damaged gzip
  // whose method byte is not 8 or whose two magic bytes both changed.
  for (const head of [text("hello world, this is text"), b(0x1f, 0x89, 9, 0), b(0x1e, 0x89, 8, 0), gz.subarray(0, 2), b()]) {
    assert.is(describeStart(head), "", `${Array.from(head)}`);
  }
});

test("the engine's BAD_MAGIC ends with the hint; a short file names no more than it has", async () => {
  const msg = async (bytes: Uint8Array) => toChrome(bytes, {}, "x.rawtrace").then(() => "converted", (e) => `${e.name}: ${e.message}`);
  const dump = sampleDump();
  const gz = gzipSync(dump);
  gz[0] = 0x1e; // hosts pick gzip by 1f 8b: the engine sees the compressed bytes
  assert.match(await msg(gz), /^BAD_MAGIC: x\.rawtrace: offset 0: not a \.rawtrace file: expected the 8 bytes 'RAWTRACE' at offset 0; its first bytes \(1e 8b 08\) look like a gzip header/);
  assert.match(await msg(text("{}")), "; it looks like JSON text");
  assert.is(await msg(text("hello")), "BAD_MAGIC: x.rawtrace: offset 0: not a .rawtrace file: expected the 8 bytes 'RAWTRACE' at offset 0");
});

test.run();
