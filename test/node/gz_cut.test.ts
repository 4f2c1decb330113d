/**
 * A gzip input cut short (src/node/file_source.ts): cut inside a member's data, the dump's own TRUNCATED says what is
 * missing; cut inside a member's 8-byte trailer (CRC-32 and length) or inside a later member's header, the dump is
 * whole and only GZIP_DAMAGED can say that the gzip stream was cut (its checksum unchecked). Before, such a file
 * converted with no warning at all.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { convertFile } from "../../src/node/convert.js";
import { sampleDump } from "../helpers/sample_dump.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-gz-cut-"));
const raw = Buffer.from(sampleDump());
const gz = gzipSync(raw, { level: 6 });

/** Converts `bytes` (a .rawtrace.gz) to Chrome JSON: its warnings and the number of events written. */
async function convert(name: string, bytes: Uint8Array) {
  const input = join(tmp, `${name}.rawtrace.gz`);
  writeFileSync(input, bytes);
  const out = join(tmp, `${name}.json`);
  const r = await convertFile(input, out, { force: true });
  return { warnings: r.info.warnings, events: JSON.parse(readFileSync(out, "utf8")).traceEvents.length as number };
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

test.after(() => rmSync(tmp, { recursive: true, force: true }));
test.run();
