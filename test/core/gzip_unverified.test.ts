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
