/**
 * The viewer's file source (web/file_source.ts) with `keep`: a conversion reads the File once whatever the number
 * of passes, gives the same bytes as reading it every time (plain and .gz, blocks smaller than the stream's chunks
 * and larger), and the emit pass lets the kept bytes go.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource, type ByteSource } from "../../src/core/engine.js";
import { fileByteSource, gzipDamageFor, type FileSourceOptions } from "../../web/file_source.js";
import { gunzipBytes } from "../../src/core/gunzip.js";
import { overrunMember } from "../helpers/gzip_overrun.js";

// NVTX ranges: the timeline conversion runs all three passes (index, projection, emit).
const DUMP = readFileSync("samples/h100_torch_train_nvtx.rawtrace");
/** The gzip reader the viewer's worker compiles (build/inflate.wasm). */
const inflate: FileSourceOptions["inflate"] = async () => new WebAssembly.Module(readFileSync("build/inflate.wasm"));

/**
 * SHA-256 of `src` converted to `format`, with the passes that opened it; for Chrome JSON the hash leaves out the
 * output's `rawtrace.warnings`, returned as `said` (where a damaged .gz is listed: the source's hostWarnings).
 */
async function convert(src: ByteSource, format: "timeline" | "chrome"): Promise<{ sha: string; passes: number[]; said: string[] }> {
  const passes: number[] = [];
  const wrapped: ByteSource = { ...src, open: (pass) => (passes.push(pass ?? 0), src.open(pass)), hostWarnings: src.hostWarnings };
  const engine = await createEngine();
  const parts: Buffer[] = [];
  await engine.convert(wrapped, (b) => parts.push(Buffer.from(b)), { format, traceName: "t" });
  let out = Buffer.concat(parts);
  let said: string[] = [];
  if (format === "chrome") {
    const text = out.toString("utf8");
    said = (JSON.parse(text).rawtrace.warnings as Array<{ code: string; offset: number }>).map((w) => `${w.code} ${w.offset}`);
    out = Buffer.from(text.replace(/"warnings":\[[^\]]*\]/, '"warnings":[]'));
  }
  return { sha: createHash("sha256").update(out).digest("hex"), passes, said };
}

/** A Blob whose stream() calls are counted. */
function countedBlob(bytes: Uint8Array): { blob: Blob; streams: () => number } {
  const blob = new Blob([bytes]);
  let n = 0;
  const orig = blob.stream.bind(blob);
  blob.stream = () => {
    n++;
    return orig();
  };
  return { blob, streams: () => n };
}

for (const format of ["timeline", "chrome"] as const) {
  test(`keep: ${format} reads the file once, same bytes as memory`, async () => {
    const want = await convert(memorySource(DUMP, "t.rawtrace"), format);
    assert.equal(want.passes, [1, 3, 2], "the sample needs the projection pass");
    for (const blockBytes of [4093, 1 << 20, undefined]) {
      const { blob, streams } = countedBlob(DUMP);
      const src = fileByteSource(blob, "t.rawtrace", { keep: true, blockBytes });
      const got = await convert(src, format);
      assert.is(got.sha, want.sha, `block ${blockBytes}`);
      assert.is(streams(), 1, `block ${blockBytes}: File.stream() calls`);
      assert.is(src.fileReads, 1);
      assert.is(src.fileBytesRead, DUMP.length, "progress counts the replayed bytes");
    }
  });
}

test("keep: .gz is kept compressed and gunzipped again on replay", async () => {
  const want = await convert(memorySource(DUMP, "t.rawtrace"), "timeline");
  const gz = gzipSync(DUMP, { level: 1 });
  const { blob, streams } = countedBlob(gz);
  const src = fileByteSource(blob, "t.rawtrace.gz", { keep: true, blockBytes: 7000, inflate });
  const got = await convert(src, "timeline");
  assert.is(got.sha, want.sha);
  assert.is(streams(), 1);
  assert.is(src.fileBytesRead, gz.length, "progress in compressed bytes");
});

test(".gz as the CLI reads it: several members give every member's bytes; a bad trailer keeps every byte and is said; a cut file is no damage", async () => {
  const want = await convert(memorySource(DUMP, "t.rawtrace"), "chrome");
  const members = Buffer.concat([gzipSync(DUMP.subarray(0, 150000)), gzipSync(DUMP.subarray(150000, 300000)), gzipSync(DUMP.subarray(300000))]);
  const two = fileByteSource(new Blob([members]), "t.rawtrace.gz", { keep: true, inflate });
  assert.is((await convert(two, "chrome")).sha, want.sha, "three members: the whole dump");
  assert.is(two.gzipDamage, undefined);
  const bad = Buffer.from(gzipSync(DUMP));
  bad[bad.length - 5] ^= 0x40; // its length
  const badSrc = fileByteSource(new Blob([bad]), "t.rawtrace.gz", { inflate });
  const badOut = await convert(badSrc, "chrome");
  assert.is(badOut.sha, want.sha, "a bad trailer: every byte");
  assert.equal(badOut.said, [`GZIP_DAMAGED ${bad.length - 8}`], "said in the output too");
  assert.equal(badSrc.gzipDamage, { compressedAt: bad.length - 8, decompressed: DUMP.length, message: "a gzip member's checksum or length does not match its data", truncated: false, filler: 0, verifiedTo: 0 });
  const cut = fileByteSource(new Blob([gzipSync(DUMP).subarray(0, 60000)]), "t.rawtrace.gz", { inflate });
  await convert(cut, "chrome");
  assert.is(cut.gzipDamage?.truncated, true);
  assert.is(gzipDamageFor(cut.gzipDamage, [{ code: "TRUNCATED", count: 1, offset: 0, detail: 0, message: "" }]), null,
    "a file cut short: the core reports the truncated dump, as the CLI");
  // Cut inside its 8-byte trailer: the dump is whole, so only GZIP_DAMAGED says its checksum went unchecked (the
  // viewer said nothing before).
  const whole = gzipSync(DUMP);
  const trailerCut = fileByteSource(new Blob([whole.subarray(0, whole.length - 4)]), "t.rawtrace.gz", { inflate });
  assert.is((await convert(trailerCut, "chrome")).sha, want.sha, "every byte of the dump");
  assert.is(gzipDamageFor(trailerCut.gzipDamage, [])?.code, "GZIP_DAMAGED");
  // Damaged before its first byte of dump: the read fails, naming the damage.
  const broken = Buffer.from(gzipSync(DUMP));
  broken.fill(0xff, 12, 40);
  const e = await convert(fileByteSource(new Blob([broken]), "t.rawtrace.gz", { inflate }), "chrome").catch((x: Error) => x);
  assert.match((e as Error).message, /^cannot decompress \(damaged gzip\): at compressed byte \d+, before any byte of the dump: invalid/);
});

test(".gz whose member's trailer straddles two of the stream's chunks, another member after it: every byte (before: 'memory access out of bounds')", async () => {
  const want = await convert(memorySource(DUMP, "t.rawtrace"), "chrome");
  const rest = gzipSync(DUMP.subarray(200000));
  // Stored data ending in the last 8 bytes of a 64 KiB chunk: the trailer needs the next chunk.
  let tried = 0;
  for (let n = 65400; n < 65560; n++) {
    const a = gzipSync(DUMP.subarray(0, n), { level: 0 });
    if (a.length <= 65536 || a.length - 8 >= 65536) continue;
    tried++;
    const gz = Buffer.concat([a, gzipSync(DUMP.subarray(n, 200000)), rest]);
    const read = () => new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < gz.length; i += 65536) c.enqueue(gz.subarray(i, i + 65536));
        c.close();
      },
    });
    const src = fileByteSource(new Blob([gz]), "t.rawtrace.gz", { inflate, read });
    assert.is((await convert(src, "chrome")).sha, want.sha, `${a.length - 65536} trailer bytes in the next chunk`);
    assert.is(src.gzipDamage, undefined);
  }
  assert.is(tried, 7);
});

test(".gz with bytes between members that start none: every member read, said where they start (with the bytes of dump converted in all, as the CLI); only zeros at the end not said", async () => {
  const want = await convert(memorySource(DUMP, "t.rawtrace"), "chrome");
  const a = gzipSync(DUMP.subarray(0, 150000));
  const b = gzipSync(DUMP.subarray(150000));
  // The stream's chunks are 64 KiB: the next member's magic straddles two of them, after zeros over several.
  const chunked = (gz: Uint8Array) => () => new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < gz.length; i += 65536) c.enqueue(gz.subarray(i, i + 65536));
      c.close();
    },
  });
  const pad = 3 * 65536 - a.length % 65536 - 1;
  const zeros = Buffer.concat([a, Buffer.alloc(pad), b]);
  const src = fileByteSource(new Blob([zeros]), "t.rawtrace.gz", { inflate, read: chunked(zeros) });
  const zerosOut = await convert(src, "chrome");
  assert.is(zerosOut.sha, want.sha, "every member (before: the first only, with no damage said)");
  assert.equal(zerosOut.said, [`GZIP_DAMAGED ${a.length}`], "said in the output too");
  assert.equal(src.gzipDamage, {
    compressedAt: a.length, decompressed: DUMP.length, truncated: false, filler: 0,
    message: `${pad} bytes after a gzip member are not a gzip member (zeros): skipped up to the next member at compressed byte ${a.length + pad}`,
  });
  const tail = Buffer.concat([a, b, Buffer.alloc(pad)]);
  const tailSrc = fileByteSource(new Blob([tail]), "t.rawtrace.gz", { inflate, read: chunked(tail) });
  assert.is((await convert(tailSrc, "chrome")).sha, want.sha);
  assert.is(tailSrc.gzipDamage, undefined, "only zeros after the last member: padding, nothing lost");
  // A bad trailer, then a member: the bytes converted are all of them (before: those before the damage, 150000).
  const bad = Buffer.from(a);
  bad[bad.length - 8] ^= 1;
  const badSrc = fileByteSource(new Blob([Buffer.concat([bad, b])]), "t.rawtrace.gz", { inflate });
  assert.is((await convert(badSrc, "chrome")).sha, want.sha);
  assert.is(badSrc.gzipDamage?.decompressed, DUMP.length);
});

test(".gz with a damaged block in a middle member: the members after it read, and the bytes of dump converted counted without the zeros that keep them at their offset, as the CLI", async () => {
  const third = Math.floor(DUMP.length / 3);
  const [a, b, c] = [DUMP.subarray(0, third), DUMP.subarray(third, 2 * third), DUMP.subarray(2 * third)].map((p) => gzipSync(p));
  const mod = await inflate!();
  let found: { gz: Buffer; out: Uint8Array; filler: number } | null = null;
  for (let at = 2000; at < b.length - 400 && !found; at += 977) {
    const bad = Buffer.from(b);
    bad.fill(0xff, at, at + 300);
    const gz = Buffer.concat([a, bad, c]);
    const { out, damage } = gunzipBytes(mod, gz);
    if (damage && (damage.filler ?? 0) > 0) found = { gz, out, filler: damage.filler! };
  }
  assert.ok(found, "a damaged block whose member is filled with zeros");
  const src = fileByteSource(new Blob([found!.gz]), "t.rawtrace.gz", { inflate });
  const got = await convert(src, "chrome");
  assert.is(got.said.filter((s) => s.startsWith("GZIP_DAMAGED")).length, 1);
  assert.is(src.gzipDamage?.filler, found!.filler);
  assert.is(src.gzipDamage?.decompressed, found!.out.length - found!.filler, "the dump's bytes, not the zeros (before: with them)");
  assert.ok(found!.out.length - found!.filler < DUMP.length);
});

test(".gz whose damaged middle member decoded past its length: the bytes over and the zeros that put the last member back on the dump's 8-byte offsets, as the CLI says them", async () => {
  const third = Math.floor(DUMP.length / 3);
  const [a, b, c] = [DUMP.subarray(0, third), DUMP.subarray(third, 2 * third), DUMP.subarray(2 * third)];
  const keep = Math.floor(b.length / 2);
  const gz = Buffer.concat([gzipSync(a), overrunMember(b, keep, b.length - keep + 11), gzipSync(c)]);
  const { out } = gunzipBytes(await inflate!(), gz);
  const src = fileByteSource(new Blob([gz]), "t.rawtrace.gz", { inflate });
  const got = await convert(src, "chrome");
  assert.is(got.said.filter((s) => s.startsWith("GZIP_DAMAGED")).length, 1);
  assert.equal([src.gzipDamage?.overrun, src.gzipDamage?.filler], [11, 5], "11 bytes over, 5 zeros (before: none, and the members after it 3 bytes late)");
  assert.is(src.gzipDamage?.decompressed, out.length - 5);
});

test(".gz that gives no byte says at which compressed byte and why, in the CLI's words: a cut or damaged gzip header, a file cut in its first block (the viewer said 'within the first N compressed bytes', the CLI 'file ends before the 16-byte preamble')", async () => {
  const gz = Buffer.from(gzipSync(DUMP));
  const flip = (at: number, bit: number) => {
    const b = Buffer.from(gz);
    b[at] ^= 1 << bit;
    return b;
  };
  const cases: Array<[string, Uint8Array, RegExp]> = [
    ["cut in its header", gz.subarray(0, 5), /^at compressed byte 5, before any byte of the dump: the file ends inside its gzip header$/],
    ["a bad compression method", flip(2, 0), /^at compressed byte 0, before any byte of the dump: incorrect header check$/],
    // (its extra field's length is then two bytes of the deflate data: the data read after it is no deflate data)
    ["FEXTRA set", flip(3, 2), /^at compressed byte \d+, before any byte of the dump: \S/],
    ["cut in its first block", gz.subarray(0, 18), /^at compressed byte 18, before any byte of the dump: the file ends inside a gzip member$/],
  ];
  for (const [what, bytes, want] of cases) {
    const e = await convert(fileByteSource(new Blob([bytes]), "t.rawtrace.gz", { inflate }), "chrome").catch((x: Error) => x);
    assert.ok(e instanceof Error, what);
    assert.match((e as Error).message, new RegExp(`^cannot decompress \\(damaged gzip\\): ${want.source.slice(1)}`), what);
  }
});

test("without keep every pass reads the file; with keep the emit pass releases the kept bytes", async () => {
  const want = await convert(memorySource(DUMP, "t.rawtrace"), "timeline");
  const plain = countedBlob(DUMP);
  const src = fileByteSource(plain.blob, "t.rawtrace");
  assert.is((await convert(src, "timeline")).sha, want.sha);
  assert.is(plain.streams(), 3);
  assert.is(src.fileReads, 3);

  const kept = countedBlob(DUMP);
  const k = fileByteSource(kept.blob, "t.rawtrace", { keep: true, blockBytes: 65536 });
  await convert(k, "timeline");
  // The emit pass (2) dropped every block it handed over: nothing is left to replay.
  const r = await k.open(2);
  const buf = new Uint8Array(1 << 16);
  try {
    await r.read(buf);
    assert.unreachable("read after release");
  } catch (e) {
    assert.match((e as Error).message, /already released/);
  }
  await r.close?.();
});

test("keep: a first read cut short is not replayed (the next pass reads the file again)", async () => {
  const { blob, streams } = countedBlob(DUMP);
  const src = fileByteSource(blob, "t.rawtrace", { keep: true, blockBytes: 4096 });
  const r = await src.open(1);
  const buf = new Uint8Array(10000);
  assert.is(await r.read(buf), buf.length);
  await r.close?.();
  const want = await convert(memorySource(DUMP, "t.rawtrace"), "timeline");
  assert.is((await convert(src, "timeline")).sha, want.sha);
  assert.is(streams(), 2, "the cut-short read, then one full read for the conversion");
});

test.run();
