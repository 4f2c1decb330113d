/**
 * A gzip member cut short with more members after it (a crashed appender, `cat cut.gz more.gz`), through both hosts'
 * sources: the CLI's (src/node/file_source.ts: zlib first, which decodes the next members' bytes as the cut member's
 * data and fails, then the member walk of src/core/gunzip.ts) and the viewer's (web/file_source.ts: the walk). Before,
 * the cut member's data ran on through every later member: garbage records from the cut activity chunk became events
 * (`<unknown kernel>`, correlation ids the dump never held), only TRUNCATED was said, and the members after the cut
 * were lost (bench/damage_loss.ts --gzip, mutator torn-member). Now the members after it convert, no event holds a value
 * the dump does not, and GZIP_DAMAGED names the cut.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource, withSourceWarnings } from "../../src/node/file_source.js";
import { fileByteSource, addGzipDamage } from "../../web/file_source.js";
import { isLossWarning } from "../../src/core/codes.js";
import type { ByteSource, ConvertResult } from "../../src/core/engine.js";
import { rng } from "../../src/tools/rng.js";
import { toChrome } from "../helpers/convert.js";

const MEMBER = 8192;
const inflate = async () => new WebAssembly.Module(readFileSync("build/inflate.wasm"));
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-gz-torn-"));

/**
 * An event's name, time, lane and the arguments garbage would change. Not an NVTX range's duration: one whose end
 * record was in the lost bytes is closed at the last timestamp (UNCLOSED_RANGE), and its GPU projection with it.
 */
const key = (e: any, name = e.name) => JSON.stringify([name, e.ts, /user_annotation/.test(e.cat) ? 0 : e.dur, e.pid, e.tid, e.args?.correlation, e.args?.grid, e.args?.block, e.args?.stream]);
/** A name the strings lost with the damaged bytes left as its fallback (`cuda_runtime_cbid_211`, `<unknown kernel>`). */
const fallback = (name: string) => /^<unknown|_cbid_\d+$/.test(name);
/** Whether `e` is an event of the original (`known`: its keys, with and without names), its name at most lost. */
const holds = (known: Set<string>, e: any) => known.has(key(e)) || (fallback(e.name) && known.has(key(e, "?")));

/** Converts through `src`: the events (X and flows) and the warnings, the host's GZIP_DAMAGED included. */
async function convert(src: ByteSource, warnings: (r: ConvertResult) => ConvertResult["info"]["warnings"]) {
  const parts: Buffer[] = [];
  const r = await (await createEngine()).convert(src, (b) => parts.push(Buffer.from(b)), {});
  const events = JSON.parse(Buffer.concat(parts).toString("utf8")).traceEvents.filter((e: any) => e.ph !== "M" && e.ph !== "i");
  return { events, warnings: warnings(r) };
}

test("a member cut short, then the members after it: CLI and viewer convert the members after the cut, no event the dump does not hold, the cut said", async () => {
  let cases = 0;
  let more = 0;
  try {
    // alexnet: one activity buffer across all but its first member (the bench's reproducer); h100: three buffers.
    for (const [sample, runs] of [["alexnet_a100_rank0", 4], ["h100_torch_train_nvtx", 6]] as const) {
      const raw = new Uint8Array(readFileSync(`samples/${sample}.rawtrace`));
      const members = Array.from({ length: Math.ceil(raw.length / MEMBER) }, (_, i) => gzipSync(raw.subarray(i * MEMBER, (i + 1) * MEMBER)));
      const { trace: orig } = await toChrome(raw);
      const known = new Set(orig.traceEvents.filter((e) => e.ph === "X").flatMap((e) => [key(e), key(e, "?")]));
      const r = rng(20261202);
      for (let n = 0; n < runs; n++) {
        const i = 1 + Math.floor(r() * (members.length - 2));
        const cut = 12 + Math.floor(r() * (members[i].length - 30));
        const file = Buffer.concat([...members.slice(0, i), members[i].subarray(0, cut), ...members.slice(i + 1)]);
        const what = `${sample}: member ${i} of ${members.length} cut at ${cut} of ${members[i].length}`;
        const path = join(tmp, `torn${cases}.rawtrace.gz`);
        writeFileSync(path, file);
        const node = fileSource(path);
        let cli;
        try {
          cli = await convert(node, (res) => withSourceWarnings(node, res).info.warnings);
        } finally {
          node.close();
        }
        const web = fileByteSource(new Blob([file]), "d.rawtrace.gz", { inflate });
        const viewer = await convert(web, (res) => addGzipDamage([...res.info.warnings], web.gzipDamage));
        // What the file cut at the cut member's start converts to (its cut buffer's whole records included): no fewer
        // now (the cut member's own bytes are vouched for no more than a damaged member's).
        const cutOnly = await convert(fileByteSource(new Blob([gzipSync(Buffer.from(raw.subarray(0, i * MEMBER)))]), "c.rawtrace.gz", { inflate }), (res) => res.info.warnings);
        const cutX = cutOnly.events.filter((e: any) => e.ph === "X").length;
        for (const [host, out] of [["CLI", cli], ["viewer", viewer]] as const) {
          const x = out.events.filter((e: any) => e.ph === "X");
          assert.equal(x.filter((e: any) => !holds(known, e)).map((e: any) => `${e.name} ${e.ts} ${e.args?.correlation}`), [], `${what}, ${host}: events the dump does not hold`);
          assert.ok(x.length >= cutX, `${what}, ${host}: ${x.length} events, the file cut at the member's start ${cutX}`);
          const g = out.warnings.find((w) => w.code === "GZIP_DAMAGED");
          assert.ok(g && g.message.includes(`cut short at compressed byte ${members.slice(0, i).reduce((s, m) => s + m.length, 0) + cut}`), `${what}, ${host}: ${JSON.stringify(out.warnings)}`);
          assert.ok(out.warnings.some((w) => isLossWarning(w.code)), `${what}, ${host}: a loss said`);
        }
        if (cli.events.filter((e: any) => e.ph === "X").length > cutX) more++;
        // The same events from both hosts (the CLI stops zlib at the next member's header: none of its garbage).
        assert.equal(cli.events, viewer.events, `${what}: CLI and viewer`);
        cases++;
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  assert.is(cases, 10);
  assert.ok(more >= 3, `${more} cuts with whole buffers after them converted (lost before)`);
});

test.run();
