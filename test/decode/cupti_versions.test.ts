/**
 * Every pinned CUPTI version (CUDA 11.8, 12.9, 13.0U1, 13.5) beyond the field-exact golden test
 * (cupti_fixtures.test.ts): the decoder's built-in record sizes (used for a dump without KIND_SIZES) and the record
 * builders of src/tools/cupti_records.ts agree with the sizeof of the real structs, and `rawtrace info` names the
 * version without calling it unknown. Inputs: the golden fixtures of test/fixtures/cupti/make.sh, compiled from the
 * headers of scripts/cuda-headers.sh.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CHUNK_HEADER_SIZE, ChunkType, PREAMBLE_SIZE } from "../../src/format/container.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { toChrome } from "../helpers/convert.js";
import { CUDA_TAGS, cudaDefine, type CudaTag } from "../helpers/cupti_headers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OUT = join(ROOT, "build/fixtures/cupti");
const LAYOUT: Record<CudaTag, C.CuptiLayout> = { cu118: "cuda11", cu12: "cuda12", cu13: "cuda13", cu135: "cuda135" };
/** CUPTI_ACTIVITY_KIND_PCIE: in every fixture, unknown to the decoder (stepped over by its KIND_SIZES stride only). */
const PCIE = 46;

test.before(() => {
  execFileSync("bash", [join(ROOT, "test/fixtures/cupti/make.sh")], { stdio: ["ignore", "ignore", "inherit"] });
});

interface Chunk { type: number; payload: Uint8Array }

/** The chunks of a (valid) file, in order. */
function chunks(file: Uint8Array): Chunk[] {
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const out: Chunk[] = [];
  for (let off = PREAMBLE_SIZE; off < file.length;) {
    const len = dv.getUint32(off + 12, true);
    out.push({ type: dv.getUint16(off + 4, true), payload: file.subarray(off + CHUNK_HEADER_SIZE, off + CHUNK_HEADER_SIZE + len) });
    off += CHUNK_HEADER_SIZE + ((len + 7) & ~7);
  }
  return out;
}

/** KIND_SIZES payload → kind → size. */
function kindSizes(p: Uint8Array): Map<number, number> {
  const dv = new DataView(p.buffer, p.byteOffset, p.byteLength);
  const m = new Map<number, number>();
  for (let i = 0, n = dv.getUint32(0, true); i < n; i++) m.set(dv.getUint32(4 + i * 8, true), dv.getUint32(8 + i * 8, true));
  return m;
}

/**
 * The fixture rewritten without its PCIE record (a kind no built-in table sizes), with or without the KIND_SIZES
 * chunk; everything else byte for byte (the END totals are recounted).
 */
function rewrite(file: Uint8Array, keepKindSizes: boolean): Uint8Array {
  const cs = chunks(file);
  const sizes = kindSizes(cs.find((c) => c.type === ChunkType.KIND_SIZES)!.payload);
  const w = RawtraceWriter.inMemory();
  for (const c of cs) {
    if (c.type === ChunkType.END) continue;
    if (c.type === ChunkType.KIND_SIZES && !keepKindSizes) continue;
    let p = c.payload;
    if (c.type === ChunkType.ACTIVITY) {
      const dv = new DataView(p.buffer, p.byteOffset, p.byteLength);
      const keep: Uint8Array[] = [];
      for (let at = 0; at < p.length;) {
        const kind = dv.getUint32(at, true);
        const size = sizes.get(kind)!;
        if (kind !== PCIE) keep.push(p.subarray(at, at + size));
        at += size;
      }
      p = C.concat(keep);
    }
    w.chunk(c.type, p);
  }
  w.end();
  return w.bytes();
}

for (const tag of CUDA_TAGS) {
  test(`${tag}: the decoder's built-in sizes are the header structs' (a dump without KIND_SIZES decodes the same)`, async () => {
    const file = new Uint8Array(readFileSync(join(OUT, `${tag}.rawtrace`)));
    const withSizes = await toChrome(rewrite(file, true), { allApi: true }, `${tag}.rawtrace`);
    const builtin = await toChrome(rewrite(file, false), { allApi: true }, `${tag}.rawtrace`);
    assert.ok(withSizes.trace.traceEvents.length > 40, "the fixture's events");
    assert.equal(builtin.trace.traceEvents, withSizes.trace.traceEvents);
    assert.equal(builtin.trace.deviceProperties, withSizes.trace.deviceProperties);
    // The same warnings; their offsets are the chunks', which move by the KIND_SIZES chunk left out.
    const noOffset = (ws: typeof withSizes.result.info.warnings) => ws.map(({ offset: _, ...w }) => w);
    assert.equal(noOffset(builtin.result.info.warnings), noOffset(withSizes.result.info.warnings));
    assert.equal(builtin.result.info.records, withSizes.result.info.records);
  });

  test(`${tag}: src/tools/cupti_records.ts writes the header structs' sizes and CUPTI_API_VERSION`, () => {
    const file = new Uint8Array(readFileSync(join(OUT, `${tag}.rawtrace`)));
    const real = kindSizes(chunks(file).find((c) => c.type === ChunkType.KIND_SIZES)!.payload);
    const L = LAYOUT[tag];
    let compared = 0;
    for (const [kind, size] of Object.entries(C.SIZES[L])) {
      if (!real.has(Number(kind))) continue;
      assert.is(size, real.get(Number(kind)), `${L} kind ${kind}`);
      compared++;
    }
    assert.ok(compared >= 16, `${compared} kinds compared`);
    assert.is(C.LAYOUT_VERSION[L], cudaDefine(tag, "cupti_version.h", "CUPTI_API_VERSION"));
  });
}

test("rawtrace info names the CUPTI version of every pinned release, 13.5 included, and calls none unknown", () => {
  const files = CUDA_TAGS.map((t) => join(OUT, `${t}.rawtrace`));
  const r = spawnSync(process.execPath, ["--import", "tsx", "src/cli.ts", "info", ...files], {
    cwd: ROOT, encoding: "utf8", timeout: 60_000,
  });
  assert.is(r.status, 0, r.stderr);
  for (const tag of CUDA_TAGS) {
    const api = cudaDefine(tag, "cupti_version.h", "CUPTI_API_VERSION");
    const rt = cudaDefine(tag, "cuda_runtime_api.h", "CUDART_VERSION");
    assert.match(r.stdout, `${tag}.rawtrace: `);
    assert.match(r.stdout, `vendor        cuda (tracing library ${api}, runtime ${rt},`, tag);
  }
  assert.match(r.stdout, "tracing library 130500, runtime 13050");
  assert.not.match(r.stdout, "UNKNOWN_VENDOR_VERSION");
});

test.run();
