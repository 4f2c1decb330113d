// SPDX-License-Identifier: MIT
/** isRawtraceError (src/core/codes.ts): which values it accepts, and that errors coming back from a worker pass it. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RawtraceError, isRawtraceError } from "../../src/core/codes.js";
import { WorkerPool } from "../../src/node/pool.js";

test("a RawtraceError, or an error of the same shape from another copy of the module, passes; other errors do not", () => {
  const e: unknown = new RawtraceError("EXISTS", "out.json: already exists", "out.json", 0);
  assert.ok(isRawtraceError(e));
  if (isRawtraceError(e)) {
    assert.is(e.code, "EXISTS");
    assert.is(e.file, "out.json");
  }
  // Another install of rawtrace: a different class, the same contract (name = code, an upper-case code).
  class Foreign extends Error {
    constructor(readonly code: string, message: string) {
      super(message);
      this.name = code;
    }
  }
  assert.ok(isRawtraceError(new Foreign("BAD_MAGIC", "x")));
  // Node's system errors carry a code too, but their name is "Error".
  const enoent = Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" });
  assert.not.ok(isRawtraceError(enoent));
  assert.not.ok(isRawtraceError(new TypeError("x")));
  assert.not.ok(isRawtraceError(new Foreign("lower", "x")));
  // Only name and message (what structured cloning keeps): no code to expose, so not narrowed.
  assert.not.ok(isRawtraceError({ name: "BAD_MAGIC", message: "x" }));
  assert.not.ok(isRawtraceError(null));
  assert.not.ok(isRawtraceError("BAD_MAGIC"));
});

test("an error thrown in a pool worker comes back as a RawtraceError with its code and file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-guard-"));
  const bad = join(dir, "bad.rawtrace");
  writeFileSync(bad, "NOT A RAWTRACE FILE");
  const pool = new WorkerPool({ jobs: 1 });
  try {
    const e: unknown = await pool.info(bad).then(() => null, (x) => x);
    assert.ok(isRawtraceError(e), String(e));
    if (isRawtraceError(e)) {
      assert.is(e.code, "BAD_MAGIC");
      assert.match(e.message, /bad\.rawtrace/);
    }
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
