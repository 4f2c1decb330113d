/**
 * web/search.ts nameTest in Node: a query as a case-insensitive substring, or as a regular expression that takes
 * the escapes people type (`\_`, `\-`: the character itself), and names a bad one.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { firstMatches, nameTest, searchEvents, stepMatch } from "../../web/search.js";
import { Kind, TL_NONE } from "../../src/core/timeline.js";
import type { LoadedFile } from "../../web/model.js";

/** A file of events given as [name id or TL_NONE, kind, start, word 9] with the name table `names` (what search reads). */
function fakeFile(names: string[], evs: Array<[number, number, number, number]>, offset = 0): LoadedFile {
  const events = {
    length: evs.length,
    name: (i: number) => evs[i][0],
    kind: (i: number) => evs[i][1],
    start: (i: number) => evs[i][2],
    word: (i: number, w: number) => (w === 9 ? evs[i][3] : 0),
  };
  return { names, events, offset } as unknown as LoadedFile;
}

test("regex: ordinary escapes of punctuation are accepted (bn_bw\\_1C11), case-insensitive", () => {
  const t = nameTest("bn_bw\\_1C11", true);
  assert.ok(t("cudnn::bn_bw_1C11_kernel"));
  assert.ok(t("BN_BW_1c11"));
  assert.not.ok(t("bn_bw1C11"));
  assert.ok(nameTest("^elementwise\\-\\w+$", true)("Elementwise-add"));
  assert.ok(nameTest("ProfilerStep#\\d+", true)("ProfilerStep#12"));
});

test("regex: a bad expression throws a SyntaxError naming it; a substring query never does", () => {
  assert.throws(() => nameTest("gemm(", true), (e: Error) => e instanceof SyntaxError);
  assert.ok(nameTest("gemm(", false)("volta_gemm(x)"));
  assert.ok(nameTest("GEMM", false)("volta_sgemm_128"));
});

test("CUDA graphs (no name table entry) match by the name the page shows: 'CUDA Graph 3'", () => {
  const f = fakeFile(["cudaGraphLaunch"], [[0, Kind.API_RUNTIME, 10, 0], [TL_NONE, Kind.GRAPH, 20, 3], [TL_NONE, Kind.GRAPH, 30, 4]]);
  assert.equal([...searchEvents([f], nameTest("CUDA Graph 3", false)).events.get(f)!], [1]);
  assert.equal([...searchEvents([f], nameTest("graph", false)).events.get(f)!], [0, 1, 2]);
  assert.is(searchEvents([f], nameTest("^CUDA Graph \\d+$", true)).total, 2);
});

test("the listed matches are the first in time order across rows and files, as stepping and its 'k of N' count them", () => {
  // Table order is by row: a later row's early events come after an earlier row's late ones.
  const a = fakeFile(["k"], [[0, Kind.KERNEL, 50, 0], [0, Kind.KERNEL, 60, 0], [0, Kind.KERNEL, 5, 0], [0, Kind.KERNEL, 7, 0]]);
  const b = fakeFile(["k"], [[0, Kind.KERNEL, 1, 0], [0, Kind.KERNEL, 55, 0]], 2);
  const files = [a, b];
  const r = searchEvents(files, nameTest("k", false));
  const listed = firstMatches(files, r, 4).map((h) => `${files.indexOf(h.file)}:${h.i}`);
  assert.equal(listed, ["1:0", "0:2", "0:3", "0:0"], "starts 3 (1 + offset 2), 5, 7, 50");
  // Stepping from nothing visits the same order; the rank of the k-th listed is k.
  let hit = null;
  for (let k = 1; k <= 4; k++) {
    const s = stepMatch(files, r, hit, 1)!;
    assert.is(`${files.indexOf(s.hit.file)}:${s.hit.i}`, listed[k - 1]);
    assert.is(s.rank, k);
    hit = s.hit;
  }
  assert.is(firstMatches(files, r, 100).length, 6);
  assert.equal(firstMatches(files, r, 0), []);
});

test.run();
