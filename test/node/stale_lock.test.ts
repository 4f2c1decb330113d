/**
 * Locks left by a killed run (docs/cluster.md, "Retries"): a lock not refreshed for LOCK_STALE_MS is taken over
 * whatever host it names (a retried shard on a new pod cannot ask the old pod whether its pid runs), and the
 * temporary it names is removed; a fresh lock of another host is still refused (never two writers of one output);
 * a process never removes a lock that is no longer its own; a batch killed with SIGKILL leaves at most one lock per
 * worker.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import {
  closeSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync, writeSync,
} from "node:fs";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { convertBatch } from "../../src/node/batch.js";
import { OutputFile } from "../../src/node/output.js";
import { LOCK_STALE_MS, lock, unlock } from "../../src/node/output_lock.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-lock-"));
const IN = join(tmp, "in");
mkdirSync(IN);
const input = join(IN, "rank0.rawtrace");
copyFileSync(join(ROOT, "samples/xpu_train_pti.rawtrace"), input);

/** Plants the lock of a run of another host on `out`, with the temporary it names, refreshed `ageMs` ago. */
function plant(out: string, ageMs: number): { lock: string; orphan: string } {
  const orphan = join(tmp, "out", `.${"rank0.json"}.0123456789abcdef.tmp`);
  mkdirSync(join(tmp, "out"), { recursive: true });
  writeFileSync(orphan, "");
  const lock = `${out}.lock`;
  writeFileSync(lock, `4242 pod-of-a-killed-shard .rank0.json.0123456789abcdef.tmp\n`);
  const t = new Date(Date.now() - ageMs);
  utimesSync(lock, t, t);
  return { lock, orphan };
}

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("a lock of another host not refreshed for LOCK_STALE_MS is taken over, its temporary removed", async () => {
  const out = join(tmp, "out", "rank0.json");
  const { lock, orphan } = plant(out, LOCK_STALE_MS + 60_000);
  const r = await convertBatch([input], { outDir: join(tmp, "out"), jobs: 1, force: true });
  assert.is(r.ok, 1, JSON.stringify(r.files[0].error));
  assert.ok(existsSync(out));
  assert.not.ok(existsSync(lock));
  assert.not.ok(existsSync(orphan), "the stale lock's temporary is removed");
  rmSync(join(tmp, "out"), { recursive: true });
});

test("a stale lock taken over also removes the XSpace merge's rank parts of its output, and nothing else (before: a killed merge's parts stayed for good)", async () => {
  const out = join(tmp, "out", "rank0.json");
  const { lock } = plant(out, LOCK_STALE_MS + 60_000);
  const dir = join(tmp, "out");
  const parts = [".rank0.json.00112233aabbccdd.part", ".rank0.json.ffeeddccbbaa9988.part"];
  const kept = [".other.json.00112233aabbccdd.part", ".rank0.json.0011.part", ".rank0.json.00112233aabbccdd.part.x", "rank0.json.00112233aabbccdd.part"];
  for (const f of [...parts, ...kept]) writeFileSync(join(dir, f), "x");
  const r = await convertBatch([input], { outDir: dir, jobs: 1, force: true });
  assert.is(r.ok, 1, JSON.stringify(r.files[0].error));
  assert.not.ok(existsSync(lock));
  assert.equal(readdirSync(dir).filter((f) => f.includes("part")).sort(), [...kept].sort(), "the parts of rank0.json removed, others kept");
  rmSync(dir, { recursive: true });
});

test("a stale lock another run removed first: the run that then gets the lock removes the parts and the temporary (before: nobody did)", () => {
  const out = join(tmp, "out", "rank0.json");
  const { lock: lockPath, orphan } = plant(out, LOCK_STALE_MS + 60_000);
  const part = join(tmp, "out", ".rank0.json.00112233aabbccdd.part");
  writeFileSync(part, "x");
  // Another run takes the stale lock away between this run's look at it and its own removal of it.
  const rename = fs.renameSync;
  let raced = 0;
  fs.renameSync = ((from: fs.PathLike, to: fs.PathLike) => {
    if (String(from) === lockPath && raced++ === 0) {
      fs.unlinkSync(from);
      throw Object.assign(new Error("ENOENT"), { code: "ENOENT" });
    }
    return rename(from, to);
  }) as typeof fs.renameSync;
  syncBuiltinESMExports();
  let held: string;
  try {
    held = lock(out, "rank0.json");
  } finally {
    fs.renameSync = rename;
    syncBuiltinESMExports();
  }
  assert.is(raced, 1, "the race happened");
  assert.is(held, lockPath);
  assert.not.ok(existsSync(part), "the killed holder's part");
  assert.not.ok(existsSync(orphan), "the killed holder's temporary");
  unlock(held);
  rmSync(join(tmp, "out"), { recursive: true });
});

test("a fresh lock of another host is refused, --force or not", async () => {
  const out = join(tmp, "out", "rank0.json");
  const { lock, orphan } = plant(out, 1_000);
  for (const force of [false, true]) {
    const r = await convertBatch([input], { outDir: join(tmp, "out"), jobs: 1, force });
    assert.is(r.files[0].error?.code, "EXISTS");
    assert.match(r.files[0].error!.message, /being written by rawtrace pid 4242 on pod-of-a-killed-shard/);
  }
  assert.ok(existsSync(lock));
  assert.ok(existsSync(orphan));
  rmSync(join(tmp, "out"), { recursive: true });
});

test("a lock taken over meanwhile is not removed by its former holder", () => {
  const out = join(tmp, "mine.json");
  const f = OutputFile.open(out);
  const line = readFileSync(`${out}.lock`, "utf8");
  assert.match(line, /^\d+ \S+ \.mine\.json\.[0-9a-f]{16}\.tmp\n$/, "the lock names its temporary");
  writeFileSync(`${out}.lock`, "4343 another-host\n"); // taken over as stale by another run
  f.abort();
  assert.is(readFileSync(`${out}.lock`, "utf8"), "4343 another-host\n");
  rmSync(`${out}.lock`);
});

test("a successor whose line only starts like this process's (pid 12 on node1 against 12 on node10) keeps its lock", () => {
  const out = join(tmp, "prefix.json");
  const f = OutputFile.open(out);
  const [pid, host] = readFileSync(`${out}.lock`, "utf8").split(" ");
  const successor = `${pid} ${host}0 .prefix.json.fedcba9876543210.tmp\n`;
  writeFileSync(`${out}.lock`, successor);
  f.abort();
  assert.is(readFileSync(`${out}.lock`, "utf8"), successor, "removed by a prefix match before");
  rmSync(`${out}.lock`);
});

test("a lock taken over meanwhile is not removed by its former holder's exit or signal cleanup either", () => {
  // A run stalled past LOCK_STALE_MS (stopped with Ctrl-Z): a retry took its lock over; then the stalled run exits, or
  // Ctrl-C ends it. Its cleanup unlinked the lock by path (before 2026-12-03), removing the retry's.
  for (const how of ["exit", "SIGINT"]) {
    const out = join(tmp, `stalled-${how}.json`);
    const script = `
      import { writeFileSync } from "node:fs";
      import { OutputFile } from ${JSON.stringify(join(ROOT, "src/node/output.ts"))};
      OutputFile.open(${JSON.stringify(out)});
      writeFileSync(${JSON.stringify(`${out}.lock`)}, "4343 another-host .x.tmp\\n");
      ${how === "exit" ? "process.exit(0);" : "process.kill(process.pid, 'SIGINT'); setTimeout(() => {}, 5000);"}
    `;
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8", timeout: 60000 });
    assert.ok(how === "exit" ? r.status === 0 : r.signal === "SIGINT" || r.status === 130, `${how}: ${r.status} ${r.signal} ${r.stderr}`);
    assert.ok(existsSync(`${out}.lock`), `${how}: the successor's lock is still there`);
    assert.is(readFileSync(`${out}.lock`, "utf8"), "4343 another-host .x.tmp\n");
    rmSync(`${out}.lock`);
    // Its own lock, not taken over, is still removed.
    const own = join(tmp, `own-${how}.json`);
    const mine = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e",
      `import { OutputFile } from ${JSON.stringify(join(ROOT, "src/node/output.ts"))}; OutputFile.open(${JSON.stringify(own)}); ${how === "exit" ? "process.exit(0);" : "process.kill(process.pid, 'SIGINT'); setTimeout(() => {}, 5000);"}`],
    { cwd: ROOT, encoding: "utf8", timeout: 60000 });
    assert.ok(mine.status === 0 || mine.signal === "SIGINT" || mine.status === 130, mine.stderr);
    assert.not.ok(existsSync(`${own}.lock`), `${how}: its own lock removed`);
    assert.equal(readdirSync(tmp).filter((n) => n.startsWith(`.own-${how}.json.`)), [], "and its temporary");
  }
});

test("merge claims its output only once a slow standard-input rank has arrived (the lock went unrefreshed meanwhile)", async () => {
  const out = join(tmp, "slow-stdin.json");
  // Standard input is a FIFO this test writes (a pipe's capacity is 64 KiB): once more than that went in, merge is
  // provably reading its standard input, past the point where it claimed its output before (before: looked 800 ms
  // after the start, which on a slow machine could be before merge got anywhere).
  const fifo = join(tmp, "slow-stdin.fifo");
  assert.is(spawnSync("mkfifo", [fifo]).status, 0);
  const p = spawn("sh", ["-c", 'exec "$0" "$@" < "$STDIN_FIFO"', process.execPath, CLI, "merge", "-", input, "-o", out], {
    stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, STDIN_FIFO: fifo },
  });
  let err = "";
  p.stderr!.on("data", (d) => (err += d));
  const exited = new Promise((r) => p.once("exit", r));
  const rank = readFileSync(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"));
  const PIPE = 64 << 10;
  assert.ok(rank.length > 4 * PIPE);
  let fd = -1;
  let sent = 0;
  /** Writes `rank` up to `until` bytes; the FIFO's write end does not block, a full pipe is waited out. */
  const send = async (until: number) => {
    for (let i = 0; sent < until; i++) {
      try {
        if (fd < 0) fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
        sent += writeSync(fd, rank, sent, until - sent);
        continue;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== "ENXIO" && code !== "EAGAIN") throw e; // no reader yet, or the pipe is full
      }
      // The deadline only turns a hang into a failure.
      assert.ok(p.exitCode === null && i < 24000, `merge reads its standard input: ${err}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  try {
    await send(3 * PIPE);
    const locked = existsSync(`${out}.lock`);
    assert.not.ok(locked, "no lock while the stdin rank is still being read");
    await send(rank.length);
  } finally {
    if (fd >= 0) closeSync(fd);
  }
  const code = await exited;
  assert.is(code, 0, err);
  assert.ok(existsSync(out));
  assert.not.ok(existsSync(`${out}.lock`));
});

test("a batch killed with SIGKILL leaves at most one lock per worker", async () => {
  const dir = join(tmp, "many");
  mkdirSync(dir);
  // r10 and r11 (in the order the lanes take the inputs) are FIFOs this test holds open without writing: once both
  // workers read them, r0–r9 are done and r12–r119 still to go, and nothing moves on until the kill, on a machine of
  // any speed (before: killed 5 ms after a first output appeared, which a fast machine could outrun to the end).
  const fifos = [join(dir, "r10.rawtrace"), join(dir, "r11.rawtrace")];
  for (let i = 0; i < 120; i++) {
    const f = join(dir, `r${i}.rawtrace`);
    if (fifos.includes(f)) assert.is(spawnSync("mkfifo", [f]).status, 0);
    else copyFileSync(input, f);
  }
  const outDir = join(tmp, "killed");
  const p = spawn(process.execPath, [CLI, "batch", dir, "--out-dir", outDir, "--jobs", "2"], { stdio: "ignore" });
  const exited = new Promise((r) => p.once("exit", r));
  // A FIFO opens for writing (without waiting) only once a reader holds it: both workers are reading theirs. The
  // deadline only turns a hang into a failure.
  const fds: number[] = [];
  try {
    for (const f of fifos) {
      for (let i = 0; ; i++) {
        try {
          fds.push(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK));
          break;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "ENXIO") throw e;
        }
        assert.ok(p.exitCode === null && p.signalCode === null && i < 24000, `the batch reads ${f}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    p.kill("SIGKILL");
    await exited;
  } finally {
    p.kill("SIGKILL");
    fds.forEach((fd) => closeSync(fd));
  }
  const left = readdirSync(outDir);
  assert.ok(left.some((f) => f.endsWith(".json")), "killed once some outputs were published");
  assert.ok(left.filter((f) => f.endsWith(".json")).length < 120, "killed before the end");
  assert.ok(left.filter((f) => f.endsWith(".lock")).length <= 2, left.filter((f) => f.endsWith(".lock")).join(" "));
});

test.run();
