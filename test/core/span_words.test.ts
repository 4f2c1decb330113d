/** src/core/span_words.ts: a span in words, as the viewer's aligned files and merge's clock skew say it. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spanWords } from "../../src/core/span_words.js";

test("ms, s, then up to three units (zeros left out), years from a year on", () => {
  const min = 60e9;
  const cases: Array<[number, string]> = [
    [412e6, "412 ms"], [78.72e9, "78.7 s"], [4712e9, "1 h 18 min 32 s"], [7200e9, "2 h"],
    [(3 * 86400 + 5 * 60 + 3) * 1e9, "3 d 5 min"], [59.97 * min, "59 min 58 s"], [90 * min, "1 h 30 min"],
    [364.99 * 1440 * min, "1.00 years"], [3 * 365 * 1440 * min, "3.00 years"], [99509579801.664e6, "3.15 years"],
  ];
  for (const [ns, want] of cases) assert.is(spanWords(ns), want, String(ns));
});

test.run();
