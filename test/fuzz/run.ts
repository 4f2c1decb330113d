/**
 * Long fuzz runs (`npm run fuzz -- --seconds N [--seed S] [--out DIR]`): the same cases and oracle as the CI test
 * (fuzz.test.ts, harness.ts), for a time budget or a case count, from any seed. Every new defect (one per distinct
 * signature: path and message with the numbers taken out) is minimised by dropping whole chunks while it still
 * reproduces and written to DIR (default test/fixtures/fuzz/) as `<strategy>-<hash>.rawtrace`, ready to commit as
 * a regression fixture (fixtures.test.ts converts every file there). Prints the executions per path; exits 1 when
 * it found a defect.
 *
 *   --seconds N   stop after N seconds (default 600 unless --cases is given)
 *   --cases N     stop after N cases (each case runs through every path)
 *   --seed S      PRNG seed (default: derived from the clock, printed so the run can be repeated)
 *   --out DIR     where crash inputs go (default test/fixtures/fuzz)
 *   --fresh N     compare every Nth case's outputs with a fresh engine's (default 10; 0 = never)
 *   --input FILE  mutate this dump instead of the built-in small ones (repeatable; e.g. a real trace from samples/:
 *                 slower per case, more record kinds)
 *   --target T    convert (the above, default) or deflate: rawtrace's own gzip encoder, a fixed number of
 *                 generated inputs per seed (run_deflate.ts: --cases, --seed, --from, --out, --replay FILE)
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createEngine } from "../../src/node/wasm.js";
import { fuzzDeflate } from "./run_deflate.js";
import { PATHS, cases, minimise, newStats, runCase, signature, summary, totalExecutions } from "./harness.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string" },
    cases: { type: "string" },
    seed: { type: "string" },
    out: { type: "string" },
    fresh: { type: "string" },
    input: { type: "string", multiple: true },
    target: { type: "string", default: "convert" },
    from: { type: "string" },
    replay: { type: "string" },
  },
});
const num = (s: string | undefined, what: string): number | undefined => {
  if (s === undefined) return undefined;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`fuzz: --${what} wants a non-negative integer, got ${JSON.stringify(s)}`);
    process.exit(2);
  }
  return n;
};
if (values.target === "deflate") {
  process.exit(fuzzDeflate({ cases: num(values.cases, "cases"), seed: num(values.seed, "seed"), from: num(values.from, "from"),
    out: values.out, replay: values.replay }));
}
if (values.target !== "convert") {
  console.error(`fuzz: --target wants convert or deflate, got ${JSON.stringify(values.target)}`);
  process.exit(2);
}
const maxCases = num(values.cases, "cases");
const seconds = num(values.seconds, "seconds") ?? (maxCases === undefined ? 600 : undefined);
const seed = num(values.seed, "seed") ?? (Date.now() % 0x100000000);
const outDir = values.out ?? "test/fixtures/fuzz";
const freshEvery = num(values.fresh, "fresh") ?? 10;
const inputs = values.input?.map((f) => new Uint8Array(readFileSync(f)));

const eng = await createEngine();
const stats = newStats();
const seen = new Set<string>();
let found = 0;
const t0 = performance.now();
console.log(`fuzz: seed ${seed}, ${seconds !== undefined ? `${seconds} s` : ""}${maxCases !== undefined ? ` ${maxCases} cases` : ""}` +
  `${values.input ? `, inputs ${values.input.join(" ")}` : ""}, crash inputs to ${outDir}`);
for (const c of cases(seed, inputs)) {
  if (maxCases !== undefined && c.index >= maxCases) break;
  if (seconds !== undefined && performance.now() - t0 >= seconds * 1000) break;
  const compare = freshEvery > 0 && c.index % freshEvery === 0;
  const defects = await runCase(eng, c, stats, compare ? await createEngine() : undefined);
  // One report and one saved input per case, for the defects whose signature is new.
  const fresh = defects.filter((d) => !seen.has(signature(d)));
  if (fresh.length > 0) {
    for (const d of fresh) seen.add(signature(d));
    found += fresh.length;
    const first = fresh[0];
    const small = await minimise(eng, c.bytes, first.path, signature(first));
    const name = `${c.strategy}-${createHash("sha1").update(small).digest("hex").slice(0, 10)}.rawtrace`;
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, name);
    if (!existsSync(file)) writeFileSync(file, small);
    console.log(`DEFECT case ${c.index} (${c.strategy}):\n${fresh.map((d) => `  ${d.message}`).join("\n")}\n  input ` +
      `${c.bytes.length} B, minimised (for ${first.path}) to ${small.length} B: ${file}\n  replay: npm run fuzz -- ` +
      `--seed ${seed} --cases ${c.index + 1}${(values.input ?? []).map((f) => ` --input ${f}`).join("")} (a defect ` +
      `that only shows after earlier cases, such as a difference from a fresh engine, needs them too)`);
  }
  if (c.index % 5000 === 4999) console.log(`  … ${c.index + 1} cases, ${totalExecutions(stats)} executions`);
}
console.log(summary(stats, seed, performance.now() - t0));
console.log(`executions per path: ${PATHS.map((p) => `${p} ${stats.executions[p]}`).join(", ")}; total ${totalExecutions(stats)}`);
console.log(found ? `fuzz: ${found} distinct defect(s) found` : "fuzz: no defect found");
process.exit(found ? 1 : 0);
