// SPDX-License-Identifier: MIT
/**
 * docs/node-api.md, convertStream: the stream is ended unless `end: false`; with it the caller can write after the
 * trace (plain and gzip). A stream that goes away (destroyed before or during the conversion, already ended, an HTTP
 * client that disconnects) rejects with IO instead of leaving the call pending; a conversion that fails after bytes
 * were written destroys the stream, one that fails before leaves it for the caller; a Node stream as input is USAGE.
 * (Bytes equal to convertFile, back pressure, failing streams: test/node/api.test.ts.)
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { PassThrough, Writable } from "node:stream";
import { createServer, get, type Server } from "node:http";
import { Readable } from "node:stream";
import { gunzipSync } from "node:zlib";
import { once } from "node:events";
import { convertStream } from "../../src/node/stream.js";
import { memorySource, type ByteSource } from "../../src/core/engine.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { generate } from "../../bench/generate.js";
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Collects what is written to a PassThrough until it ends. */
function collect(s: PassThrough): Promise<Buffer> {
  const parts: Buffer[] = [];
  s.on("data", (b) => parts.push(b));
  return once(s, "end").then(() => Buffer.concat(parts));
}

test("end: false leaves the stream open after the trace; the default ends it", async () => {
  const bytes = sampleDump();
  const ended = new PassThrough();
  const all = collect(ended);
  await convertStream(memorySource(bytes, "a.rawtrace"), ended);
  assert.ok(ended.writableEnded, "ended by default");
  const trace = await all;

  const open = new PassThrough();
  const more = collect(open);
  await convertStream(memorySource(bytes, "a.rawtrace"), open, { end: false });
  assert.not.ok(open.writableEnded, "still open");
  open.end("\n--after--\n");
  assert.ok((await more).equals(Buffer.concat([trace, Buffer.from("\n--after--\n")])));
});

test("gzip with end: false: the gzip member is complete, the stream stays open", async () => {
  const bytes = sampleDump();
  const plain = new PassThrough();
  const p = collect(plain);
  await convertStream(memorySource(bytes, "a.rawtrace"), plain);
  const open = new PassThrough();
  const z = collect(open);
  await convertStream(memorySource(bytes, "a.rawtrace"), open, { gzip: true, end: false });
  assert.not.ok(open.writableEnded, "still open");
  open.end();
  assert.ok(gunzipSync(await z).equals(await p));
});

/** Settles within `ms` or fails the test: a call left pending is the bug these tests catch. */
function within<T>(p: Promise<T>, ms = 20000): Promise<T> {
  let timer: NodeJS.Timeout;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms)));
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

// A generated dump of 20,000 records in 16 KiB chunks (≈ 6 MB of JSON, many input windows): big enough that output
// leaves the core before the end and fills a socket's buffers.
const TMP = mkdtempSync(join(tmpdir(), "rawtrace-stream-"));
const BIG = join(TMP, "big.rawtrace");
generate(20000, BIG, 16 << 10);
const big = () => memorySource(readFileSync(BIG), "big.rawtrace");

test("a stream destroyed or ended before the call: IO at once, nothing converted", async () => {
  for (const kind of ["destroyed", "ended"] as const) {
    const w = new PassThrough();
    w.resume();
    if (kind === "destroyed") w.destroy();
    else w.end();
    const e = await within(convertStream(memorySource(sampleDump(), "a.rawtrace"), w).catch((x) => x));
    assert.is(e.name, "IO", kind);
    assert.match(e.message, /^a\.rawtrace: the output stream was/);
  }
});

test("a stream destroyed during the conversion (slow consumer that goes away): IO, not a pending promise", async () => {
  for (const gzip of [false, true]) {
    let got = 0;
    const w: Writable = new Writable({
      highWaterMark: 256,
      write(chunk, _e, done) {
        got += chunk.length;
        if (got > 65536) w.destroy();
        else setTimeout(done, 0);
      },
    });
    const e = await within(convertStream(big(), w, { gzip }).catch((x) => x));
    assert.is(e.name, "IO", `gzip ${gzip}`);
    assert.match(e.message, /closed before the conversion ended/);
  }
  // Named by its path (the file as given), not its base name: a path input, and a ByteSource that carries one.
  for (const input of [BIG, { ...big(), path: BIG }]) {
    const w: Writable = new Writable({ write: (_c, _e, done) => { w.destroy(); done(); } });
    const e = await within(convertStream(input, w).catch((x) => x));
    assert.is(e.name, "IO");
    assert.is(e.file, BIG);
    assert.ok(e.message.startsWith(`${BIG}: `), e.message);
  }
});

test("a stream another party ends during the conversion: IO, not a resolved call whose later bytes were dropped (before: resolved, 27 writes after the end lost)", async () => {
  for (const gzip of [false, true]) {
    for (const end of [true, false]) {
      const pt = new PassThrough();
      pt.resume(); // a consumer that reads everything
      let calls = 0;
      const e = await within(convertStream(big(), pt, {
        gzip, end, onProgress: () => {
          if (++calls === 2) pt.end();
        },
      }).then(() => null, (x) => x));
      assert.ok(e, `gzip ${gzip}, end ${end}: rejected`);
      assert.is(e.name, "IO", `gzip ${gzip}, end ${end}: ${e.message}`);
      assert.match(e.message, /ended by another party before the conversion ended/);
    }
  }
});

test("an HTTP client that disconnects mid-response: the server's convertStream rejects with IO", async () => {
  let settled!: (v: unknown) => void;
  const outcome = new Promise((ok) => (settled = ok));
  const server: Server = createServer((_req, res) => {
    // Every write reports a full buffer, so each window waits for 'drain' (never sent here): the client's disconnect
    // is what ends the wait, however much the loopback socket could have taken.
    const write = res.write.bind(res) as (...a: unknown[]) => boolean;
    res.write = ((...a: unknown[]) => {
      write(...a);
      return false;
    }) as typeof res.write;
    Object.defineProperty(res, "writableNeedDrain", { get: () => true });
    convertStream(big(), res).then(() => settled("resolved"), (e) => settled(e));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  try {
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((ok) => {
      const req = get({ host: "127.0.0.1", port }, (r) => {
        r.once("data", () => {
          req.destroy();
          ok();
        });
      });
      req.on("error", () => ok());
    });
    const e = (await within(outcome)) as Error;
    assert.instance(e, Error, "rejected");
    assert.is(e.name, "IO");
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("a conversion that fails after bytes went out destroys the stream; one that fails before leaves it open", async () => {
  const bytes = readFileSync(BIG);
  // A source whose emit pass (the last read) fails half-way.
  const failing: ByteSource = {
    name: "failing.rawtrace",
    size: bytes.length,
    open(pass) {
      let off = 0;
      return {
        read(dst: Uint8Array) {
          if (pass === 2 && off > bytes.length / 2) throw new Error("the disk went away");
          const n = Math.min(dst.length, bytes.length - off);
          dst.set(bytes.subarray(off, off + n));
          off += n;
          return n;
        },
      };
    },
  };
  const w = new PassThrough();
  w.resume();
  const e = await within(convertStream(failing, w).catch((x) => x));
  assert.is(e.name, "IO");
  assert.match(e.message, /the disk went away/);
  assert.ok(w.destroyed, "half a trace is not ended as if complete");
  assert.not.ok(w.writableFinished);

  const empty = new PassThrough();
  const e2 = await within(convertStream(memorySource(new Uint8Array(0), "empty.rawtrace"), empty).catch((x) => x));
  assert.is(e2.name, "EMPTY");
  assert.not.ok(empty.destroyed, "nothing written: the caller can still answer with an error");
  assert.not.ok(empty.writableEnded);
});

test("a Node stream as input is USAGE (the input is a path or a ByteSource)", async () => {
  const e = await convertStream(Readable.from([Buffer.from("x")]) as unknown as ByteSource, new PassThrough()).catch((x) => x);
  assert.is(e.name, "USAGE");
  assert.match(e.message, /path or a ByteSource/);
});

test("a file's read stream as input is USAGE too (fs.ReadStream has an open() method of its own)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-stream-in-"));
  const path = join(dir, "a.rawtrace");
  writeFileSync(path, sampleDump());
  const rs = createReadStream(path);
  await once(rs, "open");
  try {
    const e = await within(convertStream(rs as unknown as ByteSource, new PassThrough()).catch((x) => x));
    assert.is(e.name, "USAGE");
    assert.match(e.message, /path or a ByteSource/);
  } finally {
    rs.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.after(() => rmSync(TMP, { recursive: true, force: true }));

test.run();
