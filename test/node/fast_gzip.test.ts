/**
 * rawtrace's own gzip encoder (assembly/deflate → build/deflate.wasm, src/node/fast_gzip.ts): every member it
 * writes is read back to the exact input by Node's zlib and by Python's gzip, for the empty input, one byte, sizes
 * around the block (32,768 symbols) and stored-block (65,535 bytes) boundaries, incompressible bytes (stored
 * blocks), long runs, the bench JSON, the Chrome JSON of every sample and a fixed-seed mix of 300 inputs; each
 * block kind is really used; Huffman code lengths stay within their limit and form complete codes; the bytes do
 * not depend on what the instance compressed before; sizes above the capacity are refused.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { FastGzip, FAST_GZIP_MAX_BYTES, deflateWasmPath } from "../../src/node/fast_gzip.js";
import { convertFile } from "../../src/node/convert.js";
import { generate } from "../../bench/generate.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-fastgz-"));
const gz = new FastGzip();
/** Inputs checked by Python at the end (one process for all): name → input. */
const forPython = new Map<string, Uint8Array>();

/** xorshift32 with a fixed seed. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>>= 0));
}

function randomBytes(n: number, seed: number): Uint8Array {
  const r = rng(seed);
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = r() & 255;
  return b;
}

/** Compresses `data`, checks Node's zlib gives it back, queues it for Python; returns the member. */
function roundTrip(data: Uint8Array, name: string): Buffer {
  const z = Buffer.from(gz.gzip(data));
  const back = gunzipSync(z);
  assert.ok(back.equals(data), `${name}: ${data.length} bytes came back as ${back.length} different bytes`);
  forPython.set(name, data);
  writeFileSync(join(tmp, `${name}.gz`), z);
  return z;
}

/** BTYPE of the first DEFLATE block of a member (RFC 1951 §3.2.3: bits 1–2 after the 10-byte header). */
const firstBlockType = (z: Buffer) => (z[10] >> 1) & 3;

test("empty, one byte and short inputs; the header and trailer fields", () => {
  const empty = roundTrip(new Uint8Array(0), "empty");
  assert.is(empty.length, 10 + 2 + 8, "an empty member is a header, one empty fixed block and the trailer");
  assert.equal([...empty.subarray(0, 4)], [0x1f, 0x8b, 8, 0]);
  const one = roundTrip(Uint8Array.of(0x61), "one");
  assert.is(firstBlockType(one), 1, "one byte goes in a fixed-code block");
  assert.is(one.readUInt32LE(one.length - 4), 1, "ISIZE");
  assert.is(one.readUInt32LE(one.length - 8), 0xe8b7be43, "CRC-32 of 'a'");
  for (let n = 2; n <= 40; n++) roundTrip(Buffer.from("abcabcabcabd".repeat(4).slice(0, n)), `short${n}`);
});

test("sizes around the block and stored-block boundaries; incompressible bytes go in stored blocks", () => {
  for (const n of [32767, 32768, 32769, 32776, 65534, 65535, 65536, 65537, 98303, 98304, 98305, 131070, 131071, 200000]) {
    const z = roundTrip(randomBytes(n, n), `random${n}`);
    assert.is(firstBlockType(z), 0, `${n} random bytes: stored`);
    // Stored costs 5 bytes per 65,535 bytes and per block, plus the 18 bytes of header and trailer.
    assert.ok(z.length <= n + 5 * (Math.ceil(n / 65535) + Math.ceil(n / 32768)) + 19, `${n} random bytes took ${z.length}`);
  }
});

test("long runs: lengths of 258 at distance 1 and short periods", () => {
  const zeros = roundTrip(new Uint8Array(1 << 20), "zeros");
  assert.ok(zeros.length < 4096, `1 MiB of zeros took ${zeros.length} bytes`);
  for (const period of [2, 3, 7, 258, 259, 32768, 32769]) {
    const base = randomBytes(period, period);
    const data = new Uint8Array(300000);
    for (let i = 0; i < data.length; i++) data[i] = base[i % period];
    const z = roundTrip(data, `period${period}`);
    // Near the window's end a period is found again only where the hash table still holds it (positions inside
    // matches are not hashed), so only the short periods have a size bound.
    if (period <= 259) assert.ok(z.length < data.length / 20 + period + 64, `period ${period}: ${z.length} bytes`);
    else if (period === 32768) assert.ok(z.length < data.length / 2, `period ${period}: ${z.length} bytes`);
    else assert.ok(z.length < data.length + 100, `period ${period} (beyond the window): ${z.length} bytes`);
  }
});

test("the bench JSON and the Chrome JSON of every sample: dynamic-code blocks", async () => {
  const input = join(tmp, "bench.rawtrace");
  generate(30000, input);
  const jsons = [join(tmp, "bench.json")];
  await convertFile(input, jsons[0]);
  for (const f of readdirSync("samples").filter((f) => f.endsWith(".rawtrace")).sort()) {
    const out = join(tmp, f.replace(/\.rawtrace$/, ".json"));
    await convertFile(join("samples", f), out);
    jsons.push(out);
  }
  for (const j of jsons) {
    const data = readFileSync(j);
    const name = j.slice(tmp.length + 1).replace(/\W/g, "_");
    const z = roundTrip(data, name);
    assert.is(firstBlockType(z), 2, `${name}: dynamic codes`);
    assert.ok(z.length < data.length / 4, `${name}: ${data.length} bytes of JSON took ${z.length}`);
  }
});

test("a fixed-seed mix of 300 inputs: random, copies at every distance, runs and small alphabets", () => {
  const r = rng(20261125);
  for (let k = 0; k < 300; k++) {
    const n = k % 10 === 0 ? r() % 200000 : r() % 20000;
    const data = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const kind = r() % 4;
      let len = 1 + (r() % (kind === 1 ? 600 : 3000));
      len = Math.min(len, n - at);
      if (kind === 0) for (let i = 0; i < len; i++) data[at + i] = r() & 255;
      else if (kind === 1 && at > 0) {
        const dist = 1 + (r() % Math.min(at, 33000)); // a few past the 32 KiB window
        for (let i = 0; i < len; i++) data[at + i] = data[at + i - dist];
      } else if (kind === 2) data.fill(r() & 255, at, at + len);
      else {
        const alphabet = 2 + (r() % 12);
        for (let i = 0; i < len; i++) data[at + i] = 48 + Math.min(r() % alphabet, r() % alphabet);
      }
      at += len;
    }
    roundTrip(data, `mix${k}`);
  }
});

test("Python's gzip reads every member above back to its input", () => {
  const code = [
    "import gzip, sys, os",
    "d = sys.argv[1]; bad = []",
    "for name in sys.argv[2:]:",
    "    if gzip.decompress(open(os.path.join(d, name + '.gz'), 'rb').read()) != open(os.path.join(d, name + '.raw'), 'rb').read(): bad.append(name)",
    "print(len(sys.argv) - 2, ' '.join(bad))",
  ].join("\n");
  for (const [name, data] of forPython) writeFileSync(join(tmp, `${name}.raw`), data);
  const r = spawnSync("python3", ["-c", code, tmp, ...forPython.keys()], { encoding: "utf8" });
  if (r.error) throw r.error;
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout.trim(), String(forPython.size), "Python disagrees on the names listed");
  assert.ok(forPython.size > 350);
});

test("the bytes do not depend on what the instance compressed before", () => {
  const data = readFileSync(join(tmp, "bench.json")).subarray(0, 300000);
  const a = Buffer.from(gz.gzip(data));
  gz.gzip(randomBytes(500000, 7));
  const b = Buffer.from(gz.gzip(data));
  const c = Buffer.from(new FastGzip().gzip(data));
  assert.ok(a.equals(b) && a.equals(c));
});

/** A fresh encoder instance with its raw exports (the test hooks and the checks below the Node wrapper). */
function rawInstance(): Record<string, CallableFunction> & { memory: WebAssembly.Memory } {
  const m = new WebAssembly.Module(readFileSync(deflateWasmPath()));
  return new WebAssembly.Instance(m, { env: { abort: () => assert.unreachable("abort") } }).exports as never;
}

test("Huffman code lengths: within the limit, complete, shorter for more frequent symbols", () => {
  const x = rawInstance();
  const check = (counts: number[], limit: number) => {
    const f = new Uint32Array(x.memory.buffer, x.huffmanFreqPtr(), 288);
    f.fill(0);
    f.set(counts);
    const p = x.huffmanLengths(counts.length, limit) as number;
    assert.ok(p !== 0);
    const lens = [...new Uint8Array(x.memory.buffer, p, counts.length)];
    let kraft = 0;
    for (let s = 0; s < counts.length; s++) {
      if (counts[s] === 0) assert.is(lens[s], 0);
      else {
        assert.ok(lens[s] >= 1 && lens[s] <= limit, `length ${lens[s]} over ${limit}`);
        kraft += 2 ** (limit - lens[s]);
      }
      for (let t = 0; t < counts.length; t++) if (counts[s] > counts[t] && counts[t] > 0) assert.ok(lens[s] <= lens[t]);
    }
    assert.is(kraft, 2 ** limit, "a complete code");
    return Math.max(...lens);
  };
  const fib = [1, 1];
  while (fib.length < 30) fib.push(fib[fib.length - 1] + fib[fib.length - 2]);
  assert.is(check(fib, 15), 15, "Fibonacci counts need the limit");
  assert.is(check(fib.slice(0, 19), 7), 7);
  assert.is(check([5, 0, 0, 9], 15), 1);
  assert.is(check(Array.from({ length: 286 }, () => 3), 15), 9);
  assert.ok(check(Array.from({ length: 288 }, (_, i) => (i * 7919) % 1000), 15) <= 15);
  assert.is(x.huffmanLengths(2, 15), 0, "fewer than two non-zero counts");
  new Uint32Array(x.memory.buffer, x.huffmanFreqPtr(), 288).fill(1);
  assert.is(x.huffmanLengths(19, 4), 0, "19 symbols cannot fit in 4 bits");
});

test("sizes above the capacity are refused, not read past", () => {
  const x = rawInstance();
  assert.is(x.prepare(FAST_GZIP_MAX_BYTES + 1), 0);
  assert.is(x.gzip(1), 0, "nothing prepared");
  assert.is(x.prepare(1000), 1);
  assert.is(x.gzip(1001), 0);
  const data = readFileSync(join(tmp, "bench.json")).subarray(0, 1000);
  new Uint8Array(x.memory.buffer, x.inputPtr() as number, 1000).set(data);
  const len = x.gzip(1000) as number;
  assert.ok(len > 18);
  const own = Buffer.from(new Uint8Array(x.memory.buffer, x.outputPtr() as number, len));
  assert.ok(own.equals(Buffer.from(gz.gzip(data))), "the encoder's own CRC-32 gives the same member as Node's");
  assert.is(x.gzipWithCrc(1001, 0), 0);
  assert.throws(() => gz.gzip({ length: FAST_GZIP_MAX_BYTES + 1 } as Uint8Array), /above the encoder's limit/);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
