/** src/core/merge.ts longSpan: a clock skew of a minute or more in the unit a person reads it in, chosen after rounding. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { longSpan } from "../../src/core/merge.js";

test("minutes, hours, days, years; never 60.0 min or 24.0 h", () => {
  const min = 60e9;
  const cases: Array<[number, string]> = [
    [1 * min, "1.0 min"], [59.9 * min, "59.9 min"], [59.97 * min, "1.0 h"], [90 * min, "1.5 h"],
    [23.97 * 60 * min, "1.0 days"], [3 * 1440 * min, "3.0 days"], [364.99 * 1440 * min, "1.00 years"],
    [3 * 365 * 1440 * min, "3.00 years"],
  ];
  for (const [ns, want] of cases) assert.is(longSpan(ns), want, String(ns / min));
});

test.run();
