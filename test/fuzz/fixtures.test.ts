/**
 * Every crash the fuzzers (fuzz.test.ts, `npm run fuzz`) or the overflow audit ever found is kept as an input in
 * test/fixtures/fuzz/ (README.md there says what each one found and how it was fixed). Each must now go through
 * every output path and convert or fail with a documented fatal error naming an offset (harness.ts), and one engine
 * that converts all of them one after the other must write exactly what a fresh engine writes for each (some
 * defects only showed on the next file: state or memory left behind by the previous one).
 */
import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createEngine } from "../../src/node/wasm.js";
import type { Engine } from "../../src/core/engine.js";
import { PATHS, execute, type FuzzPath } from "./harness.js";

const DIR = "test/fixtures/fuzz";
const files = readdirSync(DIR).filter((f) => f.endsWith(".rawtrace")).sort();
const readme = readFileSync(join(DIR, "README.md"), "utf8");

/** The expected outcome of each fixture: the last column of its row in README.md's table. */
const expected = new Map<string, string>();
for (const line of readme.split("\n")) {
  const cells = line.split("|").map((c) => c.trim());
  if (cells.length > 3 && cells[1].endsWith(".rawtrace")) expected.set(cells[1], cells[cells.length - 2]);
}

test("the crash fixtures are there and each has a row in README.md", () => {
  assert.ok(files.length >= 2, `fixtures in ${DIR}`);
  for (const f of files) assert.ok(expected.has(f), `${f} is described in ${DIR}/README.md`);
});

/** Outcome and SHA-1 of the output of `f` on `path` with engine `eng` (throws a Defect when not clean). */
async function run(eng: Engine, f: string, path: FuzzPath): Promise<string> {
  const h = createHash("sha1");
  const outcome = await execute(eng, new Uint8Array(readFileSync(join(DIR, f))), path, (b) => h.update(b));
  return `${outcome} ${h.digest("hex")}`;
}

/** What a fresh engine writes for each fixture and path. */
const fresh = new Map<string, string>();

for (const f of files) {
  test(`${f}: ${expected.get(f)} on every path`, async () => {
    const eng = await createEngine();
    for (const p of PATHS) {
      // execute throws a Defect for anything but a clean conversion or a documented fatal error naming an offset.
      const r = await run(eng, f, p);
      assert.is(r.split(" ")[0], expected.get(f), `${f} on ${p}`);
      fresh.set(`${f} ${p}`, r);
    }
  });
}

test("one engine converting every fixture twice in a row writes what fresh engines write", async () => {
  const eng = await createEngine();
  for (let round = 1; round <= 2; round++) {
    for (const f of files) {
      for (const p of PATHS) assert.is(await run(eng, f, p), fresh.get(`${f} ${p}`), `round ${round}: ${f} on ${p}`);
    }
  }
});

test.run();
