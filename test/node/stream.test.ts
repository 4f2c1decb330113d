// SPDX-License-Identifier: MIT
/**
 * docs/node-api.md, convertStream: the stream is ended unless `end: false`; with it the caller can write after the
 * trace (plain and gzip). (Bytes equal to convertFile, back pressure, failing streams: test/node/api.test.ts.)
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { PassThrough } from "node:stream";
import { gunzipSync } from "node:zlib";
import { once } from "node:events";
import { convertStream } from "../../src/node/stream.js";
import { memorySource } from "../../src/core/engine.js";
import { sampleDump } from "../helpers/sample_dump.js";

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

test.run();
