/**
 * A damaged gzip input's bytes after its first damage are not read as records of a buffer chunk the input's end cut
 * (whose checksum cannot vouch for them): a damaged member followed by junk holding a chance member header with XFL
 * and OS bytes a gzip writer writes (trusted as a member: 1 chance in about 1,400) left the dump shorter than its
 * activity chunk, read as cut by the input's end, and that chunk's "whole records" in the bytes decoded from the
 * damaged member became events with values the dump never held ("<unknown kernel>" on a lane of its own). The gzip
 * reader now says up to where its bytes are the file's own (GunzipDamage.verifiedTo: a damaged member's start), the
 * Node source passes it on (ByteSource.unverifiedFrom), and the core reads a cut buffer no further.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { memorySource, type ByteSource } from "../../src/core/engine.js";
import { fileSource, withSourceWarnings } from "../../src/node/file_source.js";
import { createEngine } from "../../src/node/wasm.js";
import { gunzipBytes } from "../../src/core/gunzip.js";
import { toChrome, warningOf } from "../helpers/convert.js";
import { chunkSpans } from "../helpers/dump_chunks.js";
import { CHUNK_HEADER_SIZE } from "../../src/format/container.js";
import { fileByteSource } from "../../web/file_source.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ALEXNET = new Uint8Array(readFileSync(`${ROOT}samples/alexnet_a100_rank0.rawtrace`));
/**
 * The sample in 8 KiB gzip members (bench/damage_loss.ts --gzip, mutator damaged+magic-junk, run 0): the sixth damaged,
 * then junk holding a member header with plausible XFL/OS, then the seventh.
 */
const DAMAGED = `${ROOT}test/fixtures/gzip/alexnet_damaged_magic_junk.rawtrace.gz`;

/**
 * An event's name, time and the fields garbage would change: the same in the output as in the original's. The name
 * and correlation id too: the garbage kernel of the damaged member has a real kernel's time, lane, grid and block
 * (the bytes before it decoded well), only its name (`<unknown kernel>`) and correlation are not the dump's.
 */
const key = (e: any) => JSON.stringify([e.name, e.ts, e.dur, e.tid, e.args?.device, e.args?.stream, e.args?.grid, e.args?.block, e.args?.["registers per thread"], e.args?.correlation]);

test("a damaged member then a chance member header: no event holds values the dump does not; what it vouches for converts", async () => {
  const { trace: orig } = await toChrome(ALEXNET);
  const known = new Set(orig.traceEvents.filter((e) => e.ph === "X").map(key));
  const eng = await createEngine();
  const src = fileSource(DAMAGED);
  const parts: Buffer[] = [];
  try {
    const result = withSourceWarnings(src, await eng.convert(src, (b) => parts.push(Buffer.from(b)), {}));
    const trace = JSON.parse(Buffer.concat(parts).toString("utf8"));
    const x = trace.traceEvents.filter((e: any) => e.ph === "X");
    assert.equal(x.filter((e: any) => !known.has(key(e))).map((e: any) => `${e.name} ${e.ts}`), []);
    assert.ok(x.length > 100, `the records before the damaged member still convert (${x.length})`);
    assert.ok(warningOf(result, "GZIP_DAMAGED"));
    assert.ok(warningOf(result, "TRUNCATED"));
  } finally {
    src.close();
  }
  // The reader (the viewer's too): not a plain cut, and what it vouches for ends where the damaged member's bytes begin.
  const { damage } = gunzipBytes(new WebAssembly.Module(readFileSync(`${ROOT}build/inflate.wasm`)), new Uint8Array(readFileSync(DAMAGED)));
  assert.ok(damage && !damage.truncated);
  assert.is(damage!.verifiedTo, 5 * 8192);
});

test("a buffer chunk cut by the input's end is read no further than the source's unverifiedFrom", async () => {
  const act = chunkSpans(ALEXNET).find((c) => c.type === 5 && c.len > 20000)!;
  const cutAt = act.off + CHUNK_HEADER_SIZE + 16000;
  const cut = ALEXNET.slice(0, cutAt);
  const plain = await toChrome(cut);
  const limit = act.off + CHUNK_HEADER_SIZE + 4000;
  const src: ByteSource = { ...memorySource(cut, "cut.rawtrace"), unverifiedFrom: () => limit };
  const eng = await createEngine();
  const parts: Buffer[] = [];
  const result = await eng.convert(src, (b) => parts.push(Buffer.from(b)), {});
  const trace = JSON.parse(Buffer.concat(parts).toString("utf8"));
  const n = (t: any) => t.traceEvents.filter((e: any) => e.ph === "X").length;
  assert.ok(n(trace) < n(plain.trace), `fewer events than the plain cut reads (${n(trace)} of ${n(plain.trace)})`);
  // The records past the limit are lost, and said.
  assert.ok(result.info.loss.ranges.some((r) => r.from <= limit && r.to >= cutAt), JSON.stringify(result.info.loss.ranges));
  // Every record before it still converts: the limit at the cut reads as the plain cut.
  const same = await eng.convert({ ...memorySource(cut, "cut.rawtrace"), unverifiedFrom: () => cutAt }, () => {}, {});
  assert.is(same.events, plain.result.events);
});

test("a buffer chunk whose bytes past the source's unverifiedFrom are not its own (a gzip member cut short, the next members after): its records before that point convert, as a cut buffer's, in both of its shapes", async () => {
  const act = chunkSpans(ALEXNET).find((c) => c.type === 5 && c.len > 20000)!;
  const payloadAt = act.off + CHUNK_HEADER_SIZE;
  const end = payloadAt + ((act.len + 7) & ~7);
  const eng = await createEngine();
  /** Converts `bytes` through a source whose unverifiedFrom is `from(pass, whether that pass read to the end)`. */
  const run = async (bytes: Uint8Array, from: (pass: number, eof: boolean) => number | undefined) => {
    let pass = 0;
    let eof = false;
    const base = memorySource(bytes, "t.rawtrace");
    const open = (p?: 1 | 2 | 3) => {
      pass = p ?? 1;
      eof = false;
      const r = base.open(p) as { read(dst: Uint8Array): number };
      return { read: (dst: Uint8Array) => { const n = r.read(dst); eof ||= n === 0; return n; } };
    };
    const src: ByteSource = { ...base, open, unverifiedFrom: () => from(pass, eof) };
    const parts: Buffer[] = [];
    const result = await eng.convert(src, (b) => parts.push(Buffer.from(b)), {});
    return { result, x: JSON.parse(Buffer.concat(parts).toString("utf8")).traceEvents.filter((e: any) => e.ph === "X") };
  };
  const { trace: orig } = await toChrome(ALEXNET);
  const known = new Set(orig.traceEvents.filter((e) => e.ph === "X").map(key));
  for (const at of [payloadAt + 3000, payloadAt + 16001, payloadAt + act.len - 500]) {
    // The file cut there: the records it still holds (the most any shape below can give of this chunk).
    const cut = await toChrome(ALEXNET.slice(0, at));
    const cutKeys = new Set(cut.trace.traceEvents.filter((e) => e.ph === "X").map(key));
    assert.ok(cutKeys.size >= 40, `${cutKeys.size} events in the file cut ${at - payloadAt} bytes into the buffer`);
    const shapes: Array<[string, Uint8Array]> = [
      // Zeros from there to the chunk's end, then the rest: whole by its length, its checksum fails.
      ["its length whole", new Uint8Array([...ALEXNET.subarray(0, at), ...new Uint8Array(end - at), ...ALEXNET.subarray(end)])],
      // 1,000 bytes of it lost, 8 zeros, then the rest: its length runs into the chunks after it.
      ["shorter", new Uint8Array([...ALEXNET.subarray(0, at), ...new Uint8Array(8), ...ALEXNET.subarray(Math.min(end, at + 1000 + ((end - at) % 8)))])],
    ];
    for (const [what, bytes] of shapes) {
      const { result, x } = await run(bytes, () => at);
      const keys = new Set(x.map(key));
      const missing = [...cutKeys].filter((k) => !keys.has(k));
      assert.equal(missing, [], `${what}, unverified from ${at - payloadAt} into the payload: every record the cut file holds`);
      assert.equal(x.filter((e: any) => !known.has(key(e))).map((e: any) => `${e.name} ${e.ts}`), [], `${what}: nothing the dump does not hold`);
      assert.ok(result.info.loss.ranges.some((r) => r.from <= at + 8 && r.to > at), `${what}: the rest said lost ${JSON.stringify(result.info.loss.ranges)}`);
      // Learned at pass 1's end only (the damaged member's bytes given before the damage was found): both passes read
      // the chunk as pass 1 decided — lost whole when it decided at the chunk, read up to there when it decided at
      // the input's end (a chunk the end cuts) — never one pass differently from the other.
      const late = await run(bytes, (pass, eof) => (pass >= 2 || eof ? at : undefined));
      const none = await run(bytes, () => undefined);
      const expected = what === "shorter" ? x : none.x;
      assert.equal(late.x.map(key), expected.map(key), `${what}: known at pass 1's end`);
    }
  }
});

test("a buffer chunk read up to unverifiedFrom, then the file cut inside a later chunk: that cut is still said lost (the salvage's count of kept bytes is not taken for the end's cut buffer)", async () => {
  const act = chunkSpans(ALEXNET).find((c) => c.type === 5 && c.len > 20000)!;
  const payloadAt = act.off + CHUNK_HEADER_SIZE;
  const end = payloadAt + ((act.len + 7) & ~7);
  const at = payloadAt + 16001;
  const next = chunkSpans(ALEXNET).find((c) => c.off === end)!;
  assert.ok(next && next.type !== 5, "a small chunk after the buffer");
  // The buffer's bytes from `at` zeroed (its checksum fails, its records before `at` kept), the file cut inside the next chunk.
  const bytes = new Uint8Array([...ALEXNET.subarray(0, at), ...new Uint8Array(end - at), ...ALEXNET.subarray(end, next.off + CHUNK_HEADER_SIZE + 20)]);
  const eng = await createEngine();
  const result = await eng.convert({ ...memorySource(bytes, "t.rawtrace"), unverifiedFrom: () => at }, () => {}, {});
  assert.ok(warningOf(result, "TRUNCATED"), JSON.stringify(result.info.warnings));
  // (Neighbouring ranges are merged: the buffer's bytes past unverifiedFrom, then the cut chunk's.)
  const covers = (from: number, to: number) => result.info.loss.ranges.some((r) => r.from <= from && r.to >= to);
  assert.ok(covers(next.off, bytes.length), `the cut chunk's bytes lost (before: not counted): ${JSON.stringify(result.info.loss.ranges)}`);
  assert.ok(covers(at, end), `the buffer's bytes past unverifiedFrom lost: ${JSON.stringify(result.info.loss.ranges)}`);
  assert.not.ok(result.info.loss.ranges.some((r) => r.from < at - 100), `its records before unverifiedFrom kept: ${JSON.stringify(result.info.loss.ranges)}`);
});

test("zeros between members before the damage: the damaged member's bytes are still not read as a cut buffer's records", async () => {
  // 16 zero bytes between the first two members (padding: skipped, said, every byte still the file's own), then the
  // fixture's damage: the first damage the walk meets is the zeros, which vouch for every byte; the damaged member's
  // start, met later, is where the bytes stop being the file's own.
  const gz = new Uint8Array(readFileSync(DAMAGED));
  const second = 1427; // the second member's header (the first's 10 bytes again)
  assert.equal(Array.from(gz.subarray(second, second + 10)), Array.from(gz.subarray(0, 10)));
  const padded = Buffer.concat([gz.subarray(0, second), Buffer.alloc(16), gz.subarray(second)]);
  const { trace: orig } = await toChrome(ALEXNET);
  const known = new Set(orig.traceEvents.filter((e) => e.ph === "X").map(key));
  const dir = mkdtempSync(join(tmpdir(), "rt-unverified-"));
  const path = join(dir, "padded.rawtrace.gz");
  writeFileSync(path, padded);
  const eng = await createEngine();
  try {
    const src = fileSource(path);
    const parts: Buffer[] = [];
    try {
      const result = withSourceWarnings(src, await eng.convert(src, (b) => parts.push(Buffer.from(b)), {}));
      const x = JSON.parse(Buffer.concat(parts).toString("utf8")).traceEvents.filter((e: any) => e.ph === "X");
      assert.equal(x.filter((e: any) => !known.has(key(e))).map((e: any) => `${e.name} ${e.ts}`), [], "the CLI's source");
      assert.ok(x.length > 100, `the records before the damaged member still convert (${x.length})`);
      assert.ok(warningOf(result, "GZIP_DAMAGED"));
      assert.is(src.unverifiedFrom?.(), 5 * 8192);
    } finally {
      src.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // The viewer's source: the same limit, the same events.
  const inflate = async () => new WebAssembly.Module(readFileSync(`${ROOT}build/inflate.wasm`));
  const web = fileByteSource(new Blob([padded]), "padded.rawtrace.gz", { inflate });
  const parts: Buffer[] = [];
  await eng.convert(web, (b) => parts.push(Buffer.from(b)), {});
  const x = JSON.parse(Buffer.concat(parts).toString("utf8")).traceEvents.filter((e: any) => e.ph === "X");
  assert.equal(x.filter((e: any) => !known.has(key(e))).map((e: any) => `${e.name} ${e.ts}`), [], "the viewer's source");
  assert.is(web.unverifiedFrom?.(), 5 * 8192);
});

test.run();
