/**
 * A gzip input cut short (src/node/file_source.ts): cut inside a member's data, the dump's own TRUNCATED says what is
 * missing; cut inside a member's 8-byte trailer (CRC-32 and length) or inside a later member's header, the dump is
 * whole and only GZIP_DAMAGED can say that the gzip stream was cut (its checksum unchecked). Before, such a file
 * converted with no warning at all.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fs, { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { convertFile } from "../../src/node/convert.js";
import { fileSource } from "../../src/node/file_source.js";
import { gunzipBytes } from "../../src/core/gunzip.js";
import { generate } from "../../bench/generate.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { overrunMember } from "../helpers/gzip_overrun.js";
import { withoutInflatedCopy } from "../helpers/no_inflated_copy.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-gz-cut-"));
const raw = Buffer.from(sampleDump());
const gz = gzipSync(raw, { level: 6 });

/** Converts `bytes` (a .rawtrace.gz) to Chrome JSON: its warnings and the number of events written. */
async function convert(name: string, bytes: Uint8Array) {
  const input = join(tmp, `${name}.rawtrace.gz`);
  writeFileSync(input, bytes);
  const out = join(tmp, `${name}.json`);
  const r = await convertFile(input, out, { force: true });
  const t = JSON.parse(readFileSync(out, "utf8"));
  // The JSON's own warnings are the result's, GZIP_DAMAGED too (the host hands it to the core before the end).
  const said = (ws: Array<{ code: string; offset: number; detail: number }>) => ws.map((w) => `${w.code} ${w.offset} ${w.detail}`).sort();
  assert.equal(said(t.rawtrace.warnings), said(r.info.warnings), `${name}: the output's warnings`);
  return { warnings: r.info.warnings, events: t.traceEvents.length as number };
}

test("cut inside the last member's trailer (1 to 8 bytes missing): every event, and GZIP_DAMAGED at the trailer", async () => {
  const whole = await convert("whole", gz);
  assert.not.ok(whole.warnings.some((w) => w.code === "GZIP_DAMAGED" || w.code === "TRUNCATED"));
  for (let k = 1; k <= 8; k++) {
    const r = await convert(`trailer${k}`, gz.subarray(0, gz.length - k));
    assert.is(r.events, whole.events, `${k} bytes missing: every event`);
    const w = r.warnings.find((x) => x.code === "GZIP_DAMAGED");
    assert.ok(w, `${k} bytes missing: said (${JSON.stringify(r.warnings)})`);
    assert.is(w!.offset, gz.length - 8, `${k}: at the trailer`);
    assert.is(w!.detail, raw.length, `${k}: the whole dump converted`);
    assert.match(w!.message, "the file ends inside a gzip member's 8-byte trailer");
    assert.not.ok(r.warnings.some((x) => x.code === "TRUNCATED" || x.code === "NO_END"), `${k}: the dump itself is whole`);
  }
});

test("cut inside a later member's header: GZIP_DAMAGED where it starts; cut inside a member's data: the dump's TRUNCATED only", async () => {
  const two = Buffer.concat([gz, gzipSync(raw.subarray(0, 64))]);
  for (const k of [1, 2, 9]) {
    const r = await convert(`header${k}`, two.subarray(0, gz.length + k));
    const w = r.warnings.find((x) => x.code === "GZIP_DAMAGED");
    assert.ok(w, `${k} header bytes: said`);
    assert.is(w!.offset, gz.length);
  }
  const r = await convert("data", gz.subarray(0, Math.floor(gz.length / 2)));
  assert.ok(r.warnings.some((x) => x.code === "TRUNCATED"));
  assert.not.ok(r.warnings.some((x) => x.code === "GZIP_DAMAGED"), "one cut, said once");
});

let smallChunks: Buffer | null = null;
/** A dump of 16 KiB chunks (a bgzip block is 64 KiB, a collector's buffer 8 MiB): whole chunks in every member. */
function smallChunkDump(): Buffer {
  if (!smallChunks) {
    const dumpPath = join(tmp, "small-chunks.rawtrace");
    generate(20000, dumpPath, 16 << 10);
    smallChunks = readFileSync(dumpPath);
  }
  return smallChunks;
}

test("a damaged block in a middle member (bgzip, block-parallel gzip): the members after it are converted too, and no event that is not the dump's", async () => {
  const dump = smallChunkDump();
  const third = Math.floor(dump.length / 3);
  const cuts = [0, third, 2 * third, dump.length];
  const members = cuts.slice(1).map((end, i) => gzipSync(dump.subarray(cuts[i], end)));
  // A run of 0xff in the middle member that fails a block (not one that decodes to a wrong checksum).
  const mod = new WebAssembly.Module(readFileSync("build/inflate.wasm"));
  let bad: Buffer | null = null;
  for (let at = 3000; at < members[1].length - 400 && !bad; at += 977) {
    const m = Buffer.from(members[1]);
    m.fill(0xff, at, at + 300);
    const d = gunzipBytes(mod, Buffer.concat([members[0], m, members[2]])).damage;
    if (d && !d.message.includes("checksum")) bad = m;
  }
  assert.ok(bad, "a block-failing damage");
  // Records' events (NVTX ranges whose end was lost close at the last time: not the dump's own times).
  const keys = (f: string) => (JSON.parse(readFileSync(join(tmp, f), "utf8")).traceEvents as Array<{ ph: string; cat: string; name: string; ts: number; dur: number }>)
    .filter((e) => e.ph === "X" && !e.cat.endsWith("user_annotation")).map((e) => `${e.cat}|${e.name}|${e.ts}|${e.dur}`);
  await convert("mid-plain", gzipSync(dump));
  const damaged = Buffer.concat([members[0], bad!, members[2]]);
  const r = await convert("mid-damaged", damaged);
  // GZIP_DAMAGED counts the dump's bytes the file gave, not the zeros that keep the last member at its offset.
  const { out, damage } = gunzipBytes(mod, damaged);
  const filler = damage!.filler!;
  const w = r.warnings.find((x) => x.code === "GZIP_DAMAGED");
  assert.ok(w && filler > 0, `said, with zeros given (${filler})`);
  assert.is(w!.detail, out.length - filler);
  assert.match(w!.message, `the ${out.length - filler} bytes of dump it still holds were converted (and ${filler} zero bytes in place`);
  await convert("mid-no-last", Buffer.concat([members[0], bad!]));
  const plain = new Set(keys("mid-plain.json"));
  const got = keys("mid-damaged.json");
  for (const k of got) assert.ok(plain.has(k), `an event of the dump: ${k}`);
  const without = keys("mid-no-last.json").length;
  assert.ok(got.length > without, `the last member's events: ${got.length} events, ${without} without it (the same before)`);
});

test("a damaged middle member that decoded past its length (garbage from the damage): the last member's events converted, back on the dump's 8-byte offsets, and the bytes over said (before: every chunk after it lost)", async () => {
  const dump = smallChunkDump();
  const third = Math.floor(dump.length / 3);
  const [a, b, c] = [dump.subarray(0, third), dump.subarray(third, 2 * third), dump.subarray(2 * third)];
  // The middle member gives its first half, then garbage 3 bytes past its length: the last member 3 bytes late.
  const keep = Math.floor(b.length / 2);
  const garbage = b.length - keep + 3;
  const bad = overrunMember(b, keep, garbage);
  const mod = new WebAssembly.Module(readFileSync("build/inflate.wasm"));
  const { out, damage } = gunzipBytes(mod, Buffer.concat([gzipSync(a), bad, gzipSync(c)]));
  assert.equal([damage!.overrun, damage!.filler], [3, 5], "3 bytes over, 5 zeros");
  const keys = (f: string) => (JSON.parse(readFileSync(join(tmp, f), "utf8")).traceEvents as Array<{ ph: string; cat: string; name: string; ts: number; dur: number }>)
    .filter((e) => e.ph === "X" && !e.cat.endsWith("user_annotation")).map((e) => `${e.cat}|${e.name}|${e.ts}|${e.dur}`);
  await convert("over-plain", gzipSync(dump));
  const r = await convert("over-damaged", Buffer.concat([gzipSync(a), bad, gzipSync(c)]));
  await convert("over-no-last", Buffer.concat([gzipSync(a), bad]));
  const plain = new Set(keys("over-plain.json"));
  const got = keys("over-damaged.json");
  for (const k of got) assert.ok(plain.has(k), `an event of the dump: ${k}`);
  const without = keys("over-no-last.json").length;
  // The last member's chunks, all but the one its first byte cuts: most of a third of the dump's events.
  assert.ok(got.length - without > plain.size / 4, `the last member's events: ${got.length} events, ${without} without it (the same before), ${plain.size} in the dump`);
  assert.not.ok(r.warnings.some((w) => w.code === "NO_END"), "the dump's END chunk found");
  const w = r.warnings.find((x) => x.code === "GZIP_DAMAGED");
  assert.is(w!.detail, out.length - 5);
  assert.match(w!.message, `(of which 3 decoded from damaged data past a damaged member's length; and 5 zero bytes in place of lost bytes or up to the next 8-byte offset, which keep the members after the damage at their offsets in the dump)`);
});

test("without the index pass's copy, a file cut short is walked member by member in its first pass only: later passes end where gunzip failed, with the same bytes", () => withoutInflatedCopy(async () => {
  // NVTX ranges: three passes (index, projection, emit). Every pass reads the .gz: no temporary folder for the copy
  // that the later passes read otherwise (src/node/inflated_copy.ts).
  const dump = readFileSync("samples/h100_torch_train_nvtx.rawtrace");
  const gzAll = gzipSync(dump);
  const cases: Array<[string, Buffer]> = [["data", gzAll.subarray(0, gzAll.length - 2000)], ["trailer", gzAll.subarray(0, gzAll.length - 3)]];
  for (const [where, bytes] of cases) {
    const input = join(tmp, `walk-once-${where}.rawtrace.gz`);
    writeFileSync(input, bytes);
    // The member walk reads the pass's descriptor with readSync (src/node/gzip_members.ts); gunzip reads it with
    // asynchronous reads: the passes in which readSync ran are the ones that walked.
    const walked = new Set<number>();
    let pass = 0;
    const readSync = fs.readSync;
    const src = fileSource(input);
    fs.readSync = ((...a: unknown[]) => {
      walked.add(pass);
      return (readSync as (...x: unknown[]) => number)(...a);
    }) as typeof fs.readSync;
    syncBuiltinESMExports();
    const passes: number[] = [];
    const parts: Buffer[] = [];
    let r;
    try {
      r = await (await createEngine()).convert({ ...src, open: (p) => (passes.push((pass = p ?? 0)), src.open(p)), hostWarnings: src.hostWarnings },
        (b) => parts.push(Buffer.from(b)), { format: "chrome" });
    } finally {
      fs.readSync = readSync;
      syncBuiltinESMExports();
      src.close();
    }
    assert.equal(passes, [1, 3, 2], `${where}: three passes`);
    assert.equal([...walked], [1], `${where}: one walk, in the first pass (before: one per pass)`);
    const { out, damage } = gunzipBytes(new WebAssembly.Module(readFileSync("build/inflate.wasm")), bytes);
    assert.ok(damage?.truncated);
    const mem = await (await createEngine()).convert(memorySource(out, "m.rawtrace"), () => {}, { format: "chrome" });
    assert.is(r.events, mem.events, `${where}: every event the bytes hold`);
    const t = JSON.parse(Buffer.concat(parts).toString("utf8"));
    const said = (t.rawtrace.warnings as Array<{ code: string }>).map((w) => w.code);
    assert.ok(where === "data" ? said.includes("TRUNCATED") : said.includes("GZIP_DAMAGED"), `${where}: ${said}`);
  }
}));

test("XSpace lists the host's GZIP_DAMAGED with the core's warnings", async () => {
  const bad = Buffer.from(gz);
  bad[gz.length - 8] ^= 0x01;
  const input = join(tmp, "xs.rawtrace.gz");
  writeFileSync(input, bad);
  const out = join(tmp, "xs.xplane.pb");
  await convertFile(input, out, { force: true, format: "xspace" });
  const space = fromBinary(XSpaceSchema, readFileSync(out));
  assert.ok(space.warnings.some((w) => w.includes(`rawtrace GZIP_DAMAGED: 1 occurrence (first at file offset ${gz.length - 8}, detail ${raw.length})`)), space.warnings.join("\n"));
});

test("a bad CRC-32 or length in the trailer: every event, GZIP_DAMAGED at the trailer", async () => {
  const whole = await convert("whole2", gz);
  for (const at of [gz.length - 8, gz.length - 1]) {
    const bad = Buffer.from(gz);
    bad[at] ^= 0x01;
    const r = await convert(`bad${at}`, bad);
    assert.is(r.events, whole.events);
    assert.is(r.warnings.find((x) => x.code === "GZIP_DAMAGED")?.offset, gz.length - 8);
  }
});

test("a member whose trailer straddles a 1 MiB read, after a bad trailer (the member walk): every byte (before: 'cannot read: memory access out of bounds')", async () => {
  // The walk (gzip_members.ts) reads 1 MiB at a time. A member's stored data ending in the last bytes of a read: its
  // trailer needs the next read, and the header check after it moved the input with the module's stale idea of its
  // length (out of bounds). Tiny empty members (and one with a name of tunable length) put the trailer there.
  const dump = readFileSync("samples/h100_torch_train_nvtx.rawtrace");
  const h = 100000;
  const a = Buffer.from(gzipSync(dump.subarray(0, h)));
  a[a.length - 8] ^= 1; // zlib's gunzip fails: the file is walked member by member from its start
  const empty = gzipSync(Buffer.alloc(0));
  const s = gzipSync(dump.subarray(h), { level: 0 });
  const named = (n: number) => Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 255]), Buffer.alloc(n, 0x61), Buffer.from([0]), empty.subarray(10)]);
  for (const over of [1, 4]) {
    const room = (1 << 20) + over - a.length - s.length - named(0).length;
    const k = Math.floor(room / empty.length) - 1;
    const file = Buffer.concat([a, ...Array<Buffer>(k).fill(empty), named(room - k * empty.length), s]);
    assert.is(file.length, (1 << 20) + over);
    const input = join(tmp, `straddle${over}.rawtrace.gz`);
    writeFileSync(input, file);
    const src = fileSource(input);
    const parts: Buffer[] = [];
    try {
      const r = src.open();
      const buf = new Uint8Array(1 << 16);
      for (let n; (n = await r.read(buf)) > 0;) parts.push(Buffer.from(buf.subarray(0, n)));
      await r.close?.();
    } finally {
      src.close();
    }
    assert.ok(Buffer.concat(parts).equals(dump), `${over} trailer bytes in the next read: every byte`);
    assert.is(src.gzipDamage?.compressedAt, a.length - 8, "the bad trailer said");
  }
});

test("the five vendors' samples gzipped (one member; 4 KiB members) and cut at 40 places each: said, events never fewer as the cut grows, none at a place the whole dump has none", async () => {
  // The gzip twin of test/core/container.test.ts's cut sweep: here the cut also falls inside DEFLATE blocks, member
  // headers and trailers, and the member walk decides where the dump's bytes end.
  const place = (e: { ts: number; pid: number; tid: number }) => `${e.ts}|${e.pid}|${e.tid}`;
  const complete = async (tag: string, bytes: Uint8Array) => {
    const input = join(tmp, `sweep-${tag}.rawtrace.gz`);
    writeFileSync(input, bytes);
    const out = join(tmp, `sweep-${tag}.json`);
    try {
      const r = await convertFile(input, out, { force: true });
      const events = (JSON.parse(readFileSync(out, "utf8")).traceEvents as Array<{ ph: string; ts: number; pid: number; tid: number }>).filter((e) => e.ph === "X");
      return { events, codes: r.info.warnings.map((w) => w.code) };
    } catch (e) {
      // Only a cut before the first dump byte zlib gives, or before the 16-byte preamble, may fail: nothing to convert.
      assert.match(String((e as Error).message), /before any byte of the dump|file ends before the 16-byte preamble/, `${tag}`);
      return { events: [], codes: ["failed"] };
    }
  };
  for (const name of ["alexnet_a100_rank0", "mi250_minitoy_rocprof", "xpu_train_pti", "gaudi2_mlp_synapse", "h100_torch_train_nvtx"]) {
    const dump = readFileSync(new URL(`../../samples/${name}.rawtrace`, import.meta.url));
    const members: Buffer[] = [];
    for (let i = 0; i < dump.length; i += 4096) members.push(gzipSync(dump.subarray(i, i + 4096), { level: 1 }));
    for (const [shape, whole] of [["one", gzipSync(dump, { level: 6 })], ["members", Buffer.concat(members)]] as const) {
      const full = await complete(`${name}-${shape}`, whole);
      assert.equal(full.codes, [], `${name} ${shape}: whole, no warning`);
      const places = new Set(full.events.map(place));
      const stride = Math.ceil(whole.length / 40);
      let last = 0;
      for (let cut = 10; cut < whole.length; cut += stride) {
        const { events, codes } = await complete(`${name}-${shape}-cut`, whole.subarray(0, cut));
        const tag = `${name} ${shape} cut at ${cut} of ${whole.length}`;
        assert.ok(codes.some((c) => c === "failed" || c === "TRUNCATED" || c === "GZIP_DAMAGED"), `${tag}: the cut said (${codes})`);
        assert.ok(events.length >= last, `${tag}: ${events.length} events, ${last} at a shorter cut`);
        last = events.length;
        const extra = events.filter((e) => !places.has(place(e)));
        assert.is(extra.length, 0, `${tag}: ${JSON.stringify(extra[0])}`);
      }
      assert.ok(last <= full.events.length && last > 0, `${name} ${shape}: the last cut converts (${last})`);
    }
  }
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));
test.run();
