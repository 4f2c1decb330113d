/**
 * `npm run fuzz -- --target deflate [--cases N] [--seed S] [--from I] [--out DIR] [--replay FILE]`: fuzzes rawtrace's
 * own gzip encoder (deflate_target.ts) with cases I .. I + N − 1 of seed S (defaults: 2,000 cases from 0, seed
 * {@link DEFLATE_FUZZ_SEED}), the same bytes on every run. Each failing case is printed with its seed and index and
 * its input written to DIR (default test/fixtures/fuzz-deflate/) as `deflate-<seed>-<index>.bin`; `--replay FILE`
 * checks one such file alone. Every 10th case is also compressed by a fresh encoder, which must write the same bytes. Exits 1 when a case failed.
 */
import { join } from "node:path";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { FastGzip } from "../../src/node/fast_gzip.js";
import { checkDeflate, runDeflateCases } from "./deflate_target.js";

/** The default seed of the long deflate run (the CI test, fuzz_deflate.test.ts, uses its own). */
export const DEFLATE_FUZZ_SEED = 20261125;

/** Options of {@link fuzzDeflate}, as run.ts parsed them. */
export interface DeflateFuzzOptions {
  cases?: number;
  seed?: number;
  from?: number;
  out?: string;
  replay?: string;
}

/** Runs the deflate target from the command line; returns the exit status (0: no failure, 1: some). */
export function fuzzDeflate(o: DeflateFuzzOptions): number {
  const gz = new FastGzip();
  if (o.replay !== undefined) {
    const input = new Uint8Array(readFileSync(o.replay));
    const { member, problem } = checkDeflate(gz, input);
    console.log(problem ? `DEFECT ${o.replay} (${input.length} B): ${problem}` : `${o.replay}: ${input.length} B → ${member.length} B, round trip exact`);
    return problem ? 1 : 0;
  }
  const seed = o.seed ?? DEFLATE_FUZZ_SEED;
  const from = o.from ?? 0;
  const count = o.cases ?? 2000;
  const outDir = o.out ?? "test/fixtures/fuzz-deflate";
  const t0 = performance.now();
  console.log(`fuzz deflate: seed ${seed}, cases ${from}..${from + count - 1}, failing inputs to ${outDir}`);
  const s = runDeflateCases(gz, seed, from, count, { freshEvery: 10, onFailure: (c, message) => {
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, `deflate-${seed}-${c.index}.bin`);
    writeFileSync(file, c.bytes);
    console.log(`DEFECT seed ${seed} case ${c.index} (${c.kind}, ${c.bytes.length} B): ${message}\n  input: ${file}\n` +
      `  replay: npm run fuzz -- --target deflate --replay ${file}  (or --seed ${seed} --from ${c.index} --cases 1)`);
  }, onProgress: (done, bytes) => console.log(`  … ${done} cases, ${(bytes / 1e6).toFixed(0)} MB`) });
  const secs = (performance.now() - t0) / 1000;
  console.log(`fuzz deflate: ${s.cases} cases, ${(s.inputBytes / 1e6).toFixed(1)} MB in, ${(s.memberBytes / 1e6).toFixed(1)} MB out, ` +
    `${secs.toFixed(1)} s, ${s.freshChecks} also by a fresh encoder; cases by first segment: ${Object.entries(s.kinds).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  console.log(s.failures.length ? `fuzz deflate: ${s.failures.length} failing case(s)` : "fuzz deflate: no defect found");
  return s.failures.length ? 1 : 0;
}
