/**
 * The URL hash (web/hash.ts) in Node: the round trip, malformed fields dropped, and which open file each of the
 * hash's file numbers names — by name and identity (`fid=`), else name and copy number, whatever the order the files
 * were opened in (the same file opened twice: `name (2)` is the second copy; two ranks' dumps of one name told apart
 * by identity), the first format's positional numbers still read as before.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fileId, formatHash, hashFiles, parseHash, type HashState } from "../../web/hash.js";

test("URL hash round trip; malformed fields dropped", () => {
  const st = {
    files: ["run #1.rawtrace", "rank&1.rawtrace", "run #1.rawtrace"], ids: ["0123abcd", "ffffffff", "0123abcd"],
    view: [0, 5_000_000] as [number, number],
    range: [1000, 2000] as [number, number], rows: [{ file: 0, index: 3 }, { file: 2, index: 4 }], ev: { file: 1, index: 1234 },
    measure: [10, 20] as [number, number], marks: [5, 6], q: "gemm|conv", regex: true, steps: "train_step",
  };
  assert.equal(parseHash(formatHash(st)), st);
  assert.match(formatHash(st), /^#file=run\+%231\.rawtrace&file=rank%261\.rawtrace&file=run\+%231\.rawtrace&fid=0123abcd\.ffffffff\.0123abcd&view=/);
  // Identities that do not pair with the names are dropped, the names kept.
  assert.equal(parseHash("#file=a&file=b&fid=0123abcd"), { files: ["a", "b"] });
  assert.equal(parseHash("#file=a&fid=0123abcz"), { files: ["a"] });
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

const info = (bytes: number, hostname: string, pid: number, start: bigint) => ({ bytes, hostname, pid, collectorStartNs: start });

test("a file's identity: 8 hex digits of its size and writer, the same for copies, different for two ranks", () => {
  const a = fileId(info(54600, "node-0", 4242, 1764000000000000000n));
  assert.match(a, /^[0-9a-f]{8}$/);
  assert.is(fileId(info(54600, "node-0", 4242, 1764000000000000000n)), a, "a copy");
  for (const other of [info(54601, "node-0", 4242, 1764000000000000000n), info(54600, "node-1", 4242, 1764000000000000000n),
    info(54600, "node-0", 4243, 1764000000000000000n), info(54600, "node-0", 4242, 1764000000000000001n)]) {
    assert.is.not(fileId(other), a, JSON.stringify(other, (_k, v) => (typeof v === "bigint" ? String(v) : v)));
  }
});

test("two different files of one name are told apart by identity, whatever order they were opened in", () => {
  const files = (...ks: Array<[string, string]>) => ks.map(([name, id], k) => ({ name, id, k }));
  const atId = (st: HashState, fs: Array<{ name: string; id: string; k: number }>) => hashFiles(st, fs, (f) => f.id).map((f) => f?.k);
  // Written with rank 1's trace, then rank 0's, then a copy of rank 1's.
  const st = parseHash("#file=t&file=t&file=t&fid=11111111.00000000.11111111&ev=1:5");
  assert.equal(atId(st, files(["t", "00000000"], ["t", "11111111"], ["t", "11111111"])), [1, 0, 2], "rank 0's opened first");
  assert.equal(atId(st, files(["t", "11111111"], ["t", "00000000"])), [0, 1, undefined], "the copy not open");
  assert.equal(atId(st, files(["t", "22222222"], ["t", "00000000"])), [0, 1, undefined],
    "rank 0's by identity; rank 1's changed (it grew): the first of the name not taken");
  // Without identities (a hash written before them, or hashFiles without idOf): name and copy, as before.
  assert.equal(atId(parseHash("#file=t&file=t&ev=1:5"), files(["t", "00000000"], ["t", "11111111"])), [0, 1]);
  assert.equal(hashFiles(st, files(["t", "00000000"], ["t", "11111111"])).map((f) => f?.k), [0, 1, undefined]);
});

test.run();
