/**
 * Every crash the fuzzers (fuzz.test.ts, `npm run fuzz`) or the overflow audit ever found is kept as an input in
 * test/fixtures/fuzz/ (README.md there says what each one found and how it was fixed). Each must now go through
 * every output path and convert or fail with a documented fatal error naming an offset (harness.ts).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createEngine } from "../../src/node/wasm.js";
import { PATHS, execute } from "./harness.js";

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

for (const f of files) {
  test(`${f}: ${expected.get(f)} on every path`, async () => {
    const eng = await createEngine();
    const bytes = new Uint8Array(readFileSync(join(DIR, f)));
    for (const p of PATHS) {
      // execute throws a Defect for anything but a clean conversion or a documented fatal error naming an offset.
      assert.is(await execute(eng, bytes, p), expected.get(f), `${f} on ${p}`);
    }
  });
}

test.run();
