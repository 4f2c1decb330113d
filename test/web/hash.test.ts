/**
 * The URL hash (web/hash.ts) in Node: the round trip, malformed fields dropped, and which open file each of the
 * hash's file numbers names — by name and copy number whatever the order the files were opened in (the same file
 * opened twice: `name (2)` is the second copy), the first format's positional numbers still read as before.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatHash, hashFiles, parseHash, type HashState } from "../../web/hash.js";

test("URL hash round trip; malformed fields dropped", () => {
  const st = {
    files: ["run #1.rawtrace", "rank&1.rawtrace", "run #1.rawtrace"], view: [0, 5_000_000] as [number, number],
    range: [1000, 2000] as [number, number], rows: [{ file: 0, index: 3 }, { file: 2, index: 4 }], ev: { file: 1, index: 1234 },
    measure: [10, 20] as [number, number], marks: [5, 6], q: "gemm|conv", regex: true, steps: "train_step",
  };
  assert.equal(parseHash(formatHash(st)), st);
  assert.match(formatHash(st), /^#file=run\+%231\.rawtrace&file=rank%261\.rawtrace&file=run\+%231\.rawtrace&view=/);
  assert.equal(parseHash("#view=1,x&range=1&ev=zz&marks=1,2&file=a&file="), { marks: [1, 2], files: ["a"] });
  assert.is(formatHash({}), "");
});

const open = (...names: string[]) => names.map((name, k) => ({ name, k }));
const at = (st: HashState, files: Array<{ name: string; k: number }>) => hashFiles(st, files).map((f) => f?.k);

test("a file number names the open file of that name and copy, in whatever order the files were opened", () => {
  // Written with a, b, a open (a's second copy is file 2).
  const st = parseHash("#file=a&file=b&file=a&rows=2:1.1:0&ev=2:7");
  assert.equal(at(st, open("a", "b", "a")), [0, 1, 2], "the same order");
  assert.equal(at(st, open("a", "a", "b")), [0, 2, 1], "b last: a's second copy is the second file opened");
  assert.equal(at(st, open("b", "a", "a")), [1, 0, 2]);
  assert.equal(at(st, open("b", "a")), [1, 0, undefined], "a's second copy is not open");
  assert.equal(at(st, open("c")), [undefined, undefined, undefined]);
});

test("the first format (one file=, files numbered in the order opened) is read as before", () => {
  assert.equal(at(parseHash("#file=a&rows=0:1.1:2&ev=1:5"), open("a", "b")), [0, 1], "references past the names: by place");
  assert.equal(at(parseHash("#file=a&ev=0:5"), open("a", "b")), [0], "one file: the same either way");
  assert.equal(at(parseHash("#ev=0:5"), open("a")), [0], "no file named: by place");
});

test.run();
