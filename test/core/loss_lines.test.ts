/**
 * src/core/loss_lines.ts: the words about a file's damage and warnings, shared by the CLI (standard error) and
 * the viewer (the page's message for a file), so both say the same.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { LossReport, Warning } from "../../src/core/codes.js";
import { damageLines, lossLines, warningLines } from "../../src/core/loss_lines.js";

const w = (code: string, count: number, offset: number, detail = 0, message = `${code} happened`): Warning =>
  ({ code, count, offset, detail, message }) as Warning;

const LOSS: LossReport = {
  bytes: 3000, activityChunks: 2, activityBytes: 1234567, rangesTotal: 3,
  ranges: [{ from: 100, to: 1100, seq: 7, code: "BAD_PAYLOAD_CRC" }, { from: 5000, to: 6000, code: "TRUNCATED" }],
} as LossReport;

test("lossLines: bytes in how many ranges, activity buffers, dropped records, each range, the ones not listed", () => {
  const warnings = [w("BAD_PAYLOAD_CRC", 2, 100), w("DROPPED_RECORDS", 1, 0, 4096), w("MISSING_NAME", 5, 40)];
  assert.equal(lossLines("run.rawtrace", warnings, LOSS, 100000), [
    "rawtrace: run.rawtrace: DATA LOST: skipped 3,000 damaged bytes in 3 ranges (3.0% of the file); 2 activity buffers of events (1,234,567 bytes of records) lost; BAD_PAYLOAD_CRC ×2; the collector dropped 4,096 records",
    "  skipped bytes 100–1100 (chunk seq 7: BAD_PAYLOAD_CRC)",
    "  skipped bytes 5000–6000 (TRUNCATED)",
    "  … and 1 more ranges (only the first 2 are listed)",
  ]);
  assert.equal(lossLines("run.rawtrace", [w("MISSING_NAME", 1, 0)], undefined, 10), [], "no loss: nothing");
  assert.is(lossLines("a", [w("TRUNCATED", 1, 9)], { ...LOSS, rangesTotal: 1, ranges: [LOSS.ranges[1]] }, 0, "")[0],
    "a: DATA LOST: skipped 3,000 damaged bytes in 1 range; 2 activity buffers of events (1,234,567 bytes of records) lost; TRUNCATED ×1");
});

test("warningLines and damageLines: each warning with its offset and meaning, under the loss or a line naming the file", () => {
  const warnings = [w("TRUNCATED", 1, 155912, 0, "file ends inside a chunk"), w("MISSING_NAME", 3, 40, 0, "a name is missing")];
  assert.equal(warningLines(warnings), [
    "  warning TRUNCATED ×1 (offset 155912): file ends inside a chunk",
    "  warning MISSING_NAME ×3 (offset 40): a name is missing",
  ]);
  assert.equal(damageLines("cut.rawtrace", warnings, { ...LOSS, activityChunks: 0, rangesTotal: 1, ranges: [LOSS.ranges[1]] }, 10000, ""), [
    "cut.rawtrace: DATA LOST: skipped 3,000 damaged bytes in 1 range (30.0% of the file); TRUNCATED ×1",
    "  skipped bytes 5000–6000 (TRUNCATED)",
    ...warningLines(warnings),
  ]);
  assert.equal(damageLines("x.rawtrace", [warnings[1]], undefined, 10, ""), ["x.rawtrace: warnings", warningLines(warnings)[1]]);
  assert.equal(damageLines("x.rawtrace", [], undefined, 10), []);
});

test.run();
