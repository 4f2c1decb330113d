/**
 * The XPU collector (collectors/xpu) end to end, without an Intel GPU or PTI.
 *
 * `make -C collectors/xpu test-bins` builds the collector, the PTI test double (test/collectors/fake_pti.c, v1 records
 * as 0.17.0 or `_v2` records as 1.2.0 by FAKE_PTI_VERSION), a Level Zero loader double and the test program
 * (test/collectors/xpu_app.c), which runs with LD_PRELOAD=librawtrace_xpu.so and makes the fake emit records. The fake
 * appends every buffer it hands over to a side file; the dump's ACTIVITY chunks must hold exactly those bytes in
 * order, with the tables a decoder needs (KIND_SIZES measured through the fake's walker, API names, a STRINGS entry
 * for every name pointer before the ACTIVITY chunk using it, clocks). Read here straight from the container, every
 * chunk's CRCs checked.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exitLeft, readDumpChunks, type DumpChunk } from "../helpers/dump_chunks.js";
import { startFifoReader } from "../helpers/fifo_reader.js";
import { ChunkType, ClockWhich, DropReason, Vendor } from "../../src/format/container.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/xpu");
const LIB = join(BUILD, "librawtrace_xpu.so");
const PTI = join(BUILD, "fake/libpti_view.so");
const APP = join(BUILD, "xpu_app");
const VERSIONS = ["0.17.0", "1.2.0"] as const;
type Ver = (typeof VERSIONS)[number];
const STEPS = 300;

/** Record sizes per kind each fake version steps (the real libraries' strides, test/collectors/pti_abi.test.ts). */
const SIZES: Record<Ver, Record<number, number>> = {
  "0.17.0": { 1: 168, 3: 48, 5: 56, 6: 48, 7: 24, 8: 136, 9: 136, 10: 168, 11: 72, 12: 56 },
  "1.2.0": { 1: 184, 3: 48, 5: 56, 6: 48, 7: 24, 8: 152, 9: 152, 10: 192, 11: 72, 12: 64 },
};
/** Byte offsets of string pointers per kind (pti_abi.h), and the text the fake puts there. */
const POINTERS: Record<number, [number, RegExp][]> = {
  1: [[24, /^_ZN4fake6kernelILi[0-6]EEvv$/], [32, /^\/src\/fake_[0-2]\.cpp$/]],
  8: [[32, /^zeCommandListAppendMemoryCopy\(H2D\)$/]],
  9: [[24, /^zeCommandListAppendMemoryFill$/]],
};

let dir = "";

/** `limitKiB`: the process's file size limit (ulimit -f), for write errors. */
function run(ver: Ver, name: string, mode: string, extra: Record<string, string> = {}, limitKiB?: number) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(RAWTRACE_|FAKE_|RT_APP_|ZE_)/.test(k)) delete env[k];
  Object.assign(env, {
    LD_PRELOAD: LIB, LD_LIBRARY_PATH: join(BUILD, "fake"), RAWTRACE_PTI_LIB: PTI, FAKE_PTI_VERSION: ver,
    FAKE_PTI_DUMP: join(dir, `${name}.delivered`), RAWTRACE_OUTPUT: join(dir, `${name}.rawtrace`),
    RAWTRACE_BUFFER_SIZE: "64k", RT_APP_STEPS: String(STEPS), ...extra,
  });
  const r = limitKiB === undefined
    ? spawnSync(APP, [mode], { env, encoding: "utf8", timeout: 60_000 })
    // The collector preloaded into the program only: bash would load it too and record itself.
    : spawnSync("bash", ["-c", `ulimit -f ${limitKiB}; LD_PRELOAD="$2" exec "$0" "$1"`, APP, mode, LIB],
      { env: { ...env, LD_PRELOAD: undefined }, encoding: "utf8", timeout: 60_000 });
  const lines = (r.stdout ?? "").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  return { ...r, lines, file: join(dir, `${name}.rawtrace`), delivered: join(dir, `${name}.delivered`) };
}

/** Checks the tables and that the ACTIVITY chunks are the delivered bytes; returns the chunks. */
function checkDump(ver: Ver, file: string, delivered: string, complete: boolean, tiles = 0): DumpChunk[] {
  const chunks = readDumpChunks(file);
  const types = chunks.map((c) => c.type);
  assert.is(types[0], ChunkType.HEADER);
  const h = chunks[0].p;
  assert.is(h.readUInt32LE(0), Vendor.INTEL_PTI);
  const [maj, min, pat] = ver.split(".").map(Number);
  assert.is(h.readUInt32LE(8), 10000 * maj + 100 * min + pat);
  assert.is(types[1], ChunkType.CLOCK);
  assert.is(chunks[1].p.readUInt32LE(0), ClockWhich.START);
  // KIND_SIZES measured through the library's own walker, before any ACTIVITY
  const ks = chunks.find((c) => c.type === ChunkType.KIND_SIZES)!;
  assert.ok(types.indexOf(ChunkType.KIND_SIZES) < types.indexOf(ChunkType.ACTIVITY));
  const sizes: Record<number, number> = {};
  for (let i = 0, n = ks.p.readUInt32LE(0); i < n; i++) sizes[ks.p.readUInt32LE(4 + 8 * i)] = ks.p.readUInt32LE(8 + 8 * i);
  assert.equal(sizes, SIZES[ver]);
  // API names: (group, id) → name for every id the library names
  const an = chunks.find((c) => c.type === ChunkType.API_NAMES)!.p;
  const names: string[] = [];
  for (let o = 4, i = 0, n = an.readUInt32LE(0); i < n; i++) {
    const g = an.readUInt32LE(o), id = an.readUInt32LE(o + 4), len = an.readUInt32LE(o + 8);
    names.push(`${g}/${id}/${an.toString("utf8", o + 12, o + 12 + len)}`);
    o += 12 + len;
  }
  assert.equal(names, ["1/41/zeCommandListAppendMemoryCopy", "1/55/zeCommandListAppendLaunchKernel",
    "3/17/urEnqueueKernelLaunch", "3/33/urEnqueueUSMMemcpy"]);
  // DEVICES from Level Zero (the fake loader: one driver, two devices), before any ACTIVITY
  const dv = chunks.find((c) => c.type === ChunkType.DEVICES)!.p;
  assert.ok(types.indexOf(ChunkType.DEVICES) < types.indexOf(ChunkType.ACTIVITY));
  assert.is(dv.readUInt32LE(0), 2);
  let o = 4;
  for (let k = 0; k < 2; k++) {
    assert.is(dv.readUInt32LE(o), k, "id");
    assert.is(dv.readUInt32LE(o + 4), 32, "Xe cores = slices x subslices");
    assert.is(dv.readUInt32LE(o + 24), (1600 + k) * 1000, "core clock kHz");
    assert.is(dv.readUInt32LE(o + 40), 64, "threads per Xe core");
    assert.is(dv.readUInt32LE(o + 52), 16, "SIMD width");
    assert.equal([...dv.subarray(o + 72, o + 88)], Array.from({ length: 16 }, (_, i) => k * 16 + i), "uuid");
    const len = dv.readUInt32LE(o + 88);
    assert.is(dv.toString("utf8", o + 92, o + 92 + len), `Fake Intel GPU ${k}`);
    o += 92 + len;
  }
  // The handle table: each device's Level Zero handle and UUID, then its sub-devices (tiles, COMPOSITE) with their
  // own handles and UUIDs (the double: 0x2000 + 16k + t, uuid byte 15 = 0x80 + t), root id and index.
  const handles: string[] = [];
  const nh = dv.readUInt32LE(o);
  o += 4;
  for (let i = 0; i < nh; i++, o += 32) {
    const tile = dv.readUInt32LE(o + 28);
    handles.push(`${dv.readBigUInt64LE(o).toString(16)} ${dv[o + 8]}..${dv[o + 23]} ${dv.readUInt32LE(o + 24)} ${tile === 0xffffffff ? "-" : tile}`);
  }
  assert.equal(handles, [0, 1].flatMap((k) => [`${(0x1000 + k).toString(16)} ${16 * k}..${16 * k + 15} ${k} -`,
    ...Array.from({ length: tiles }, (_, t) => `${(0x2000 + 16 * k + t).toString(16)} ${16 * k}..${0x80 + t} ${k} ${t}`)]));
  assert.is(o, dv.length, "nothing after the handle table");
  // ACTIVITY = the delivered buffers, byte for byte, in order
  const activity = Buffer.concat(chunks.filter((c) => c.type === ChunkType.ACTIVITY).map((c) => c.p));
  assert.ok(activity.length > 0);
  assert.ok(activity.equals(readFileSync(delivered)), "ACTIVITY chunks == the buffers PTI handed over");
  // every string pointer resolved by a STRINGS entry written before its ACTIVITY chunk, each pointer once
  const strings = new Map<bigint, string>();
  let records = 0;
  for (const c of chunks) {
    if (c.type === ChunkType.STRINGS) {
      for (let o = 4, i = 0, n = c.p.readUInt32LE(0); i < n; i++) {
        const ptr = c.p.readBigUInt64LE(o), len = c.p.readUInt32LE(o + 8);
        assert.not.ok(strings.has(ptr), `pointer ${ptr} written twice`);
        strings.set(ptr, c.p.toString("utf8", o + 12, o + 12 + len));
        o += 12 + len;
      }
    }
    if (c.type !== ChunkType.ACTIVITY) continue;
    for (let o = 0; o < c.p.length; records++) {
      const kind = c.p.readUInt32LE(o);
      const size = SIZES[ver][kind];
      assert.ok(size, `kind ${kind} at ${o}`);
      const ptrs = [...(POINTERS[kind] ?? [])];
      if (kind === 12) ptrs.push([size - 8, /^oneccl_allreduce_[01]$/]);
      for (const [off, re] of ptrs) {
        const ptr = c.p.readBigUInt64LE(o + off);
        if (ptr === 0n) continue;
        assert.ok(strings.has(ptr), `kind ${kind} pointer at +${off} has no STRINGS entry before its buffer`);
        assert.match(strings.get(ptr)!, re);
      }
      o += size;
    }
  }
  assert.ok(records >= 4 * STEPS, `${records} records`);
  if (complete) {
    assert.is(types[types.length - 1], ChunkType.END);
    const endClock = chunks.filter((c) => c.type === ChunkType.CLOCK).pop()!;
    assert.is(endClock.p.readUInt32LE(0), ClockWhich.END);
  }
  return chunks;
}

test.before(() => {
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/xpu"), "test-bins"], { stdio: "inherit" });
  dir = mkdtempSync(join(tmpdir(), "rawtrace-xpu-"));
});
test.after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

for (const ver of VERSIONS) {
  test(`PTI ${ver}: every delivered buffer verbatim, with kind sizes, API names, strings and clocks`, () => {
    const r = run(ver, `${ver}-run`, "run");
    assert.is(r.status, 0, r.stderr);
    assert.is(r.lines.find((l) => "collector" in l)?.collector, 1);
    assert.not.ok(r.lines.some((l) => "push" in l), "push/pop external ids succeed");
    const enabled = r.lines.filter((l) => "enabled" in l).map((l) => l.enabled).sort((a, b) => a - b);
    assert.equal(enabled, [1, 3, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert.ok(r.lines.filter((l) => "delivered" in l).length >= 3, "several buffers filled, plus the exit flush");
    const chunks = checkDump(ver, r.file, r.delivered, true);
    // external correlation: one record per round, ids 1000 + round, following that round's runtime call
    const act = Buffer.concat(chunks.filter((c) => c.type === ChunkType.ACTIVITY).map((c) => c.p));
    const ext: bigint[] = [];
    for (let o = 0; o < act.length;) {
      const kind = act.readUInt32LE(o);
      if (kind === 7) ext.push(act.readBigUInt64LE(o + 8));
      o += SIZES[ver][kind];
    }
    assert.equal(ext, Array.from({ length: STEPS }, (_, i) => BigInt(1000 + i)));
  });

  test(`PTI ${ver}: killed after a flush, the file keeps every buffer delivered before`, () => {
    const r = run(ver, `${ver}-kill`, "kill", { RAWTRACE_BUFFER_SIZE: "4M" });
    assert.is(r.signal, "SIGKILL");
    assert.ok(r.lines.some((l) => l.flushed === 0), "rawtrace_xpu_flush answered 0");
    const chunks = checkDump(ver, r.file, r.delivered, false);
    assert.not.ok(chunks.some((c) => c.type === ChunkType.END));
  });
}

for (const ver of VERSIONS) {
  test(`PTI ${ver}, COMPOSITE hierarchy: the tiles' handles and UUIDs listed with their root device and index`, () => {
    const r = run(ver, `${ver}-tiles`, "run", { FAKE_ZE_SUBDEVICES: "2" });
    assert.is(r.status, 0, r.stderr);
    checkDump(ver, r.file, r.delivered, true, 2);
  });
}

test("SIGTERM with the default disposition: the handler flushes PTI and completes the file, then the process dies", () => {
  const r = run("1.2.0", "term", "term", { RAWTRACE_BUFFER_SIZE: "4M" });
  assert.is(r.signal, "SIGTERM");
  // Installed with the first GPU work, not by the constructor: a runtime starting in main (CPython) still finds SIGINT
  // at its default and installs its own (KeyboardInterrupt), which the collector's handler then chains to.
  const start = r.lines.find((l) => "start_sigint_default" in l)!;
  assert.is(start.start_sigint_default, 1, "SIGINT at its default when main began");
  assert.is(start.start_sigterm_default, 1, "SIGTERM too");
  assert.is(r.lines.find((l) => "term_handler" in l)?.term_handler, 1, "the collector's handler, by the time of the SIGTERM");
  assert.is(r.lines.filter((l) => "delivered" in l).length, 1, "the one buffer, handed over by the exit flush");
  checkDump("1.2.0", r.file, r.delivered, true);
});

test("SIGTERM landing on a thread inside malloc (holding the main arena's lock): the exit flush frees and grows nothing on the heap, every run ends with END at once", async () => {
  // The writer used to free the program's blocks (the buffer, its queue item) and grow its scratch buffer (the
  // constructor's, main arena) during the flush, and waited for that lock for ever: the handler's wait ran out
  // (RAWTRACE_EXIT_TIMEOUT) and the process died without END — 7 runs in 8 with 4 MiB buffers, the whole run lost.
  for (let k = 0; k < 5; k++) {
    const file = join(dir, `churn-${k}.rawtrace`);
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const key of Object.keys(env)) if (/^(RAWTRACE_|FAKE_|RT_APP_|ZE_)/.test(key)) delete env[key];
    Object.assign(env, {
      LD_PRELOAD: LIB, LD_LIBRARY_PATH: join(BUILD, "fake"), RAWTRACE_PTI_LIB: PTI, FAKE_PTI_VERSION: "1.2.0",
      RAWTRACE_OUTPUT: file, RAWTRACE_BUFFER_SIZE: "4M", RAWTRACE_EXIT_TIMEOUT: "6", RT_APP_STEPS: "10",
    });
    const child = spawn(APP, ["churn"], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const exited = new Promise<{ signal: NodeJS.Signals | null; ms: number }>((res) => {
      let t0 = 0;
      child.stdout.on("data", (d) => {
        out += d;
        if (!t0 && out.includes('"armed"')) {
          t0 = 1;
          setTimeout(() => {
            t0 = Date.now();
            child.kill("SIGTERM");
          }, 200 + 50 * k);
        }
      });
      child.on("exit", (_code, signal) => res({ signal, ms: Date.now() - t0 }));
    });
    const guard = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const r = await exited;
    clearTimeout(guard);
    assert.is(r.signal, "SIGTERM", `run ${k}: ${err}`);
    // Not the handler's wait running out (6 s): the flush ended. A signal that lands inside the fake's emit holds
    // PTI's lock, and the flush then gives PTI half the timeout (3 s) before it goes on without its buffer: up to
    // 5.9 s leaves a loaded machine room and still tells that from the 6 s wait.
    assert.ok(r.ms < 5900, `run ${k}: died ${r.ms} ms after the SIGTERM (the flush waited for the heap's lock)`);
    const chunks = readDumpChunks(file);
    assert.is(chunks[chunks.length - 1].type, ChunkType.END, `run ${k}: END written`);
    if (!/ptiFlushAllViews did not return/.test(err)) {
      assert.ok(chunks.some((c) => c.type === ChunkType.ACTIVITY), `run ${k}: the buffer the exit flush took from PTI`);
    }
  }
});

test("SIGTERM while the signalled thread holds PTI's lock (inside ptiFlushAllViews): the exit flush does not wait on PTI for ever, END is written", () => {
  // The program's flush raises SIGTERM inside the double's ptiFlushAllViews, with its lock held: the handler waits for
  // the exit flush, whose own ptiFlushAllViews needs that lock. Before, it waited until the handler's wait
  // (RAWTRACE_EXIT_TIMEOUT, 3 s) ran out and the process died without END.
  const r = run("1.2.0", "held-lock", "kill", { FAKE_PTI_FLUSH_RAISE: "1", RAWTRACE_EXIT_TIMEOUT: "3" });
  assert.is(r.signal, "SIGTERM", r.stderr);
  assert.match(r.stderr, /ptiFlushAllViews did not return within 1\.5 s/);
  const chunks = readDumpChunks(r.file);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END, "END written");
  assert.ok(chunks.some((c) => c.type === ChunkType.LOG && c.p.toString("latin1").includes("did not return")), "said in the file");
  // Every buffer PTI handed over before the held flush is in the dump (the held one never is: PTI keeps it).
  assert.ok(r.lines.filter((l) => "delivered" in l).length > 0, "buffers delivered before the held flush");
  checkDump("1.2.0", r.file, r.delivered, true);
});

test("a child forked without exec (a DataLoader worker) does not keep the parent's dump open; the parent's dump is whole", () => {
  const r = run("1.2.0", "fork", "fork");
  assert.is(r.status, 0, r.stderr);
  assert.equal(r.lines.filter((l) => "parent_dumps" in l || "child_dumps" in l), [{ parent_dumps: 1 }, { child_dumps: 0 }]);
  checkDump("1.2.0", r.file, r.delivered, true);
});

test("a program started with standard streams closed: the dump and the collector's pipes take none of 0, 1, 2, so neither the program's output nor the collector's log lines land in the dump (before: the dump took 1 and held the program's lines)", () => {
  for (const [name, closed] of [["nostdout", ">&-"], ["nostdio", "<&- >&- 2>&-"]] as const) {
    const r = { file: join(dir, `${name}.rawtrace`), delivered: join(dir, `${name}.delivered`) };
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) if (/^(RAWTRACE_|FAKE_|RT_APP_|ZE_)/.test(k)) delete env[k];
    // The collector preloaded into the program only, as in run(); the shell closes the streams before the exec.
    const c = spawnSync("bash", ["-c", `LD_PRELOAD="$2" exec "$0" "$1" ${closed}`, APP, "run", LIB], {
      env: {
        ...env, LD_LIBRARY_PATH: join(BUILD, "fake"), RAWTRACE_PTI_LIB: PTI, FAKE_PTI_VERSION: "1.2.0",
        FAKE_PTI_DUMP: r.delivered, RAWTRACE_OUTPUT: r.file, RAWTRACE_BUFFER_SIZE: "64k", RT_APP_STEPS: String(STEPS),
        RAWTRACE_LOG: "info",
      },
      encoding: "utf8", timeout: 60_000,
    });
    assert.is(c.status, 0, `${name}: ${c.stderr}`);
    assert.is(c.stdout, "", "the program's stdout was closed: it printed nowhere");
    // Every chunk whole (readDumpChunks checks each header and payload checksum), the delivered bytes verbatim.
    checkDump("1.2.0", r.file, r.delivered, true);
    assert.not.ok(readFileSync(r.file).includes("\"enabled\""), `${name}: no program line in the dump`);
    assert.not.ok(readFileSync(r.file).includes("rawtrace["), `${name}: no log line in the dump`);
  }
});

test("an exit with more queued than a slow output takes within RAWTRACE_EXIT_TIMEOUT: the buffers that fit are written in order, the rest counted (DROPPED reason 4) and said, END written", async () => {
  // 8,000 steps (≈ 4.5 MB of view records in 64 KiB buffers) for a FIFO read at ≈ 1.3 MB/s, and a 2 s exit timeout.
  // Before, the exit hook's wait ran out while the writer still wrote, and the file ended inside a chunk, without END.
  const fifo = join(dir, "exit-slow.fifo");
  const copy = join(dir, "exit-slow-copy.rawtrace");
  const reader = startFifoReader(fifo, copy, { pauseS: 0.05 });
  await reader.ready;
  const r = run("0.17.0", "exit-slow", "run", {
    RT_APP_STEPS: "8000", RAWTRACE_MAX_MEMORY: "64M", RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "2",
  });
  await reader.closed;
  assert.is(r.status, 0, r.stderr);
  const chunks = readDumpChunks(copy);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END, r.stderr);
  exitLeft(chunks, r.stderr, "view buffers");
  // The buffers written are the first ones PTI delivered, whole and in order: only the last are missing.
  const written = Buffer.concat(chunks.filter((c) => c.type === ChunkType.ACTIVITY).map((c) => c.p));
  const delivered = readFileSync(r.delivered);
  assert.ok(written.length > 0 && written.length < delivered.length, `${written.length} of ${delivered.length} bytes`);
  assert.ok(written.equals(delivered.subarray(0, written.length)), "a prefix of what PTI delivered");
});

test("memory cap: a buffer that would put more than RAWTRACE_MAX_MEMORY in the writer's queue is dropped and counted", async () => {
  // The output is a FIFO whose reader starts only once the program handed out every round's records (it creates
  // `go` at the end of main; before: the reader waited 1 s, which a slow machine could spend before the buffers came):
  // the writer blocks once the pipe is full, buffers queue up to the cap (one buffer) and the rest are dropped; then
  // the reader drains the file to its end.
  const fifo = join(dir, "cap.fifo");
  const copy = join(dir, "cap-copy.rawtrace");
  const go = join(dir, "cap.go");
  const reader = startFifoReader(fifo, copy, { goFile: go });
  await reader.ready; // the collector gives a FIFO without reader 2 s: on a loaded machine Python can take longer
  const closed = reader.closed;
  // 1k: below one buffer, raised to one (64k) with a warning (a smaller cap would drop every buffer, saying nothing).
  const r = run("0.17.0", "cap", "run", { RAWTRACE_MAX_MEMORY: "1k", RAWTRACE_OUTPUT: fifo, RT_APP_GO: go });
  if (!existsSync(go)) writeFileSync(go, ""); // the program failed before: let the reader finish
  await closed;
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, /RAWTRACE_MAX_MEMORY=1024 is below one buffer \(RAWTRACE_BUFFER_SIZE=65536\); using 65536/);
  const chunks = readDumpChunks(copy);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END);
  const sizes = SIZES["0.17.0"];
  const count = (b: Buffer) => {
    let n = 0;
    for (let o = 0; o < b.length; n++) o += sizes[b.readUInt32LE(o)];
    return n;
  };
  const records = count(readFileSync(r.delivered));
  let written = 0;
  for (const c of chunks.filter((c) => c.type === ChunkType.ACTIVITY)) written += count(c.p);
  let dropped = 0n;
  for (const c of chunks.filter((c) => c.type === ChunkType.DROPPED)) {
    assert.is(c.p.readUInt32LE(8), DropReason.MEMORY_CAP);
    dropped += c.p.readBigUInt64LE(0);
  }
  assert.ok(written > 0, "the buffers within the cap are written");
  assert.ok(dropped > 0n, "the writer was behind: buffers over the cap were dropped");
  assert.is(BigInt(written) + dropped, BigInt(records), "every delivered record written or counted as dropped");
  assert.ok(records >= 4 * STEPS);
});

test("a Python program keeps Ctrl-C as KeyboardInterrupt: the collector's handlers go in after CPython's, and chain to them", () => {
  // The constructor runs before CPython starts; had it installed the handlers, CPython would have found SIGINT taken,
  // installed no default_int_handler (getsignal: None) and a SIGINT would have ended the program.
  const python = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).stdout.trim();
  assert.ok(python, "python3");
  const py = [
    "import ctypes, json, os, signal, time",
    "start = signal.getsignal(signal.SIGINT) is signal.default_int_handler",
    "libc = ctypes.CDLL(None)",
    "buf = ctypes.create_string_buffer(256)",
    "def siginfo_flag(sig):  # the handler's SA_SIGINFO flag (the collector's has it, CPython's not)",
    "    libc.sigaction(sig, None, buf)",
    "    return (int.from_bytes(buf.raw[136:140], 'little') & 4) != 0",
    "for _ in range(3000):  # the writer installs them once Py_IsInitialized says so (looked at every 20 ms; up to 60 s)",
    "    if siginfo_flag(signal.SIGINT): break",
    "    time.sleep(0.02)",
    "ours = siginfo_flag(signal.SIGINT)",
    "try:",
    "    os.kill(os.getpid(), signal.SIGINT)",
    "    time.sleep(5)",
    "    caught = False",
    "except KeyboardInterrupt:",
    "    caught = True",
    "print(json.dumps({'start_default_int_handler': start, 'collector_handler': ours, 'caught': caught}))",
  ].join("\n");
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(RAWTRACE_|FAKE_|RT_APP_|ZE_|PYTHON)/.test(k)) delete env[k];
  const file = join(dir, "python-sigint.rawtrace");
  Object.assign(env, {
    LD_PRELOAD: LIB, LD_LIBRARY_PATH: join(BUILD, "fake"), RAWTRACE_PTI_LIB: PTI, FAKE_PTI_VERSION: "1.2.0",
    FAKE_PTI_DUMP: join(dir, "python-sigint.delivered"), RAWTRACE_OUTPUT: file,
  });
  const r = spawnSync(python, ["-c", py], { env, encoding: "utf8", timeout: 60_000 });
  assert.is(r.status, 0, `${r.stdout}${r.stderr}`);
  const line = r.stdout.split("\n").find((l) => l.startsWith("{\"start_default_int_handler"));
  assert.equal(JSON.parse(line ?? "{}"), { start_default_int_handler: true, collector_handler: true, caught: true }, r.stdout + r.stderr);
  const chunks = readDumpChunks(file);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END, "the exit flush at the normal exit after it");
});

test("a write error stops PTI's tracing too (every view disabled while the program runs), not only the writing", () => {
  // 1 KiB of file: the header and tables fit, the first ACTIVITY chunk does not (EFBIG). No side file of the fake's
  // (it would hit the same limit).
  const r = run("1.2.0", "write-error", "views", { FAKE_PTI_DUMP: "" }, 1);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, /File too large\); recording stops/);
  const v = r.lines.find((l) => "enabled_after" in l)!;
  assert.is(v.enabled_after, 0, `views still enabled after ${v.waited_ms} ms: ${r.stderr}`);
});

test("RAWTRACE_PROCESS: only the programs it names are traced (LD_PRELOAD reaches every child process)", () => {
  const other = run("1.2.0", "process-other", "run", { RAWTRACE_PROCESS: "python*,train.py" });
  assert.is(other.status, 0, other.stderr);
  assert.is(other.stderr, "", "a process not named is left alone, silently");
  assert.not.ok(existsSync(other.file), "and writes no file");
  const mine = run("1.2.0", "process-mine", "run", { RAWTRACE_PROCESS: "python*, xpu_a?p" });
  assert.is(mine.status, 0, mine.stderr);
  assert.ok(readDumpChunks(mine.file).some((c) => c.type === ChunkType.ACTIVITY));
});

test("RAWTRACE_PROCESS names the script or module of a CPython command line as CPython reads its options (before: `-W ignore train.py` matched `ignore`, `-mtrain` nothing)", () => {
  const python = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).stdout.trim();
  assert.ok(python, "python3");
  const cwd = join(dir, "process-python");
  mkdirSync(cwd);
  writeFileSync(join(cwd, "train.py"), "");
  writeFileSync(join(cwd, "other.py"), "");
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(RAWTRACE_|FAKE_|RT_APP_|ZE_|PYTHON)/.test(k)) delete env[k];
  const traced = (args: string[], i: number) => {
    const file = join(cwd, `p${i}.rawtrace`);
    const r = spawnSync(python, args, {
      cwd, encoding: "utf8", timeout: 60_000,
      env: { ...env, LD_PRELOAD: LIB, LD_LIBRARY_PATH: join(BUILD, "fake"), RAWTRACE_PTI_LIB: PTI, FAKE_PTI_VERSION: "1.2.0", RAWTRACE_OUTPUT: file, RAWTRACE_PROCESS: "train.py,train" },
    });
    assert.is(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
    return existsSync(file);
  };
  const cases: Array<[string[], boolean]> = [
    [["train.py"], true], [["-u", "train.py"], true], [["-m", "train"], true], [["-W", "ignore", "train.py"], true],
    [["-X", "dev", "train.py"], true], [["-mtrain"], true], [["-um", "train"], true], [["-Wignore", "-uB", "train.py"], true],
    [["--check-hash-based-pycs", "never", "train.py"], true], [["-E", "--", "train.py"], true],
    [["other.py"], false], [["-c", "pass", "train.py"], false], [["-W", "train.py", "other.py"], false], [["-m", "other"], false],
  ];
  assert.equal(cases.map(([a], i) => [a.join(" "), traced(a, i)]), cases.map(([a, want]) => [a.join(" "), want]));
});

test("no PTI library: the program runs unchanged, one line says why, no file", () => {
  const r = run("1.2.0", "nopti", "run", { RAWTRACE_PTI_LIB: join(dir, "missing/libpti_view.so") });
  assert.is(r.lines.find((l) => "collector" in l)?.collector, 1);
  assert.is(r.status, 2); // the app itself finds no fake to drive
  const lines = r.stderr.split("\n").filter((l) => l.includes("XPU collector inactive"));
  assert.is(lines.length, 1);
  assert.match(lines[0], /RAWTRACE_PTI_LIB=.*missing\/libpti_view\.so cannot be loaded/);
  assert.not.ok(existsSync(r.file));
});

test("no Level Zero driver: PTI is never asked (it would abort), the program runs, one line says why", () => {
  const r = run("1.2.0", "nodriver", "run", { FAKE_ZE_DRIVERS: "0" });
  assert.is(r.status, 0, r.stderr);
  assert.not.ok(r.lines.some((l) => "enabled" in l), "no view enabled");
  assert.not.ok(r.lines.some((l) => "delivered" in l), "no buffer requested");
  const lines = r.stderr.split("\n").filter((l) => l.includes("XPU collector inactive"));
  assert.is(lines.length, 1);
  assert.match(lines[0], /zeDriverGet found no driver/);
  assert.not.ok(existsSync(r.file), "the output made before asking Level Zero is removed");
  const first = r.lines.find((l) => "collector" in l);
  assert.equal([first?.ze_tracing, first?.ze_inits], [null, 1], "the environment as found (before: ZE_ENABLE_TRACING_LAYER=1 left for the program's children)");
});

test("an output that cannot be created: the collector is inactive before Level Zero (no zeInit, no ZE_ENABLE_TRACING_LAYER), one line says why; recording, both are set", () => {
  const r = run("1.2.0", "noout", "run", { RAWTRACE_OUTPUT: join(dir, "missing/x.rawtrace") });
  assert.is(r.status, 0, r.stderr);
  const lines = r.stderr.split("\n").filter((l) => l.includes("XPU collector inactive"));
  assert.is(lines.length, 1, r.stderr);
  assert.match(lines[0], /cannot create .*missing\/x\.rawtrace: No such file or directory/);
  const first = r.lines.find((l) => "collector" in l);
  assert.equal([first?.ze_tracing, first?.ze_inits], [null, 0], "before: zeInit with the tracing layer, left set");
  const ok = run("1.2.0", "tracing", "run");
  assert.is(ok.status, 0, ok.stderr);
  const on = ok.lines.find((l) => "collector" in l);
  assert.equal([on?.ze_tracing, on?.ze_inits], ["1", 1]);
  // The user's own value is kept.
  const own = run("1.2.0", "tracing0", "run", { ZE_ENABLE_TRACING_LAYER: "0" });
  assert.equal(own.lines.find((l) => "collector" in l)?.ze_tracing, "0");
});

test.run();
