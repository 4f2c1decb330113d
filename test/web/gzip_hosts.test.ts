/**
 * The two gzip readers agree on damaged files: the CLI's (src/node/file_source.ts: Node's zlib, then the member walk
 * of src/node/gzip_members.ts after a failure) and the viewer's (web/file_source.ts over src/core/gunzip.ts and
 * build/inflate.wasm, gzip chosen by the first bytes as web/worker.ts does). Each of the five real samples is gzipped
 * in 8 KiB members (as block-parallel gzip writes it) and damaged a fixed number of times from a fixed seed — bits
 * flipped, the file cut, junk inserted, a range overwritten, a member dropped, two members swapped — and both hosts
 * must convert it to the same Chrome JSON with the same warnings at the same offsets, or fail with the same message
 * (less the file name each host gives). The handwritten cases of what the viewer reads "as the CLI" are in
 * file_source.test.ts; this is the random sweep over the same rules.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import { createEngine } from "../../src/node/wasm.js";
import type { ByteSource, Engine } from "../../src/core/engine.js";
import { fileSource } from "../../src/node/file_source.js";
import { fileByteSource, gzipOptions } from "../../web/file_source.js";
import { rng } from "../../src/tools/rng.js";

const SAMPLES = ["alexnet_a100_rank0", "mi250_minitoy_rocprof", "xpu_train_pti", "gaudi2_mlp_synapse", "h100_torch_train_nvtx"];
const SEED = 20261203;
const CASES = 120; // per sample
const MEMBER = 8192;
const inflate = new WebAssembly.Module(readFileSync("build/inflate.wasm"));

interface Outcome {
  /** sha-256 of the Chrome JSON with its warnings list emptied (first 16 hex digits), or the failure's message. */
  out: string;
  /** The output's rawtrace.warnings as `CODE@offset`. */
  said: string;
}

async function convert(eng: Engine, src: ByteSource): Promise<Outcome> {
  const parts: Buffer[] = [];
  try {
    await eng.convert(src, (b) => parts.push(Buffer.from(b)), { traceName: "t" });
  } catch (e) {
    // Each host names the input its own way (a path, the dropped file's name) before "offset N" or the gzip damage.
    const m = String((e as Error).message);
    return { out: `failed: ${m.replace(/^.*?(at compressed byte)/, "$1").replace(/^\S+: (offset)/, "$1")}`, said: "" };
  }
  const text = Buffer.concat(parts).toString("utf8");
  const said = (JSON.parse(text).rawtrace.warnings as Array<{ code: string; offset: number }>).map((w) => `${w.code}@${w.offset}`).join(" ");
  const out = createHash("sha256").update(text.replace(/"warnings":\[[^\]]*\]/, '"warnings":[]')).digest("hex").slice(0, 16);
  return { out, said };
}

/** One damaged copy of the members `ms`, and what was done. */
function damage(ms: Buffer[], r: () => number): { gz: Buffer; what: string } {
  const pick = (n: number) => Math.floor(r() * n);
  const whole = Buffer.concat(ms);
  switch (pick(6)) {
    case 0: {
      const b = Buffer.from(whole);
      const n = 1 + pick(3);
      for (let k = 0; k < n; k++) b[pick(b.length)] ^= 1 << pick(8);
      return { gz: b, what: `${n} bits flipped` };
    }
    case 1: {
      const at = pick(whole.length);
      return { gz: whole.subarray(0, at), what: `cut at ${at}` };
    }
    case 2: {
      const at = pick(whole.length);
      const junk = Buffer.from(Array.from({ length: 1 + pick(300) }, () => pick(256)));
      return { gz: Buffer.concat([whole.subarray(0, at), junk, whole.subarray(at)]), what: `${junk.length} junk bytes at ${at}` };
    }
    case 3: {
      const b = Buffer.from(whole);
      const at = pick(b.length);
      const n = 1 + pick(200);
      for (let k = at; k < Math.min(b.length, at + n); k++) b[k] = pick(256);
      return { gz: b, what: `${n} bytes overwritten at ${at}` };
    }
    case 4: {
      const i = pick(ms.length);
      return { gz: Buffer.concat(ms.filter((_, k) => k !== i)), what: `member ${i} dropped` };
    }
    default: {
      const i = pick(ms.length);
      const j = pick(ms.length);
      const s = [...ms];
      [s[i], s[j]] = [s[j], s[i]];
      return { gz: Buffer.concat(s), what: `members ${i} and ${j} swapped` };
    }
  }
}

test(`damaged .gz: the CLI's reader and the viewer's give the same output and warnings (${CASES} cases × ${SAMPLES.length} samples, seed ${SEED})`, async () => {
  const eng = await createEngine();
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-gz-hosts-"));
  const tally = { converted: 0, failed: 0, damageSaid: 0 };
  try {
    for (const sample of SAMPLES) {
      const dump = readFileSync(`samples/${sample}.rawtrace`);
      const ms: Buffer[] = [];
      for (let i = 0; i < dump.length; i += MEMBER) ms.push(gzipSync(dump.subarray(i, i + MEMBER)));
      const r = rng(SEED ^ (sample.length * 7919));
      for (let i = 0; i < CASES; i++) {
        const { gz, what } = damage(ms, r);
        const path = join(dir, `${sample}.rawtrace.gz`);
        writeFileSync(path, gz);
        const cli = fileSource(path);
        let a: Outcome;
        try {
          a = await convert(eng, cli);
        } finally {
          cli.close();
        }
        const blob = new Blob([gz]);
        const b = await convert(eng, fileByteSource(blob, `${sample}.rawtrace.gz`, { ...(await gzipOptions(blob)), inflate: async () => inflate }));
        assert.equal(b, a, `${sample} case ${i} (${what}): the viewer's reader against the CLI's`);
        if (a.out.startsWith("failed")) tally.failed++;
        else tally.converted++;
        if (/GZIP_DAMAGED/.test(a.said)) tally.damageSaid++;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // The sweep reaches both kinds of outcome and the damage rules, not only files that fail at their first byte.
  assert.ok(tally.converted > (CASES * SAMPLES.length) / 2, JSON.stringify(tally));
  assert.ok(tally.failed > 0 && tally.damageSaid > CASES, JSON.stringify(tally));
});

test.run();
