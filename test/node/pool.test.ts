// SPDX-License-Identifier: MIT
/**
 * docs/node-api.md, WorkerPool: a worker that dies fails only its own task (INTERNAL, naming the file) and a new
 * worker replaces it for the next task; `await using` closes the pool at the end of the block.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as tick } from "node:timers/promises";
import type { Worker } from "node:worker_threads";
import { WorkerPool } from "../../src/node/pool.js";
import { isRawtraceError } from "../../src/core/codes.js";
import { sampleDump } from "../helpers/sample_dump.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-pool-"));
const input = join(tmp, "in.rawtrace");
writeFileSync(input, sampleDump());

/** The worker thread of slot `i` (private state, read to kill it the way a crash would). */
const workerOf = (pool: WorkerPool, i: number) => (pool as unknown as { slots: { worker: Worker | null }[] }).slots[i].worker;

test("a worker that dies fails only its task; the next task gets a new worker", async () => {
  const pool = new WorkerPool({ jobs: 1 });
  try {
    const first = pool.convert({ input, output: join(tmp, "a.json") });
    // The worker exists as soon as the task is on it, long before it has loaded the core: killing it now is a
    // death in the middle of the task, every time.
    while (!workerOf(pool, 0)) await tick();
    const dying = workerOf(pool, 0)!;
    await dying.terminate();
    const e: unknown = await first.then(() => null, (x) => x);
    assert.ok(isRawtraceError(e), String(e));
    if (isRawtraceError(e)) {
      assert.is(e.code, "INTERNAL");
      assert.match(e.message, /in\.rawtrace/);
      assert.match(e.message, /worker stopped/);
    }
    const r = await pool.convert({ input, output: join(tmp, "b.json") });
    assert.ok(r.events > 0);
    assert.ok(workerOf(pool, 0) !== dying, "a new worker");
    assert.ok(JSON.parse(readFileSync(join(tmp, "b.json"), "utf8")).traceEvents.length > 0);
  } finally {
    await pool.close();
  }
});

test("await using closes the pool when the block ends", async () => {
  let kept: WorkerPool;
  {
    await using pool = new WorkerPool({ jobs: 1 });
    kept = pool;
    assert.ok((await pool.info(input)).chunks > 0);
  }
  const e: unknown = await kept.info(input).then(() => null, (x) => x);
  assert.ok(isRawtraceError(e) && e.code === "API_MISUSE", String(e));
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
