/**
 * Byte-identity check of core builds: converts every samples/*.rawtrace, every test/fixtures/**\/*.rawtrace and the
 * 1e6 bench dump (when generated) to Chrome JSON, XSpace and the viewer's timeline with each given `.wasm`, and
 * prints the SHA-256 (first 16 hex digits) of each output per build. With two or more builds it lists the outputs
 * whose bytes differ from the first build's and exits with status 1 when any does: a speed-only change to the core
 * must leave every output as it was. (Copy `build/rawtrace.wasm` aside before rebuilding to keep the base.)
 *
 *   tsx bench/output_hashes.ts --wasm base.wasm,new.wasm [--file extra.rawtrace ...] [--no-bench]
 *
 * `--no-bench` leaves the 1e6 bench dump out (a quick check of the small files).
 *
 * The timeline stream's layout changed on purpose with the viewer's records-out work (2026-11-25: records leave the
 * core as produced, then the order and partners): against a build before it, only the timeline rows differ, and
 * test/core/timeline_fixup.test.ts checks the events it carries are the same.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Engine } from "../src/core/engine.js";
import { fileSource } from "../src/node/file_source.js";
import { tieredSpill } from "../src/node/spill.js";

const { values } = parseArgs({
  options: {
    wasm: { type: "string", default: "build/rawtrace.wasm" },
    file: { type: "string", multiple: true, default: [] },
    "no-bench": { type: "boolean", default: false },
  },
});

/** The .rawtrace files under `dir`, sorted, recursively. */
function dumpsUnder(dir: string): string[] {
  const out: string[] = [];
  for (const f of readdirSync(dir).sort()) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) out.push(...dumpsUnder(p));
    else if (p.endsWith(".rawtrace")) out.push(p);
  }
  return out;
}

const files = [...dumpsUnder("samples"), ...dumpsUnder("test/fixtures"), ...values.file!];
if (!values["no-bench"] && existsSync("bench/data/cupti_1000000.rawtrace")) files.push("bench/data/cupti_1000000.rawtrace");
const formats = ["chrome", "xspace", "timeline"] as const;

/** `file format` → short SHA-256 of the output, or the error it raised, for one build. */
async function hashes(wasm: string): Promise<Map<string, string>> {
  const eng = await Engine.create(new WebAssembly.Module(readFileSync(wasm)));
  eng.spillFactory = () => tieredSpill(); // as the Node CLI: 16 MiB of spill in memory, the rest in a temporary file
  const out = new Map<string, string>();
  for (const f of files) {
    for (const format of formats) {
      const h = createHash("sha256");
      try {
        await eng.convert(fileSource(f), (b) => { h.update(b); }, { format });
        out.set(`${f} ${format}`, h.digest("hex").slice(0, 16));
      } catch (e) {
        out.set(`${f} ${format}`, `error: ${(e as Error).message.slice(0, 60)}`);
      }
    }
  }
  return out;
}

const builds = values.wasm!.split(",");
const all = [];
for (const w of builds) all.push(await hashes(w));
let differ = 0;
for (const key of all[0].keys()) {
  const row = all.map((m) => m.get(key)!);
  const same = row.every((h) => h === row[0]);
  if (!same) differ++;
  console.log(`${same ? " " : "≠"} ${row.join("  ")}  ${key}`);
}
if (builds.length > 1) {
  console.log(differ === 0 ? `all ${all[0].size} outputs byte-identical` : `${differ} of ${all[0].size} outputs differ`);
  process.exitCode = differ === 0 ? 0 : 1;
}
