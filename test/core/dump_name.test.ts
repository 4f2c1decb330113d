import { test } from "uvu";
import * as assert from "uvu/assert";
import { dumpFileName } from "../../src/core/dump_name.js";
import { dumpName } from "../../src/node/inputs.js";

test("a compressed dump is named as the dump it holds, in the CLI and the viewer alike", () => {
  assert.is(dumpFileName("rank0.rawtrace.gz"), "rank0.rawtrace");
  assert.is(dumpFileName("rank0.RAWTRACE.GZ"), "rank0.rawtrace");
  assert.is(dumpFileName("rank0.rawtrace"), "rank0.rawtrace");
  assert.is(dumpFileName("trace.json.gz"), "trace.json.gz");
  assert.is(dumpFileName("a.rawtrace.gz.bak"), "a.rawtrace.gz.bak");
  // The CLI's name is the same rule on the path's base name.
  assert.is(dumpName("/runs/job 7/rank0.rawtrace.gz"), "rank0.rawtrace");
});

test.run();
