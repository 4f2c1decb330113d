/**
 * src/node/inflated_copy.ts and its use by the CLI's gzip source (src/node/file_source.ts): the index pass keeps the
 * bytes it decompressed, and the same conversion's later passes read them back instead of inflating the file again.
 * Before, every pass inflated the .gz (the 1e6-record bench dump: ≈ 0.3 s per pass).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { InflatedCopy } from "../../src/node/inflated_copy.js";
import { fileSource, withSourceWarnings } from "../../src/node/file_source.js";
import { createEngine } from "../../src/node/wasm.js";
import type { ByteSource } from "../../src/core/engine.js";
import { withoutInflatedCopy } from "../helpers/no_inflated_copy.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-inflated-"));
const dump = readFileSync("samples/h100_torch_train_nvtx.rawtrace");

/** The Chrome JSON of `src` (each pass's open passed to `onOpen` first) and its warnings. */
async function convert(src: ByteSource, onOpen?: (pass: number | undefined) => void): Promise<{ json: string; warnings: string }> {
  const open = src.open.bind(src);
  src.open = (pass?: 1 | 2 | 3) => {
    onOpen?.(pass);
    return open(pass);
  };
  const parts: Buffer[] = [];
  const r = await (await createEngine()).convert(src, (b) => parts.push(Buffer.from(b)), { format: "chrome", traceName: "t" });
  return { json: Buffer.concat(parts).toString("utf8"), warnings: r.info.warnings.map((w) => `${w.code}@${w.offset}`).join(" ") };
}

test("a copy: appended bytes read back whole once finished; past its budget it is given up", async () => {
  const c = InflatedCopy.start(tmp, 100)!;
  assert.ok(c);
  assert.ok(c.append(Uint8Array.from({ length: 60 }, (_, i) => i)));
  assert.not.ok(c.complete, "not complete before finish");
  assert.ok(c.append(Uint8Array.from({ length: 40 }, (_, i) => 60 + i)));
  c.finish();
  assert.ok(c.complete);
  const r = c.reader();
  const got: number[] = [];
  const b = new Uint8Array(7);
  for (let n; (n = await r.read(b)) > 0;) got.push(...b.subarray(0, n));
  assert.equal(got, Array.from({ length: 100 }, (_, i) => i));
  c.close();
  assert.not.ok(c.complete);
  const small = InflatedCopy.start(tmp, 10)!;
  assert.ok(small.append(new Uint8Array(10)));
  assert.not.ok(small.append(new Uint8Array(1)), "the 11th byte is past the budget");
  small.finish();
  assert.not.ok(small.complete, "given up");
  // Unnamed: nothing is left in the folder.
  assert.equal(readdirSync(tmp).filter((n) => n.includes("inflated")), []);
  assert.is(InflatedCopy.start(join(tmp, "missing", "dir")), null, "no folder: no copy");
});

test("the later passes read the index pass's bytes: the .gz removed after the index pass still converts, the same output", async () => {
  const plain = await convert(fileSource(writeTo("plain.rawtrace", dump)));
  const path = writeTo("d.rawtrace.gz", gzipSync(dump));
  const src = fileSource(path);
  const passes: (number | undefined)[] = [];
  try {
    const got = await convert(src, (p) => {
      passes.push(p);
      // Gone before the first pass after the index pass: before, that pass opened it again ("cannot open").
      if (p !== 1 && existsSync(path)) unlinkSync(path);
    });
    assert.is(passes[0], 1);
    assert.ok(passes.length >= 2, passes.join(" "));
    assert.ok(got.json === plain.json, "the plain dump's Chrome JSON");
    assert.is(got.warnings, plain.warnings);
  } finally {
    src.close();
  }
});

test("without a copy (no temporary folder) every pass inflates, the same output; damaged and multi-member files alike", async () => {
  const half = Math.floor(dump.length / 2 / 8) * 8;
  const members = Buffer.concat([gzipSync(dump.subarray(0, half)), gzipSync(dump.subarray(half))]);
  const damaged = Buffer.from(members);
  damaged[Math.floor(members.length / 4)] ^= 0x40;
  const cut = members.subarray(0, members.length - 3000);
  for (const [name, gz] of [["one", gzipSync(dump)], ["members", members], ["damaged", damaged], ["cut", cut]] as const) {
    const path = writeTo(`${name}.rawtrace.gz`, gz);
    const run = async () => {
      const src = fileSource(path);
      try {
        const r = await convert(src);
        // The host's own warnings (GZIP_DAMAGED) as the CLI adds them.
        return { ...r, host: withSourceWarnings(src, { info: { warnings: [] } as never }).info.warnings.map((w) => `${w.code}@${w.offset}:${w.detail}`).join(" ") };
      } finally {
        src.close();
      }
    };
    const withCopy = await run();
    const without = await withoutInflatedCopy(run);
    assert.ok(withCopy.json === without.json, `${name}: the same Chrome JSON`);
    assert.is(withCopy.warnings, without.warnings, name);
    assert.is(withCopy.host, without.host, name);
    if (name !== "one" && name !== "members") assert.match(withCopy.warnings, /GZIP_DAMAGED|TRUNCATED/, name);
  }
});

test("a copy lives as long as its source and is not made for a pass read alone (info)", async () => {
  /** This process's descriptors open on a copy (unnamed: its link reads "(deleted)"). */
  const copies = () => readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return /rawtrace-inflated.*\(deleted\)$/.test(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      return false;
    }
  }).length;
  const before = copies();
  const src = fileSource(writeTo("info.rawtrace.gz", gzipSync(dump)));
  try {
    const info = await (await createEngine()).info(src);
    assert.ok(info.complete);
    assert.is(copies(), before, "info: no copy (before: one, the whole dump written for no later pass)");
    await convert(src);
    assert.is(copies(), before + 1, "a conversion: its copy, kept until the source closes");
  } finally {
    src.close();
  }
  assert.is(copies(), before, "closed with its source");
});

/** Writes `bytes` to `name` in the test's folder; returns the path. */
function writeTo(name: string, bytes: Uint8Array): string {
  const p = join(tmp, name);
  writeFileSync(p, bytes);
  return p;
}

test.after(() => rmSync(tmp, { recursive: true, force: true }));
test.run();
