/**
 * src/core/gunzip.ts over build/inflate.wasm (assembly/inflate/): the viewer's gunzip. Against zlib on fixed seeds:
 * every level and strategy, stored blocks, longest matches at the farthest distance, short-distance overlaps, inputs
 * fed 1 to 1 MiB bytes at a time; several members; and what the CLI reads of a damaged file (src/node/gzip_members.ts):
 * a bad trailer keeps every byte and goes on, bytes after the last member, a file cut anywhere (only bytes of the
 * original come out, and the cut is said), flipped bits (the output is the original's or the damage is said).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { constants, crc32, deflateRawSync, gunzipSync, gzipSync, inflateRawSync } from "node:zlib";
import { gunzip, gzipHeaderLength, type GunzipDamage } from "../../src/core/gunzip.js";
import { rng } from "../../src/tools/rng.js";
import { overrunMember } from "../helpers/gzip_overrun.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const mod = new WebAssembly.Module(readFileSync(`${ROOT}build/inflate.wasm`));
const SAMPLE = readFileSync(`${ROOT}samples/h100_torch_train_nvtx.rawtrace`);

async function* pieces(b: Uint8Array, n: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < b.length; i += n) yield b.subarray(i, i + n);
}

async function inflate(gz: Uint8Array, step = 1 << 16): Promise<{ out: Buffer; damage: GunzipDamage | null }> {
  const parts: Uint8Array[] = [];
  let damage: GunzipDamage | null = null;
  for await (const c of gunzip(mod, pieces(gz, step), (d) => (damage = d))) parts.push(c);
  return { out: Buffer.concat(parts), damage };
}

/** Inputs that reach every corner of DEFLATE: text, random bytes, runs, far copies, mixtures. */
function inputs(seed: number): Array<[string, Buffer]> {
  const r = rng(seed);
  const rand = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)));
  const text = Buffer.from(Array.from({ length: 20000 }, (_, i) => `{"ph":"X","name":"kernel_${i % 97}","ts":${i * 13},"dur":${i % 7}},`).join(""));
  const far = Buffer.concat([rand(32768), rand(100), rand(32768).fill(7, 0, 300)]);
  far.copy(far, 32768 + 100, 0, 258); // a longest match at the farthest distance
  return [
    ["empty", Buffer.alloc(0)],
    ["one byte", Buffer.from([42])],
    ["random 300 KiB", rand(300 << 10)],
    ["runs", Buffer.concat(Array.from({ length: 200 }, (_, i) => Buffer.alloc(1 + Math.floor(r() * 3000), i & 0xff)))],
    ["period 1..7 overlaps", Buffer.concat(Array.from({ length: 7 }, (_, p) => Buffer.from(Array.from({ length: 5000 }, (_, i) => (i % (p + 1)) + 65))))],
    ["JSON-like text", text],
    ["far matches", far],
    ["a real dump", SAMPLE],
    ["mixture", Buffer.concat([rand(5000), text.subarray(0, 70000), Buffer.alloc(70000), rand(70000)])],
  ];
}

test("the same bytes as the input, for every zlib level and strategy, fed in pieces of 1 B to 1 MiB", async () => {
  const strategies = [constants.Z_DEFAULT_STRATEGY, constants.Z_FILTERED, constants.Z_HUFFMAN_ONLY, constants.Z_RLE, constants.Z_FIXED];
  let cases = 0;
  for (const [what, data] of inputs(20261130)) {
    for (const level of [0, 1, 6, 9]) {
      for (const strategy of level === 0 ? [constants.Z_DEFAULT_STRATEGY] : strategies) {
        const gz = gzipSync(data, { level, strategy });
        for (const step of data.length < 1000 ? [1, 3, 1 << 20] : [997, 1 << 16, 1 << 20]) {
          const { out, damage } = await inflate(gz, step);
          assert.is(damage, null, `${what} level ${level} strategy ${strategy} step ${step}`);
          assert.ok(out.equals(data), `${what} level ${level} strategy ${strategy} step ${step}: ${out.length} of ${data.length} bytes`);
          cases++;
        }
      }
    }
  }
  assert.is(cases, 9 * (1 + 3 * 5) * 3);
});

test("a stored block cut at every input piece size, 1 to 600 bytes", async () => {
  const data = SAMPLE.subarray(0, 70000);
  const gz = gzipSync(data, { level: 0 });
  for (const step of [1, 2, 5, 8, 13, 512, 600]) assert.ok((await inflate(gz, step)).out.equals(data), `step ${step}`);
});

test("several members (cat a.gz b.gz, block-parallel gzip, an empty member): every member's bytes, in order", async () => {
  const r = rng(7);
  const cuts = [0, 1, 4000, 4000, 100000, 250000, SAMPLE.length].sort((a, b) => a - b);
  const members = cuts.slice(1).map((c, i) => gzipSync(SAMPLE.subarray(cuts[i], c), { level: 1 + Math.floor(r() * 9) }));
  const { out, damage } = await inflate(Buffer.concat(members), 4096);
  assert.is(damage, null);
  assert.ok(out.equals(SAMPLE));
});

test("a member whose data ends inside the bytes the bit reader holds when more input is asked for (at a 64 KiB read): no false damage", async () => {
  // The first fill reads 64 KiB; a member ending in the last bytes before that point was left in the bit reader only,
  // and the input moved on without them: its trailer was then read from memory in front of the buffer (a false
  // "checksum does not match", which also hid any later damage).
  const r = rng(12345);
  const text = Buffer.from(Array.from({ length: 200000 }, () => 97 + Math.floor(r() * 16)));
  const second = gzipSync(Buffer.from("hello world second member"));
  let tried = 0;
  for (let n = 100000; n < 140000; n++) {
    const m = gzipSync(text.subarray(0, n), { level: 6 });
    if (m.length < 65510) {
      n += Math.max(0, Math.floor((65510 - m.length) * 1.5) - 1);
      continue;
    }
    if (m.length > 65536) break;
    tried++;
    const { out, damage } = await inflate(Buffer.concat([m, second]), 65536);
    assert.is(damage, null, `a first member of ${m.length} bytes`);
    assert.ok(out.equals(Buffer.concat([text.subarray(0, n), Buffer.from("hello world second member")])), `${m.length}`);
  }
  assert.ok(tried >= 6, `${tried} member sizes near 64 KiB tried`);
});

test("a member with optional header fields (FEXTRA, FNAME, FCOMMENT, FHCRC) is read past them", async () => {
  const body = gzipSync(SAMPLE).subarray(10);
  const extra = Buffer.from([4, 0, 1, 2, 3, 4]);
  const header = Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 4 | 8 | 16 | 2, 0, 0, 0, 0, 0, 255]), extra, Buffer.from("dump.rawtrace\0a comment\0"), Buffer.from([0, 0])]);
  assert.is(gzipHeaderLength(header), header.length);
  assert.ok((await inflate(Buffer.concat([header, body]), 5)).out.equals(SAMPLE));
});

test("a bad trailer checksum or length: every byte given, the damage said at the trailer, the next member read", async () => {
  const a = Buffer.from(gzipSync(SAMPLE.subarray(0, 200000)));
  const b = gzipSync(SAMPLE.subarray(200000));
  for (const at of [a.length - 8, a.length - 2]) {
    const bad = Buffer.from(a);
    bad[at] ^= 0x10;
    const { out, damage } = await inflate(Buffer.concat([bad, b]));
    assert.ok(out.equals(SAMPLE), `byte ${at}`);
    assert.equal(damage, { compressedAt: a.length - 8, decompressed: 200000, message: "a gzip member's checksum or length does not match its data", truncated: false, filler: 0, verifiedTo: 0 });
  }
});

test("bytes after the last member that are not a member: everything before them, the damage said where they start", async () => {
  const gz = gzipSync(SAMPLE);
  const { out, damage } = await inflate(Buffer.concat([gz, Buffer.from("trailing garbage")]));
  assert.ok(out.equals(SAMPLE));
  assert.is(damage!.compressedAt, gz.length);
  assert.match(damage!.message, "16 bytes after the last gzip member are not a gzip member");
});

test("a file cut anywhere: only the original's bytes come out, and the cut is said (a cut in the first header throws)", async () => {
  const data = SAMPLE.subarray(0, 60000);
  const gz = Buffer.concat([gzipSync(data.subarray(0, 30000), { level: 6 }), gzipSync(data.subarray(30000), { level: 0 })]);
  const first = 10 + 0; // the first member's header
  for (let cut = 0; cut < gz.length; cut += cut < 64 ? 1 : 97) {
    const part = gz.subarray(0, cut);
    if (cut < first) {
      if (cut === 0) continue;
      await inflate(part).then(() => assert.unreachable(`cut ${cut}`), (e: Error) => assert.match(e.message, `at compressed byte ${cut}, before any byte of the dump: the file ends inside its gzip header`));
      continue;
    }
    const { out, damage } = await inflate(part, 1000);
    assert.ok(data.subarray(0, out.length).equals(out), `cut ${cut}: a prefix of the original`);
    assert.ok(damage !== null, `cut ${cut}: said`);
    assert.ok(damage!.truncated, `cut ${cut}: as a cut (${damage!.message})`);
    assert.ok(damage!.compressedAt <= cut, `cut ${cut}: at ${damage!.compressedAt}`);
  }
});

test("flipped bits in the data: the output is the original's, or the damage is said (never silently other bytes)", async () => {
  const data = SAMPLE.subarray(0, 120000);
  const gz = gzipSync(data, { level: 6 });
  const r = rng(99);
  for (let n = 0; n < 300; n++) {
    const bad = Buffer.from(gz);
    const at = 10 + Math.floor(r() * (gz.length - 18));
    bad[at] ^= 1 << Math.floor(r() * 8);
    const { out, damage } = await inflate(bad, 1 << 14);
    if (damage === null) assert.ok(out.equals(data), `flip at ${at}: no damage said, so the original`);
    else assert.ok(damage.compressedAt <= gz.length, `flip at ${at}`);
  }
});

test("a member whose trailer straddles a read, then padding or junk, then a last member: every byte, the skip said once", async () => {
  // The walker moved the trailer's bytes itself (the module's length was stale) and, when that read added nothing,
  // took its own length for the module's: the next compact() moved with the stale one ('memory access out of
  // bounds' with 8 or more bytes skipped, the last member silently lost with fewer).
  const last = SAMPLE.subarray(0, 1000);
  let cases = 0;
  for (const n of [65515, 65516, 65517, 65518, 65519, 65520]) {
    for (const [gap, fill] of [[1, 0], [3, 0], [8, 0], [16, 0], [5, 0x55]] as const) {
      const first = SAMPLE.subarray(0, n);
      const gz = Buffer.concat([gzipSync(first, { level: 0 }), Buffer.alloc(gap, fill), gzipSync(last)]);
      const { out, damage } = await inflate(gz, 1 << 16);
      assert.ok(out.equals(Buffer.concat([first, last])), `member of ${n} B + ${gap} × ${fill}: ${out.length} bytes out`);
      const at = gzipSync(first, { level: 0 }).length;
      assert.is((damage as GunzipDamage | null)?.compressedAt, at, `member of ${n} B + ${gap} × ${fill}: the skip said where it starts`);
      cases++;
    }
  }
  assert.is(cases, 30);
});

test("a member that fails before its first byte right after a member (a header left by a crashed appender, a damaged first block): the members after it are read, the damage said at its start", async () => {
  const A = Buffer.alloc(50000, "abc");
  const B = Buffer.concat([Buffer.alloc(100000, "x"), Buffer.from(SAMPLE.subarray(0, 50000).toString("hex"))]);
  const C = Buffer.alloc(40000, "xyz");
  const a = gzipSync(A), b = gzipSync(B), c = gzipSync(C);
  const broken = Buffer.from(b.subarray(0, 200));
  broken.fill(0xff, 10, 40); // its first block damaged
  for (const [what, mid] of [["its header only", b.subarray(0, 10)], ["its first 40 bytes", b.subarray(0, 40)], ["a damaged first block", broken]] as const) {
    for (const step of [1 << 16, 7]) {
      const { out, damage } = await inflate(Buffer.concat([a, mid, c]), step);
      assert.ok(out.equals(Buffer.concat([A, C])), `${what}, pieces of ${step}: ${out.length} bytes (C lost before)`);
      assert.is((damage as GunzipDamage | null)?.compressedAt, a.length, what);
    }
  }
});

test("a damaged block inside a member (bgzip, block-parallel gzip): its member's bytes up to the damage, zeros up to its length, then every member after it; the damage said where it is", async () => {
  const A = SAMPLE.subarray(0, 60000);
  const B = SAMPLE.subarray(60000, 260000);
  const C = SAMPLE.subarray(260000, 330000);
  const a = gzipSync(A), b = gzipSync(B), c = gzipSync(C);
  const r = rng(7);
  let cases = 0;
  let realigned = 0;
  let overran = 0;
  for (let n = 0; n < 40; n++) {
    const bad = Buffer.from(b);
    const at = 2000 + Math.floor(r() * (b.length - 4000));
    bad.fill(0xff, at, at + 300);
    for (const step of [1 << 16, 4093]) {
      const { out, damage } = await inflate(Buffer.concat([a, bad, c]), step);
      // 300 bytes of 0xff that decode to a member's end: the trailer's checksum says it (another test's case).
      if (damage === null) continue;
      const d = damage as GunzipDamage;
      if (d.message.includes("checksum")) continue;
      cases++;
      // Mostly the garbage decodes on past its member's end, into C's bytes, before a code fails there: C is found
      // again from just after B's start.
      assert.ok(out.subarray(0, A.length).equals(A), `damage at ${at}, pieces of ${step}: the member before`);
      assert.ok(out.subarray(out.length - C.length).equals(C), `damage at ${at}, pieces of ${step}: the member after (lost before)`);
      assert.ok(d.compressedAt >= a.length + at, `damage at ${at}: said at ${d.compressedAt}`);
      // Found inside its member: zeros fill the member up to its length field, so C's bytes are at their own offset
      // (the dump's reader finds chunks on 8-byte offsets only).
      if (d.compressedAt < a.length + b.length) {
        realigned++;
        assert.is(out.length, A.length + B.length + C.length, `damage at ${at}, pieces of ${step}: C at its offset`);
        assert.ok(out.subarray(A.length + B.length).equals(C));
        // The zeros are told apart from the member's bytes: all of B after what it gave before the damage.
        assert.is(d.filler, A.length + B.length - d.decompressed, `damage at ${at}, pieces of ${step}: the zeros counted`);
        assert.ok(d.filler! > 0 && out.subarray(d.decompressed, A.length + B.length).every((v) => v === 0));
      } else if (d.overrun) {
        // Decoded past B's length, into C's compressed bytes: at most 7 zeros put C back on an 8-byte offset.
        overran++;
        const extra = out.length - (A.length + B.length + C.length);
        assert.is(extra, d.overrun + d.filler!, `damage at ${at}: the bytes past B's length and the zeros counted`);
        assert.is(extra % 8, 0, `damage at ${at}, pieces of ${step}: C on an 8-byte offset (${d.overrun} over, ${d.filler} zeros)`);
        assert.ok(d.filler! < 8);
      } else assert.is(d.filler, 0, `damage at ${at}, pieces of ${step}: no zeros given`);
      assert.not.ok(d.truncated);
    }
  }
  assert.ok(cases >= 8 && realigned >= 6, `${cases} cases with a block error, ${realigned} found inside the member, ${overran} decoded past it`);
  // Damaged before the first byte of the file: nothing is given (the hosts say the start error), as before.
  const first = Buffer.from(a);
  first.fill(0xff, 10, 40);
  const { out, damage } = await inflate(Buffer.concat([first, c]));
  assert.is(out.length, 0);
  assert.is((damage as GunzipDamage | null)?.compressedAt !== undefined, true);
});

test("a member cut short where another member starts (a crashed appender, cat cut.gz more.gz): its bytes up to the cut, at most 7 zeros, then every member after it; the cut said there (before: the members after it decoded as its data, garbage, and lost when that ran to the file's end)", async () => {
  const A = SAMPLE.subarray(0, 60000);
  const B = SAMPLE.subarray(60000, 200000);
  const C = SAMPLE.subarray(200000, 260000);
  const r = rng(20261202);
  let torn = 0;
  let trailers = 0;
  for (const level of [6, 1, 0]) {
    const a = gzipSync(A, { level }), b = gzipSync(B, { level }), c = gzipSync(C, { level });
    const cuts = [10, 11, 40, a.length - 9, a.length - 8, a.length - 5, a.length - 1, ...Array.from({ length: 12 }, () => 12 + Math.floor(r() * (a.length - 24)))];
    for (const cut of cuts) {
      const file = Buffer.concat([a.subarray(0, cut), b, c]);
      // What the cut member holds: the bytes its data gives up to the cut, as a file cut there gives them.
      const own = (await inflate(a.subarray(0, cut))).out;
      for (const step of [1 << 16, 4093, 7]) {
        if (step === 7 && cut % 3 !== 0) continue;
        const { out, damage } = await inflate(file, step);
        const d = damage as GunzipDamage | null;
        const what = `level ${level}, cut at ${cut} of ${a.length}, pieces of ${step}`;
        assert.ok(d, `${what}: said`);
        assert.not.ok(d!.truncated, what);
        assert.ok(out.subarray(out.length - B.length - C.length).equals(Buffer.concat([B, C])), `${what}: the members after it`);
        if (cut >= a.length - 8) {
          // Cut inside its trailer: its data is whole, the next member read from its header.
          trailers++;
          assert.match(d!.message, "trailer is cut short", what);
          assert.ok(out.equals(Buffer.concat([A, B, C])), `${what}: every byte`);
          assert.is(d!.verifiedTo, 0, `${what}: its checksum unchecked, vouched for no more than a damaged member`);
          continue;
        }
        torn++;
        assert.is(d!.message, `the gzip member is cut short at compressed byte ${cut}, where another member's header starts: its bytes up to there were converted, and the members from there on`, what);
        assert.is(d!.compressedAt, 0, `${what}: at the cut member`);
        assert.is(d!.decompressed, own.length, `${what}: every byte its data gives up to the cut, none after`);
        assert.ok(out.subarray(0, own.length).equals(own), `${what}: its own bytes`);
        assert.is(d!.verifiedTo, 0, `${what}: vouched for from its start no more than a damaged member`);
        const pad = (8 - (own.length % 8)) % 8;
        assert.is(d!.filler ?? 0, pad, `${what}: zeros up to an 8-byte offset from its first byte`);
        assert.is(out.length, own.length + pad + B.length + C.length, what);
        assert.ok(out.subarray(own.length, own.length + pad).every((v) => v === 0), what);
      }
    }
  }
  assert.ok(torn >= 100 && trailers >= 8, `${torn} cut in the data, ${trailers} in the trailer`);
});

test("a member cut short whose data decodes the next member's bytes as MiBs of garbage before a code fails (long matches at DEFLATE's 1032 : 1): still cut there, the garbage dropped, every member after it (before: past 1 MiB held, the member was taken as whole: 2 MB of garbage given, and the member it ran through lost)", async () => {
  // test/fixtures/gzip/torn_runaway_garbage.gz (found by fuzzing torn members): a member of 30,044 bytes of runs cut
  // at compressed byte 364, a member of four letters at random (level 1), a small member. The cut member's codes read
  // the next member's bytes as garbage for 17 KB, 2 MB of it, before a distance reaches too far back.
  const file = readFileSync(`${ROOT}test/fixtures/gzip/torn_runaway_garbage.gz`);
  const cut = 364;
  const own = inflateRawSync(file.subarray(10, cut), { finishFlush: constants.Z_SYNC_FLUSH });
  const rest = gunzipSync(file.subarray(cut));
  const pad = (8 - (own.length % 8)) % 8;
  for (const step of [1 << 20, 1 << 16, 4093, 101]) {
    const { out, damage } = await inflate(file, step);
    const what = `pieces of ${step}`;
    assert.ok(damage, what);
    assert.is(damage!.message, `the gzip member is cut short at compressed byte ${cut}, where another member's header starts: its bytes up to there were converted, and the members from there on`, what);
    assert.is(damage!.decompressed, own.length, what);
    assert.is(out.length, own.length + pad + rest.length, `${what}: its bytes, ${pad} zeros, the members after it`);
    assert.ok(out.subarray(0, own.length).equals(own), what);
    assert.ok(out.subarray(own.length + pad).equals(rest), `${what}: the members after it`);
  }
});

test("a member header inside a whole member's data, then MiBs from few compressed bytes: read on past what is held, the member proves whole (its trailer, or half the input buffer past the header) and gives every byte, decoded again from the copy", async () => {
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
  const member = (raw: Buffer, data: Buffer) => {
    const t = Buffer.alloc(8);
    t.writeUInt32LE(crc32(data), 0);
    t.writeUInt32LE(data.length, 4);
    return Buffer.concat([header, raw, t]);
  };
  const r = rng(20261204);
  for (const tail of [0, 600 << 10]) {
    // A stored block holding a member header, then a block of 9 MiB of one letter (9 KiB compressed), then `tail`
    // bytes at random.
    const pre = Buffer.concat([Buffer.from("abc"), header, Buffer.from([1, 2, 3])]);
    const body = Buffer.concat([Buffer.alloc(9 << 20, 0x41), Buffer.from(Array.from({ length: tail }, () => Math.floor(r() * 256)))]);
    const stored = Buffer.from([0, pre.length, 0, ~pre.length & 255, 255]);
    const data = Buffer.concat([pre, body]);
    const file = Buffer.concat([member(Buffer.concat([stored, pre, deflateRawSync(body, { level: 9 })]), data), gzipSync(Buffer.from("next"))]);
    for (const step of [1 << 16, 4099]) {
      const { out, damage } = await inflate(file, step);
      assert.is(damage, null, `tail ${tail}, pieces of ${step}`);
      assert.ok(out.equals(Buffer.concat([data, Buffer.from("next")])), `tail ${tail}, pieces of ${step}`);
    }
  }
});

test("a member header inside a whole member's data (a .gz stored in a level-0 member): the member's bytes, none held back or dropped", async () => {
  const inner = gzipSync(SAMPLE.subarray(0, 20000));
  const A = Buffer.concat([SAMPLE.subarray(0, 3000), inner, SAMPLE.subarray(3000, 9000)]);
  const B = SAMPLE.subarray(9000, 30000);
  for (const level of [0, 6]) {
    const file = Buffer.concat([gzipSync(A, { level }), gzipSync(B, { level })]);
    for (const step of [1 << 16, 4093]) {
      const { out, damage } = await inflate(file, step);
      assert.is(damage, null, `level ${level}, pieces of ${step}`);
      assert.ok(out.equals(Buffer.concat([A, B])), `level ${level}, pieces of ${step}`);
    }
  }
});

test("a header longer than 64 KiB (FEXTRA of 65,535 bytes and a comment), first or later: read past, whatever the read size", async () => {
  const A = SAMPLE.subarray(0, 5000), B = SAMPLE.subarray(5000, 10000);
  const big = (g: Buffer) => {
    const hdr = Buffer.from(g.subarray(0, 10));
    hdr[3] = 4 | 16; // FEXTRA, FCOMMENT
    const extra = Buffer.alloc(2 + 65535, 0x41);
    extra.writeUInt16LE(65535, 0);
    return Buffer.concat([hdr, extra, Buffer.alloc(100, 0x43), Buffer.from([0]), g.subarray(10)]);
  };
  const a = gzipSync(A), b = gzipSync(B);
  for (const [what, gz] of [["first", Buffer.concat([big(a), b])], ["second", Buffer.concat([a, big(b)])]] as const) {
    for (const step of [1 << 16, 4093, 1 << 20]) {
      const { out, damage } = await inflate(gz, step);
      assert.ok(out.equals(Buffer.concat([A, B])), `${what}, pieces of ${step}: ${out.length} bytes (the first refused before in 64 KiB pieces)`);
      assert.is(damage, null, `${what}, pieces of ${step}`);
    }
  }
});


test("a damaged member that decoded past its length (garbage from the damage): at most 7 zeros put the members after it back on the dump's 8-byte offsets, and the bytes over and the zeros are counted (before: the members after it were shifted, and the dump's reader lost every later chunk)", async () => {
  const A = SAMPLE.subarray(0, 60000);
  const B = SAMPLE.subarray(60000, 200000);
  const C = SAMPLE.subarray(200000, 260000);
  const a = gzipSync(A), c = gzipSync(C);
  // keep: B's bytes given before the damage; garbage: the damage decoded on (over B's length by 0 to 9 bytes, or short).
  const cases: Array<[number, number]> = [[100000, 40000], [100000, 40001], [100000, 40003], [100000, 40007], [139000, 1009], [50000, 120005], [120000, 5000]];
  for (const [keep, garbage] of cases) {
    const bad = overrunMember(B, keep, garbage);
    for (const step of [1 << 16, 7]) {
      const { out, damage } = await inflate(Buffer.concat([a, bad, c]), step);
      const d = damage as GunzipDamage | null;
      const what = `${keep} kept, ${garbage} garbage, pieces of ${step}`;
      assert.ok(d && d.message === "invalid block type", `${what}: said`);
      const over = keep + garbage - B.length;
      const gave = A.length + keep + garbage;
      assert.ok(out.subarray(0, A.length + keep).equals(SAMPLE.subarray(0, A.length + keep)), `${what}: the bytes before the damage`);
      assert.ok(out.subarray(A.length + keep, gave).every((v) => v === 0x41), `${what}: the garbage, as decoded`);
      assert.ok(out.subarray(out.length - C.length).equals(C), `${what}: the member after it`);
      if (over >= 0) {
        assert.is(d!.overrun ?? 0, over, `${what}: the bytes over its length`);
        assert.is(d!.filler, (8 - (over % 8)) % 8, `${what}: zeros up to an 8-byte offset`);
        assert.is(out.length, gave + d!.filler! + C.length);
        assert.is((out.length - C.length - (A.length + B.length)) % 8, 0, `${what}: C on an 8-byte offset of the original`);
      } else {
        // Short of its length: zeros up to it, as before (no overrun).
        assert.is(d!.overrun, undefined, what);
        assert.is(d!.filler, -over, what);
        assert.is(out.length, A.length + B.length + C.length, `${what}: C at its own offset`);
      }
    }
  }
});
test("a chance 1f 8b 08 in damaged data or in junk between members, with a header no gzip writer writes, whose data decodes as garbage before a code fails or its trailer disagrees: dropped, the search goes on to the real member (before: its garbage was given, and the members after it were shifted); a real member found by skipping still gives every byte, cut short or damaged past 64 KiB", async () => {
  const A = SAMPLE.subarray(0, 60000);
  const B = SAMPLE.subarray(60000, 200000);
  const C = SAMPLE.subarray(200000, 260000);
  const a = gzipSync(A), c = gzipSync(C);
  const G = Buffer.alloc(300, 0x47);
  // Chance bytes: a header whose XFL (0x5a) and OS (0x9c) no gzip writer writes (one that a writer could have written
  // is read as a real member). Decodes 300 bytes, then a block of the reserved type 3; a whole member whose trailer
  // checksum is wrong.
  const chance = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0x5a, 0x9c]);
  const failing = Buffer.concat([chance, deflateRawSync(G, { finishFlush: constants.Z_SYNC_FLUSH }), Buffer.from([0x07])]);
  const badTrailer = Buffer.from(gzipSync(G));
  chance.copy(badTrailer, 0);
  badTrailer[badTrailer.length - 8] ^= 1;
  for (const [what, fake] of [["fails after 300 bytes", failing], ["a wrong trailer", badTrailer]] as const) {
    // Inside a damaged member: the search for the next member runs through its compressed bytes after the damage.
    const keep = 100000, garbage = 5000;
    const bad = overrunMember(B, keep, garbage);
    const inside = Buffer.concat([bad.subarray(0, bad.length - 8), fake, bad.subarray(bad.length - 8)]);
    for (const step of [1 << 16, 7]) {
      const { out, damage } = await inflate(Buffer.concat([a, inside, c]), step);
      const d = damage as GunzipDamage | null;
      const how = `${what}, inside the damaged member, pieces of ${step}`;
      assert.is(d?.message, "invalid block type", how);
      assert.is(out.length, A.length + B.length + C.length, `${how}: C at its own offset`);
      assert.ok(out.subarray(0, A.length + keep).equals(SAMPLE.subarray(0, A.length + keep)), how);
      assert.ok(out.subarray(A.length + keep, A.length + keep + garbage).every((v) => v === 0x41), how);
      assert.ok(out.subarray(A.length + keep + garbage, A.length + B.length).every((v) => v === 0), `${how}: zeros, not the false member's bytes`);
      assert.is(d!.filler, B.length - keep - garbage, how);
      assert.ok(out.subarray(A.length + B.length).equals(C), how);
    }
    // In junk between members: the junk and the false member are skipped alike, said once where the junk starts.
    for (const step of [1 << 16, 7]) {
      const { out, damage } = await inflate(Buffer.concat([a, Buffer.from("junk"), fake, c]), step);
      const how = `${what}, after junk, pieces of ${step}`;
      assert.ok(out.equals(Buffer.concat([A, C])), `${how}: ${out.length} bytes`);
      assert.is((damage as GunzipDamage | null)?.compressedAt, a.length, how);
      assert.match((damage as GunzipDamage | null)!.message, `${4 + fake.length} bytes after a gzip member are not a gzip member`, how);
    }
  }
  // A real member found by skipping keeps every byte it decodes: cut short before 64 KiB, or damaged after it.
  const cGz = gzipSync(SAMPLE.subarray(200000, 400000));
  const cut = cGz.subarray(0, 6000);
  for (const step of [1 << 16, 7]) {
    const { out, damage } = await inflate(Buffer.concat([a, Buffer.from("junk"), cut]), step);
    const zlibGives = gunzipSync(cut, { finishFlush: constants.Z_SYNC_FLUSH });
    assert.ok(zlibGives.length > 0 && zlibGives.length < 1 << 16, `the cut member gives ${zlibGives.length} bytes`);
    assert.ok(out.equals(Buffer.concat([A, zlibGives])), `cut after junk, pieces of ${step}: ${out.length - A.length} of the cut member's ${zlibGives.length} bytes`);
    assert.is((damage as GunzipDamage | null)?.compressedAt, a.length);
  }
  const damagedLate = overrunMember(B, 100000, 0);
  for (const step of [1 << 16, 7]) {
    const { out } = await inflate(Buffer.concat([a, Buffer.from("junk"), damagedLate, c]), step);
    assert.ok(out.subarray(0, A.length + 100000).equals(SAMPLE.subarray(0, A.length + 100000)), `damaged past 64 KiB after junk, pieces of ${step}: its bytes before the damage`);
    assert.ok(out.subarray(out.length - C.length).equals(C), `damaged past 64 KiB after junk, pieces of ${step}: the member after it`);
  }
});

test("two damaged members in a row, an empty member after a damaged one, zeros after one: the members after them stay on the dump's 8-byte offsets, and only what happened is counted (before: the zeros given ahead of the second were counted as its bytes, the empty member dropped the zeros, and zeros' length field of 0 was read as an overrun)", async () => {
  const A = SAMPLE.subarray(0, 60000), B = SAMPLE.subarray(60000, 200000), C = SAMPLE.subarray(200000, 260000), D = SAMPLE.subarray(260000, 300000);
  const a = gzipSync(A), d = gzipSync(D);
  const empty = gzipSync(Buffer.alloc(0));
  // [what, members, D's expected place in the output minus its place in the dump, filler, overrun]
  const cases: Array<[string, Buffer[], number, number, number | undefined]> = [
    ["B short, C short", [a, overrunMember(B, 50000, 10), overrunMember(C, 30000, 10), d], 0, 89990 + 29990, undefined],
    ["B short, C over by 3", [a, overrunMember(B, 50000, 10), overrunMember(C, 30000, 30003), d], 8, 89990 + 5, 3],
    ["B over by 3, C over by 3", [a, overrunMember(B, 100000, 40003), overrunMember(C, 30000, 30003), d], 16, 5 + 5, 6],
    ["C short, then an empty member", [a, gzipSync(B), overrunMember(C, 30000, 10), empty, d], 0, 29990, undefined],
    ["C over by 3, then an empty member", [a, gzipSync(B), overrunMember(C, 30000, 30003), empty, d], 8, 5, 3],
  ];
  for (const [what, parts, shift, filler, overrun] of cases) {
    for (const step of [1 << 16, 7]) {
      const { out, damage } = await inflate(Buffer.concat(parts), step);
      const how = `${what}, pieces of ${step}`;
      assert.ok(out.subarray(out.length - D.length).equals(D), `${how}: D`);
      assert.is(out.length - D.length - 260000, shift, `${how}: D's place`);
      assert.is(damage!.filler, filler, `${how}: zeros`);
      assert.is(damage!.overrun, overrun, `${how}: bytes over`);
    }
  }
  // Zeros between a damaged member and the next: the 4 bytes before the next member are no length field (0), so no
  // zeros are invented and no overrun is claimed; the next member's bytes follow what was decoded.
  const { out, damage } = await inflate(Buffer.concat([a, overrunMember(B, 50000, 10), Buffer.alloc(8), gzipSync(C)]));
  assert.ok(out.equals(Buffer.concat([A, B.subarray(0, 50000), Buffer.alloc(10, 0x41), C])), `${out.length} bytes`);
  assert.is(damage!.overrun, undefined);
  assert.is(damage!.filler, 0);
});

test("false members nested in each other's data (crafted: a stored block holding the next, headers no writer writes, wrong trailers): dropped, the members around them read, each byte read a bounded number of times past 8 MiB of re-reading (before this budget: 77 ms per 64 KiB, quadratic in the depth)", async () => {
  const A = SAMPLE.subarray(0, 1000), C = SAMPLE.subarray(1000, 2000);
  // One 64 KiB region: members 23 bytes apart, each a stored block holding the next and a trailer of 0xaa.
  let region = Buffer.alloc(0);
  while (region.length + 23 <= 65535) {
    const n = region.length;
    region = Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0x5a, 0x9c, 0x01, n & 255, n >> 8, ~n & 255, (~n >> 8) & 255]), region, Buffer.alloc(8, 0xaa)]);
  }
  for (const regions of [2, 200]) {
    const gz = Buffer.concat([gzipSync(A), Buffer.from("junk"), ...Array.from({ length: regions }, () => region), gzipSync(C)]);
    const { out, damage } = await inflate(gz);
    assert.ok(out.equals(Buffer.concat([A, C])), `${regions} regions (${gz.length} bytes): ${out.length} bytes out`);
    assert.is(damage!.compressedAt, gzipSync(A).length);
    assert.match(damage!.message, "bytes after a gzip member are not a gzip member");
  }
});

test("damaged members nested in each other's data (crafted: headers a gzip writer writes, each a stored block holding the rest of the region, all ending at one invalid block): the members around them read, what they give bounded by the re-reading budget (before: every member gave the rest of the region again, 35.8 MB out of 104 KB)", async () => {
  const A = SAMPLE.subarray(0, 1000), C = SAMPLE.subarray(1000, 2000);
  // 32 KiB of members 15 bytes apart, each a stored block up to the region's last byte, an invalid block.
  const E = (32 << 10) - 1;
  const region = Buffer.alloc(E + 1);
  region[E] = 0x07; // BFINAL 1, BTYPE 3
  let members = 0;
  for (let p = 0; p + 15 <= E; p += 15, members++) {
    const n = E - (p + 15);
    region.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x00, n & 255, n >> 8, ~n & 255, (~n >> 8) & 255], p);
  }
  assert.is(members, 2184);
  // 70,000 bytes that start no member before it: the walk's input buffer holds the whole region when it goes back.
  const gz = Buffer.concat([gzipSync(A), Buffer.alloc(70000, 0x41), region, gzipSync(C)]);
  const { out } = await inflate(gz, gz.length);
  assert.ok(out.subarray(0, 1000).equals(A), "the member before");
  assert.ok(out.subarray(out.length - 1000).equals(C), "the member after");
  assert.ok(out.length < 9.5 * (1 << 20), `${out.length} bytes out of ${gz.length}: 8 MiB of re-reading and the file twice, not the region once per member`);
});

test.run();
