// SPDX-License-Identifier: MIT
/**
 * docs/errors.md: a fatal error about a file's content names the file, the byte offset and what was expected, in
 * the message and in `file`/`offset`; through the CLI too (one line on stderr). BAD_MAGIC, FUTURE_FORMAT and EMPTY
 * offsets: test/core/container.test.ts; here UNSUPPORTED_VENDOR (at the HEADER chunk, or at the first activity when
 * the dump has none) and the CLI's line.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toChrome } from "../helpers/convert.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import { PREAMBLE_SIZE } from "../../src/format/container.js";
import { readHeader } from "../../src/format/header.js";
import { isRawtraceError } from "../../src/core/codes.js";
import { T0 } from "../helpers/sample_dump.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-fatal-"));

/** A dump whose HEADER names vendor 3 (ROCm roctracer: no decoder in this build). */
function otherVendor(): Uint8Array {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 3, vendorVersion: 1, runtimeVersion: 0, driverVersion: 0, pid: 1, startNs: T0, hostname: "h", commandLine: "x" });
  w.activity(new Uint8Array(64));
  w.end();
  return w.bytes();
}

test("UNSUPPORTED_VENDOR: the file, the offset of the chunk that needed the decoder, the vendor code", async () => {
  const e: unknown = await toChrome(otherVendor(), {}, "roctracer.rawtrace").then(() => null, (x) => x);
  assert.ok(isRawtraceError(e), String(e));
  if (!isRawtraceError(e)) return;
  assert.is(e.code, "UNSUPPORTED_VENDOR");
  assert.is(e.file, "roctracer.rawtrace");
  assert.ok(typeof e.offset === "number" && e.offset >= PREAMBLE_SIZE, `offset ${e.offset}`);
  assert.is(e.message, `roctracer.rawtrace: offset ${e.offset}: vendor code 3 has no decoder in this build (1 = CUDA, 2 = ROCm, 4 = Intel XPU and 5 = Habana HPU are supported)`);
});

test("the CLI prints the error as one line naming the file and offset, exit non-zero", () => {
  const bad = join(tmp, "trace.json.rawtrace");
  writeFileSync(bad, '{"traceEvents": []}');
  const r = spawnSync(process.execPath, ["dist/node/cli.js", "convert", bad, "-o", join(tmp, "out.json")], { encoding: "utf8" });
  assert.ok(r.status !== 0 && r.status !== null, `exit ${r.status}`);
  const lines = r.stderr.trim().split("\n");
  assert.is(lines.length, 1, r.stderr);
  assert.match(lines[0], /^rawtrace: .*trace\.json\.rawtrace: offset 0: not a \.rawtrace file: expected the 8 bytes 'RAWTRACE' at offset 0; it looks like JSON text \(a trace already converted\?\): rawtrace reads the \.rawtrace dumps its collectors write; Chrome trace JSON opens in Perfetto UI or chrome:\/\/tracing as it is$/);
});

test("info of a dump with no decoder shows its HEADER (text and --json), then the error; a damaged or cut HEADER reads as none", () => {
  const file = join(tmp, "roctracer.rawtrace");
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: 3, vendorVersion: 60200, runtimeVersion: 0, driverVersion: 0, pid: 4242, rank: 3, localRank: 1, worldSize: 8,
    collectorVersion: 0x000203, startNs: 1700000000123456789n, hostname: "gpu-node-7", commandLine: "python\0train.py\0--lr\0",
    vendorVersionText: "roctracer 4.1",
  });
  w.activity(new Uint8Array(64));
  w.end();
  const bytes = w.bytes();
  writeFileSync(file, bytes);
  const r = spawnSync(process.execPath, ["dist/node/cli.js", "info", file], { encoding: "utf8" });
  assert.is(r.status, 1, r.stderr);
  assert.equal(r.stdout.trim().split("\n"), [
    `${file}: ${bytes.length} B, vendor code 3 (rocm-roctracer): no decoder in this build, only its HEADER is shown`,
    `  vendor        tracing library 60200 "roctracer 4.1", runtime ?, driver ?`,
    "  process       pid 4242 on gpu-node-7: python train.py --lr",
    "  rank          3 of 8 (local 1)",
    "  collector     0.2.3, started 2023-11-14T22:13:20.123Z",
  ]);
  assert.match(r.stderr, /vendor code 3 has no decoder in this build/);
  const j = spawnSync(process.execPath, ["dist/node/cli.js", "info", file, "--json"], { encoding: "utf8" });
  const f = JSON.parse(j.stdout).files[0];
  assert.is(f.ok, false);
  assert.is(f.error.code, "UNSUPPORTED_VENDOR");
  assert.equal([f.header.vendor, f.header.pid, f.header.hostname, f.header.commandLine, f.header.startNs],
    [3, 4242, "gpu-node-7", ["python", "train.py", "--lr"], "1700000000123456789"]);
  // One flipped byte in the HEADER's payload (its hostname) or in its chunk header: nothing of it is believed.
  assert.is(readHeader(bytes)?.hostname, "gpu-node-7");
  for (const at of [PREAMBLE_SIZE + 24 + 60, PREAMBLE_SIZE + 13]) {
    const bad = bytes.slice();
    bad[at] ^= 0x20;
    assert.is(readHeader(bad), null, `byte ${at}`);
  }
  assert.is(readHeader(bytes.subarray(0, 100)), null, "cut inside the HEADER");
  // A damaged magic: the core reads the dump all the same (PREAMBLE_DAMAGED), and info still shows its HEADER.
  const damaged = bytes.slice();
  damaged[2] ^= 0x40;
  writeFileSync(file, damaged);
  const d = spawnSync(process.execPath, ["dist/node/cli.js", "info", file], { encoding: "utf8" });
  assert.is(d.status, 1, d.stderr);
  assert.match(d.stdout, "  process       pid 4242 on gpu-node-7: python train.py --lr");
  assert.match(d.stderr, /vendor code 3 has no decoder in this build/);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
