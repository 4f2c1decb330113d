// SPDX-License-Identifier: MIT
/**
 * expandInputs (src/node/inputs.ts) as docs/node-api.md describes it: `{files, unmatched, repeated, aliases, skipped}`,
 * bracket classes and their negation, natural order over whole paths, missing plain paths kept, empty directories
 * unmatched, one file under several names (symlinks, hard links) taken once, a folder's x.rawtrace.gz beside its
 * x.rawtrace left out and said by the CLI. (`*`, `?`,
 * `**` and directories: test/node/batch.test.ts.)
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expandInputs, naturalCompare } from "../../src/node/inputs.js";
import { cliIn, lines } from "../helpers/cli.js";

const d = mkdtempSync(join(tmpdir(), "rawtrace-inputs-"));
for (const n of ["rank0", "rank1", "rank2", "rank3", "rank10", ".hidden"]) writeFileSync(join(d, `${n}.rawtrace`), "");
mkdirSync(join(d, "empty"));
mkdirSync(join(d, "node2"));
mkdirSync(join(d, "node10"));
writeFileSync(join(d, "node10", "rank0.rawtrace"), "");
writeFileSync(join(d, "node2", "rank0.rawtrace"), "");
const at = (...names: string[]) => names.map((n) => join(d, n));
const { cli } = cliIn(d);

test("natural order has no ties: names a numeric comparison calls equal (rank01, rank1) keep one order, whatever the listing's", () => {
  assert.is(naturalCompare("rank01.rawtrace", "rank1.rawtrace"), -1);
  assert.is(naturalCompare("rank1.rawtrace", "rank01.rawtrace"), 1);
  assert.is(naturalCompare("rank2.rawtrace", "rank10.rawtrace"), -1);
  const names = ["rank1.rawtrace", "rank01.rawtrace", "rank001.rawtrace", "Rank1.rawtrace"];
  const sorted = [...names].sort(naturalCompare);
  assert.equal([...names].reverse().sort(naturalCompare), sorted, "the same order from the other listing");
});

test("[…] and [!…] classes; results in natural order", () => {
  assert.equal(expandInputs([join(d, "rank[02].rawtrace")]), { files: at("rank0.rawtrace", "rank2.rawtrace"), unmatched: [], repeated: [], aliases: [], skipped: [] });
  assert.equal(expandInputs([join(d, "rank[!02].rawtrace")]).files, at("rank1.rawtrace", "rank3.rawtrace"));
  assert.equal(expandInputs([join(d, "rank[0-1]*.rawtrace")]).files, at("rank0.rawtrace", "rank1.rawtrace", "rank10.rawtrace"));
  // Natural order over whole paths: node2 before node10.
  assert.equal(expandInputs([join(d, "node*", "rank0.rawtrace")]).files, at("node2/rank0.rawtrace", "node10/rank0.rawtrace"));
});

test("hidden files only by a pattern that starts with a dot", () => {
  assert.not.ok(expandInputs([join(d, "*.rawtrace")]).files.includes(join(d, ".hidden.rawtrace")));
  assert.equal(expandInputs([join(d, ".*.rawtrace")]).files, at(".hidden.rawtrace"));
});

test("a missing plain path is kept (it fails alone later); an empty directory or a glob with no match is unmatched", () => {
  const missing = join(d, "gone.rawtrace");
  assert.equal(expandInputs([missing, join(d, "empty"), join(d, "x*.rawtrace")]), {
    files: [missing], unmatched: [join(d, "empty"), join(d, "x*.rawtrace")], repeated: [], aliases: [], skipped: [],
  });
});

test("a trailing dir/** is every dump below dir (.rawtrace and .rawtrace.gz, not other files); arguments keep their order; - is standard input", () => {
  mkdirSync(join(d, "tree/deep"), { recursive: true });
  writeFileSync(join(d, "tree/a.rawtrace"), "");
  writeFileSync(join(d, "tree/deep/b.rawtrace.gz"), "");
  writeFileSync(join(d, "tree/deep/notes.txt"), "");
  assert.equal(expandInputs([join(d, "tree/**")]), { files: at("tree/a.rawtrace", "tree/deep/b.rawtrace.gz"), unmatched: [], repeated: [], aliases: [], skipped: [] });
  // The order of the arguments is the user's: node10's file before node2's when given so.
  assert.equal(expandInputs([join(d, "node10"), join(d, "node2")]).files, at("node10/rank0.rawtrace", "node2/rank0.rawtrace"));
  assert.equal(expandInputs(["-"]).files, ["/dev/stdin"]);
  // x.rawtrace.gz beside x.rawtrace is the same dump twice: the folder gives the plain one only, and says which it
  // left out (once, though the folder is given twice and walked by a pattern too).
  writeFileSync(join(d, "tree/a.rawtrace.gz"), "");
  const both = expandInputs([join(d, "tree"), join(d, "tree"), join(d, "tree/**")]);
  assert.equal(both.files, at("tree/a.rawtrace", "tree/deep/b.rawtrace.gz"));
  assert.equal(both.skipped, at("tree/a.rawtrace.gz"));
  // Named alone, it is an input like any other.
  assert.equal(expandInputs([join(d, "tree/a.rawtrace.gz")]).files, at("tree/a.rawtrace.gz"));
  // With its x.rawtrace among the files, however both came — a pattern (before 2026-12-03: both, a merge had that rank
  // twice), the shell's expansion of one (two names), a folder and a name —, it is left out the same way.
  for (const args of [[join(d, "tree/*")], [join(d, "tree/a.rawtrace.gz"), join(d, "tree/a.rawtrace")], [join(d, "tree"), join(d, "tree/a.rawtrace.gz")]]) {
    const r = expandInputs(args);
    assert.ok(!r.files.includes(join(d, "tree/a.rawtrace.gz")) && r.files.includes(join(d, "tree/a.rawtrace")), args.join(" "));
    assert.equal(r.skipped, at("tree/a.rawtrace.gz"), args.join(" "));
  }
  // A pattern that matches the .gz alone keeps it: the plain one is not among the files.
  assert.equal(expandInputs([join(d, "tree/*.gz")]).files, at("tree/a.rawtrace.gz"));
});

test("the CLI names each x.rawtrace.gz a folder left out beside its x.rawtrace (ten, then how many more)", () => {
  const g = join(d, "gzpairs");
  mkdirSync(g);
  for (let i = 0; i < 12; i++) {
    writeFileSync(join(g, `rank${i}.rawtrace`), "");
    writeFileSync(join(g, `rank${i}.rawtrace.gz`), "");
  }
  writeFileSync(join(g, "alone.rawtrace.gz"), "");
  const r = cli(["info", g]);
  const said = lines(r.stderr).filter((l) => l.includes("left out"));
  assert.equal(said.slice(0, 2), [
    `rawtrace: ${g}/rank0.rawtrace.gz left out: ${g}/rank0.rawtrace beside it is the same dump`,
    `rawtrace: ${g}/rank1.rawtrace.gz left out: ${g}/rank1.rawtrace beside it is the same dump`,
  ]);
  assert.is(said.length, 11, r.stderr);
  assert.is(said[10], "rawtrace: … and 2 more .rawtrace.gz left out beside their .rawtrace");
  assert.not.match(r.stderr, "alone.rawtrace.gz left out");
});

test("a file named twice is read once and listed as repeated; a folder or glob covering a named file is not", () => {
  const r0 = join(d, "rank0.rawtrace");
  assert.equal(expandInputs([r0, join(d, "rank1.rawtrace"), r0, `${d}/./rank0.rawtrace`]), {
    files: at("rank0.rawtrace", "rank1.rawtrace"), unmatched: [], repeated: [r0, `${d}/./rank0.rawtrace`], aliases: [], skipped: [],
  });
  assert.equal(expandInputs([r0, join(d, "rank[01].rawtrace")]).repeated, []);
  assert.equal(expandInputs([join(d, "rank1.rawtrace"), join(d, "rank[01].rawtrace"), d]).repeated, []);
});

test("one file under another name (a symlink, a hard link) is taken once, named or found in a folder, and listed as an alias", () => {
  const s = join(d, "same");
  mkdirSync(s);
  writeFileSync(join(s, "run.rawtrace"), "x");
  symlinkSync("run.rawtrace", join(s, "latest.rawtrace"));
  linkSync(join(s, "run.rawtrace"), join(s, "copy.rawtrace"));
  symlinkSync("loop.rawtrace", join(s, "loop.rawtrace"));
  const [run, latest, copy, loop] = ["run", "latest", "copy", "loop"].map((n) => join(s, `${n}.rawtrace`));
  // Named: the first name is kept; the others are repeats of it and aliases.
  assert.equal(expandInputs([run, latest, copy, latest]), {
    files: [run], unmatched: [], repeated: [latest, copy, latest],
    aliases: [{ path: latest, of: run }, { path: copy, of: run }], skipped: [],
  });
  // Found in a folder (natural order: copy, latest, loop, run): one file, its other names aliases; the symlink loop,
  // which cannot be stat'ed, is told apart by its path (and fails alone when read).
  assert.equal(expandInputs([s]), {
    files: [copy, loop], unmatched: [], repeated: [], aliases: [{ path: latest, of: copy }, { path: run, of: copy }],
    skipped: [],
  });
  // A folder covering a named file under its own name is no alias (nor a repeat).
  assert.equal(expandInputs([copy, s]).aliases, [{ path: latest, of: copy }, { path: run, of: copy }]);
  assert.equal(expandInputs([loop, `${s}/./loop.rawtrace`]).files, [loop]);
});

test.after(() => rmSync(d, { recursive: true, force: true }));

test.run();
