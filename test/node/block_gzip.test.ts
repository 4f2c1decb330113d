/**
 * Parallel block gzip (src/node/block_gzip.ts): the members it writes are one gzip file that Node's zlib and
 * Python's gzip both read back to the exact input, for inputs that end on, before and after a block boundary, the
 * empty input, and writes of every size; the bytes do not depend on how the input was cut into writes or on how
 * many blocks compress at once; back pressure holds at most `inFlight` blocks; convertFile and convertStream write
 * the same members for a converted trace.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { PassThrough } from "node:stream";
import { readFileSync } from "node:fs";
import { BlockGzip, type BlockGzipOptions } from "../../src/node/block_gzip.js";
import { convertFile } from "../../src/node/convert.js";
import { convertStream } from "../../src/node/stream.js";
import { generate } from "../../bench/generate.js";
import { FastGzip } from "../../src/node/fast_gzip.js";
import { GzipPool } from "../../src/node/gzip_pool.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-blockgz-"));

/** Deterministic JSON-like text of `n` bytes (xorshift32, fixed seed). */
function text(n: number, seed = 0x9e3779b9): Buffer {
  const names = ["cudaLaunchKernel", "ampere_sgemm_128x64_tn", "Memcpy HtoD (Pageable -> Device)", "ProfilerStep#3"];
  let x = seed >>> 0;
  const rnd = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>>= 0));
  let s = "";
  while (s.length < n) s += `{"ph":"X","name":"${names[rnd() % 4]}","pid":${rnd() % 8},"tid":${rnd() % 97},"ts":${rnd()}.${rnd() % 1000},"dur":${rnd() % 5000}},\n`;
  return Buffer.from(s.slice(0, n), "latin1");
}

/** Compresses `data` written in pieces of `cuts` sizes (cycled), honouring back pressure. */
async function compress(data: Buffer, o: BlockGzipOptions, cuts = [data.length || 1]): Promise<{ bytes: Buffer; maxPending: number }> {
  const parts: Buffer[] = [];
  const gz = new BlockGzip((b) => parts.push(Buffer.from(b)), o);
  let maxPending = 0;
  for (let at = 0, k = 0; at < data.length; k++) {
    const n = Math.min(cuts[k % cuts.length], data.length - at);
    if (!gz.write(data.subarray(at, at + n))) await gz.drain();
    maxPending = Math.max(maxPending, gz.pending);
    at += n;
  }
  await gz.end();
  assert.is(gz.pending, 0);
  return { bytes: Buffer.concat(parts), maxPending };
}

/** Python's gzip.decompress of `gz`: the bytes it returns and the gzip members it found. */
function python(gz: Buffer, name: string): { bytes: Buffer; members: number } {
  const f = join(tmp, `${name}.gz`);
  writeFileSync(f, gz);
  const code = [
    "import gzip, sys, zlib",
    "raw = open(sys.argv[1], 'rb').read()",
    "sys.stdout.buffer.write(gzip.decompress(raw))",
    "n = 0",
    "while raw:",
    "    d = zlib.decompressobj(31); d.decompress(raw); raw = d.unused_data; n += 1",
    "sys.stderr.write(str(n))",
  ].join("\n");
  const r = spawnSync("python3", ["-c", code, f], { maxBuffer: 1 << 28 });
  if (r.error) throw r.error;
  assert.is(r.status, 0, r.stderr.toString());
  return { bytes: r.stdout, members: Number(r.stderr.toString()) };
}

const BLOCK = 64 << 10;

test("zlib level 1: Node's zlib and Python's gzip read the members back to the exact input, at and around block boundaries", async () => {
  for (const n of [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 5 * BLOCK, 7 * BLOCK + 12345]) {
    const data = text(n, n + 1);
    const { bytes } = await compress(data, { blockBytes: BLOCK, inFlight: 3, level: 1 }, [4096, 1, 70000, 333]);
    assert.ok(gunzipSync(bytes).equals(data), `node, ${n} bytes`);
    const py = python(bytes, `n${n}`);
    assert.ok(py.bytes.equals(data), `python, ${n} bytes`);
    assert.is(py.members, Math.max(1, Math.ceil(n / BLOCK)), `members of ${n} bytes`);
  }
});

test("the bytes depend on neither the write sizes nor the blocks in flight; back pressure bounds the blocks", async () => {
  const data = text(9 * BLOCK + 777);
  const a = await compress(data, { blockBytes: BLOCK, inFlight: 1, level: 1 }, [data.length]);
  const b = await compress(data, { blockBytes: BLOCK, inFlight: 4, level: 1 }, [1000, 3, 65536, 131073]);
  const c = await compress(data, { blockBytes: BLOCK, inFlight: 2, level: 1 }, [BLOCK]);
  assert.ok(a.bytes.equals(b.bytes) && a.bytes.equals(c.bytes));
  // Below the limit before a write (after drain), plus the blocks one write fills: 131073 bytes fill at most 3.
  assert.ok(b.maxPending <= 3 + 3, `${b.maxPending} blocks pending`);
  assert.ok(c.maxPending <= 2, `${c.maxPending} blocks pending`);
  // Each member is a complete gzip stream of its block.
  assert.ok(gunzipSync(a.bytes).equals(data));
});

test("level 0: rawtrace's encoder in worker threads, one member per block in order, read back by zlib and Python", async () => {
  const fast = new FastGzip();
  for (const n of [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 9 * BLOCK + 777]) {
    const data = text(n, n + 3);
    const a = await compress(data, { blockBytes: BLOCK, inFlight: 1, level: 0 }, [data.length || 1]);
    const b = await compress(data, { blockBytes: BLOCK, inFlight: 4, level: 0 }, [1000, 3, 65536, 131073]);
    assert.ok(a.bytes.equals(b.bytes), `${n} bytes: the same whatever the cuts and blocks in flight`);
    const want: Buffer[] = [];
    for (let at = 0; at < n || (n === 0 && at === 0); at += BLOCK) want.push(Buffer.from(fast.gzip(data.subarray(at, at + BLOCK))));
    assert.ok(a.bytes.equals(Buffer.concat(want)), `${n} bytes: FastGzip's member of each block`);
    assert.ok(gunzipSync(a.bytes).equals(data), `node, ${n} bytes`);
    const py = python(a.bytes, `fast${n}`);
    assert.ok(py.bytes.equals(data), `python, ${n} bytes`);
    assert.is(py.members, Math.max(1, Math.ceil(n / BLOCK)));
  }
});

test("the gzip pool: members of blocks sent at once come back to the right callers; a closed pool refuses", async () => {
  const pool = new GzipPool(2);
  const blocks = [0, 1, 5000, 70000, 123].map((n, k) => text(n, k + 11));
  const members = await Promise.all(blocks.map((b) => {
    const ab = new ArrayBuffer(b.length + 7); // a longer buffer: only `length` bytes are compressed
    new Uint8Array(ab).set(b);
    return pool.gzip(ab, b.length);
  }));
  members.forEach((m, k) => assert.ok(gunzipSync(m).equals(blocks[k]), `block ${k}`));
  assert.is(pool.started, 2, "five blocks at once start both workers, no more");
  const lazy = new GzipPool(3);
  await lazy.gzip(new ArrayBuffer(1), 1);
  await lazy.gzip(new ArrayBuffer(1), 1);
  assert.is(lazy.started, 1, "blocks one after another need one worker");
  const sent = new ArrayBuffer(100);
  new Uint8Array(sent).fill(7);
  await lazy.gzip(sent, 100);
  assert.is(sent.byteLength, 0, "transferred, not copied");
  const back = new Uint8Array(lazy.buffer(100));
  assert.ok(back.length === 100 && back.every((b) => b === 7), "the worker gave the block's buffer back for the next block");
  assert.ok(new Uint8Array(lazy.buffer(100)).every((b) => b === 0), "none left to give: a new buffer");
  await lazy.close();
  try {
    await pool.gzip(new ArrayBuffer(4), 5);
    assert.unreachable("5 bytes of a 4-byte buffer");
  } catch (e) {
    assert.instance(e, RangeError);
  }
  await pool.close();
  try {
    await pool.gzip(new ArrayBuffer(4), 4);
    assert.unreachable("a closed pool compressed");
  } catch (e) {
    assert.match((e as Error).message, "gzip pool closed");
  }
});

test("idle gzip workers do not keep the process alive (a pool of 2 that compressed one block exits)", () => {
  const script = join(tmp, "exit.mts");
  const pool = new URL("../../src/node/gzip_pool.ts", import.meta.url).href;
  writeFileSync(script, `import { GzipPool } from ${JSON.stringify(pool)};\n` +
    "const m = await new GzipPool(2).gzip(new ArrayBuffer(10), 10);\nconsole.log(m.length);\n");
  const r = spawnSync(process.execPath, ["--import", "tsx", script], { encoding: "utf8", timeout: 60_000 });
  assert.is(r.signal, null, "killed: the process did not exit by itself");
  assert.is(r.status, 0, r.stderr);
  assert.ok(Number(r.stdout) >= 20, `a member of ${r.stdout.trim()} bytes`);
});

test("an error from the writer surfaces on end, and later writes throw it", async () => {
  const gz = new BlockGzip(() => {
    throw new Error("disk full");
  }, { blockBytes: 16 });
  gz.write(text(100));
  try {
    await gz.end();
    assert.unreachable("end resolved");
  } catch (e) {
    assert.is((e as Error).message, "disk full");
  }
  assert.throws(() => gz.write(text(1)), /disk full/);
});

test("a converted trace: convertFile's .json.gz and convertStream's gzip are the same members; Python reads the JSON", async () => {
  const input = join(tmp, "gen.rawtrace");
  generate(20000, input);
  await convertFile(input, join(tmp, "plain.json"));
  await convertFile(input, join(tmp, "gen.json.gz"));
  const plain = readFileSync(join(tmp, "plain.json"));
  const file = readFileSync(join(tmp, "gen.json.gz"));
  const parts: Buffer[] = [];
  const pass = new PassThrough();
  pass.on("data", (b: Buffer) => parts.push(b));
  await convertStream(input, pass, { gzip: true });
  assert.ok(Buffer.concat(parts).equals(file), "convertStream's gzip differs from convertFile's");
  assert.ok(gunzipSync(file).equals(plain));
  const py = python(file, "gen");
  assert.ok(py.bytes.equals(plain));
  assert.is(py.members, Math.ceil(plain.length / (1 << 20)));
  assert.ok(py.members >= 2, `${plain.length} bytes of JSON`);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
