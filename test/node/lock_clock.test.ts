/**
 * Lock ages on the file system's clock (src/node/output_lock.ts, docs/cluster.md "Retries after a kill"): hosts that
 * share an output folder may disagree on the time by minutes, so a lock's age is never this host's clock against
 * the writer's. A run that finds a lock measures "now" with a probe file beside it; the holder stamps its refreshes
 * with the file system's time; an XSpace merge's join, which blocks the main thread's refresh timer, refreshes the
 * lock as it copies. Clock skew is simulated by moving this process's Date.now.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fs, { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { OutputFile } from "../../src/node/output.js";
import { LOCK_REFRESH_MS, LOCK_STALE_MS, refreshHeldLocks } from "../../src/node/output_lock.js";
import { merge } from "../../src/node/merge.js";
import type { RawtraceError } from "../../src/core/codes.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-lockclock-"));
const realNow = Date.now;
const TEN_MINUTES = 600_000;

/** Runs `fn` with this process's clock moved by `byMs`. */
function skewed<T>(byMs: number, fn: () => T): T {
  Date.now = () => realNow() + byMs;
  try {
    return fn();
  } finally {
    Date.now = realNow;
  }
}

/** Plants the lock of a run of another host on `out` with the temporary it names, last refreshed `ageMs` ago (real time). */
function plant(out: string, ageMs: number): { lock: string; orphan: string } {
  const name = out.split("/").pop()!;
  const orphan = join(tmp, `.${name}.0123456789abcdef.tmp`);
  writeFileSync(orphan, "");
  const lock = `${out}.lock`;
  writeFileSync(lock, `4242 pod-elsewhere .${name}.0123456789abcdef.tmp\n`);
  const t = new Date(realNow() - ageMs);
  utimesSync(lock, t, t);
  return { lock, orphan };
}

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("a fresh lock of another host stays refused when this host's clock runs 10 minutes ahead", () => {
  const out = join(tmp, "ahead.json");
  const { lock, orphan } = plant(out, 1_000);
  let err: RawtraceError | undefined;
  try {
    skewed(TEN_MINUTES, () => OutputFile.open(out)).abort();
  } catch (e) {
    err = e as RawtraceError;
  }
  assert.is(err?.code, "EXISTS", "taken over as stale before: its age was read against this host's clock");
  assert.ok(existsSync(lock));
  assert.ok(existsSync(orphan));
  assert.equal(readdirSync(tmp).filter((f) => f.endsWith(".clock")), [], "the probe is removed");
});

test("a lock not refreshed for 3 minutes is taken over when this host's clock runs 10 minutes behind", () => {
  const out = join(tmp, "behind.json");
  const { orphan } = plant(out, LOCK_STALE_MS + 60_000);
  const f = skewed(-TEN_MINUTES, () => OutputFile.open(out)); // refused with EXISTS before
  assert.not.ok(existsSync(orphan), "the stale lock's temporary is removed");
  f.abort();
  assert.not.ok(existsSync(`${out}.lock`));
});

test("the holder stamps its refreshes with the file system's time, whatever its own clock says", () => {
  const out = join(tmp, "holder.json");
  const f = skewed(-TEN_MINUTES, () => OutputFile.open(out));
  const old = new Date(realNow() - 5 * 60_000);
  utimesSync(`${out}.lock`, old, old);
  skewed(-TEN_MINUTES, () => refreshHeldLocks(true));
  const age = realNow() - statSync(`${out}.lock`).mtimeMs;
  f.abort();
  assert.ok(Math.abs(age) < 30_000, `refreshed to ${age} ms ago (10 minutes in the past before: this host's clock)`);
});

test("an XSpace merge's join refreshes its output's lock while it copies (the main thread's timer cannot)", async () => {
  const dir = join(tmp, "ranks");
  mkdirSync(dir);
  const inputs = [0, 1].map((i) => {
    const p = join(dir, `rank${i}.rawtrace`);
    copyFileSync(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"), p);
    return p;
  });
  const touched: string[] = [];
  const real = fs.utimesSync;
  fs.utimesSync = (p: fs.PathLike, a: fs.TimeLike, m: fs.TimeLike) => {
    touched.push(String(p));
    return real(p, a, m);
  };
  syncBuiltinESMExports();
  let calls = 0;
  // A clock that moves a refresh interval per reading: every chance to refresh is due.
  Date.now = () => realNow() + LOCK_REFRESH_MS * ++calls;
  let joined = false;
  try {
    const r = await merge(inputs, join(tmp, "xprof"), { jobs: 1, format: "xspace" });
    joined = r.outputs.length > 0;
  } finally {
    Date.now = realNow;
    fs.utimesSync = real;
    syncBuiltinESMExports();
  }
  assert.ok(joined);
  assert.ok(touched.some((p) => p.endsWith(".xplane.pb.lock")), `no refresh of the host file's lock during the join: ${touched.join(", ")}`);
});

test.run();
