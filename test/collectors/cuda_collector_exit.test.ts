/**
 * The CUDA collector (collectors/cuda) without a GPU: collection windows (RAWTRACE_SIGNAL, RAWTRACE_START_DELAY /
 * RAWTRACE_DURATION), abrupt ends (kill -9, SIGTERM with and without the program's own handler, exit() from a thread
 * under load), an output that stalls at exit and at SIGINT (RAWTRACE_EXIT_TIMEOUT waited once), and a kernel still
 * running at the exit flush. Setup and helpers: cuda_harness.ts.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { closeSync, constants as fsConstants, existsSync, openSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exitLeft } from "../helpers/dump_chunks.js";
import { startFifoReader } from "../helpers/fifo_reader.js";
import {
  TAGS, dir, runSync, runAsync, outPath, ok, one, convert, byCat, assertTimes, T, chunks, readKindSizes, cudaSuite,
} from "./cuda_harness.js";

// ---- setup -----------------------------------------------------------------------------------------------------

cudaSuite(test);

// ---- collection windows ----------------------------------------------------------------------------------------

test("RAWTRACE_SIGNAL=USR2 (and HUP, which otherwise finishes the file): starts stopped, each signal toggles; only the records while on are kept", async () => {
  const hup = runSync("cu13", "signal", "signal-hup", { RAWTRACE_SIGNAL: "HUP", CUDA_APP_TOGGLE_HUP: "1" });
  ok(hup, "signal HUP");
  assert.equal(byCat(await convert(outPath("cu13", "signal-hup", hup.pid)), "kernel").map((k) => k.name).sort(),
    ["again_0", "between_0", "between_1", "between_2"]);
  const run = runSync("cu13", "signal", "signal", { RAWTRACE_SIGNAL: "USR2" });
  ok(run, "signal");
  assert.is(one(run, "enabled_at_start").on, 0);
  const path = outPath("cu13", "signal", run.pid);
  const c = await convert(path);
  assert.equal(byCat(c, "kernel").map((k) => k.name).sort(), ["again_0", "between_0", "between_1", "between_2"]);
  const c2 = await convert(path, true);
  assert.equal(byCat(c2, "cuda_runtime").map((e) => e.name), Array(4).fill("cudaLaunchKernel"),
    "no cudaGetDevice after the second start either (even with allApi)");
  const clocks = chunks(path).filter((x) => x.type === T.CLOCK).map((x) => x.p.readUInt32LE(0));
  assert.equal(clocks, [0, 2, 2, 2, 1], "START, PERIODIC at each stop and restart, END");
});

test("RAWTRACE_SIGNAL in a program with its own handler of that signal: collection toggles and the program's handler still runs", async () => {
  const run = runSync("cu13", "signal_chain", "signal-chain", { RAWTRACE_SIGNAL: "USR2" });
  ok(run, "signal_chain");
  assert.is(one(run, "usr2_seen").n, 2, "both signals reached the program's handler");
  const c = await convert(outPath("cu13", "signal-chain", run.pid));
  assert.equal(byCat(c, "kernel").map((k) => k.name).sort(), ["between_0", "between_1"]);
});

test("RAWTRACE_SIGNAL naming a signal the program needs to end (TERM, INT, SEGV, by name, number or RTMIN+-n) is refused with a line; SIGTERM still ends the program", async () => {
  for (const value of ["TERM", "15", "SIGINT", "SEGV", "11", "KILL", "RTMIN+-23", "RTMIN+999", "USR1x"]) {
    const run = runSync("cu13", "plain", "signal-refused", { RAWTRACE_SIGNAL: value });
    ok(run, value);
    const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
    assert.ok(lines.some((l) => l.includes(`RAWTRACE_SIGNAL=${value} ignored: give USR1, USR2, HUP, URG, WINCH or RTMIN+n`)), `${value}: ${run.stderr}`);
  }
  // Refused, so collection runs from the start (not "starts stopped") and SIGTERM ends the program as usual.
  const run = await runAsync("cu13", "sigterm", "signal-term", { RAWTRACE_SIGNAL: "TERM" }, (e, child) => {
    if (e.ev === "ready") child.kill("SIGTERM");
  });
  assert.is(run.signal, "SIGTERM", run.stderr);
  const c = await convert(outPath("cu13", "signal-term", run.pid));
  assert.is(c.r.info.complete, true, "flushed and closed as any SIGTERM");
  assert.is(byCat(c, "kernel").length, 3000);
});

test("a child forked without exec (a DataLoader worker) does not keep the parent's dump open; the parent's dump is whole", async () => {
  const run = runSync("cu13", "fork_child", "fork-child", {});
  ok(run, "fork_child");
  assert.is(one(run, "parent_dumps").n, 1, "the parent writes its dump");
  assert.is(one(run, "child_dumps").n, 0, "the child let go of it (a FIFO's reader would otherwise wait for the child)");
  const c = await convert(outPath("cu13", "fork-child", run.pid));
  assert.is(c.r.info.complete, true);
  assert.is(byCat(c, "kernel").length, 20);
});

test("RAWTRACE_START_DELAY / RAWTRACE_DURATION: only the records inside the window", async () => {
  const run = runSync("cu12", "window", "window", { RAWTRACE_START_DELAY: "0.5", RAWTRACE_DURATION: "0.4" });
  ok(run, "window");
  const w = one(run, "window");
  assert.ok(w.start_after_s >= 0.45, `started after ${w.start_after_s} s`);
  assert.ok(w.duration_s >= 0.35, `ran ${w.duration_s} s`);
  const c = await convert(outPath("cu12", "window", run.pid));
  assert.equal(byCat(c, "kernel").map((k) => k.name).sort(), ["during_0", "during_1", "during_2"]);
});

// ---- abrupt ends -----------------------------------------------------------------------------------------------

test("kill -9 mid-run: the file converts up to its last complete chunk", async () => {
  let flushed = 0;
  const run = await runAsync("cu13", "kill9", "kill9", { RAWTRACE_BUFFER_SIZE: "256K" }, (e, child) => {
    if (e.ev === "batch") {
      flushed = e.kernels;
      if (e.batch === 5) child.kill("SIGKILL");
    }
  });
  assert.is(run.signal, "SIGKILL");
  const path = outPath("cu13", "kill9", run.pid);
  const c = await convert(path);
  assert.is(c.r.info.complete, false, "no END after kill -9");
  const kernels = byCat(c, "kernel").length;
  assert.ok(kernels >= flushed, `${kernels} kernels, ${flushed} were flushed before the kill`);
  assert.ok(byCat(c, "kernel").every((k) => k.name === "batch_kernel"));

  // cut inside the last ACTIVITY chunk: still converts, with fewer records and a truncation warning
  const cs = chunks(path);
  const lastAct = [...cs].reverse().find((x) => x.type === T.ACTIVITY)!;
  const cut = join(dir, "kill9-cut.rawtrace");
  writeFileSync(cut, readFileSync(path).subarray(0, lastAct.off + 24 + 1000));
  const c2 = await convert(cut);
  assert.is(c2.r.info.complete, false);
  assert.ok(byCat(c2, "kernel").length < kernels);
  assert.ok(c2.r.info.warnings.length > 0);
});

test("SIGTERM and SIGHUP (default action; SIGHUP: a closed terminal, a dropped ssh session): flushed, END written, then the process dies of the signal", async () => {
  for (const sig of ["SIGTERM", "SIGHUP"] as const) {
    const name = sig.toLowerCase();
    let expected = -1;
    const run = await runAsync("cu12", "sigterm", name, {}, (e, child) => {
      if (e.ev === "ready") {
        expected = e.kernels;
        child.kill(sig);
      }
    });
    assert.is(run.signal, sig, `stderr:\n${run.stderr}`);
    assert.is(expected, 3000);
    const c = await convert(outPath("cu12", name, run.pid));
    assert.is(c.r.info.complete, true, sig);
    assert.is(byCat(c, "kernel").length, 3000, `${sig}: every record, also those still in CUPTI's current buffer`);
  }
});

test("two signals at once (Ctrl-C reaching the program and `rawtrace record` forwarding it): the exit flush is not cut short", async () => {
  // The output is a FIFO whose reader starts reading only once both signals were sent (`go`; before: 2 s after it
  // opened, which a slow machine could reach before the second signal): the exit flush the first signal asked for
  // (more than the pipe holds) cannot have finished when the second lands, every time, on a machine of any speed. The
  // second used to end the program there.
  for (const [first, second] of [["SIGINT", "SIGTERM"], ["SIGTERM", "SIGHUP"]] as const) {
    const name = `double-${first}-${second}`.toLowerCase();
    const fifo = join(dir, `${name}.fifo`);
    const copy = join(dir, `${name}-copy.rawtrace`);
    const go = join(dir, `${name}.go`);
    const reader = startFifoReader(fifo, copy, { goFile: go });
    await reader.ready; // the collector gives a FIFO without reader 2 s: on a loaded machine Python can take longer
    const closed = reader.closed;
    const run = await runAsync("cu13", "sigterm", name, { RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "30" }, (e, child) => {
      if (e.ev === "ready") {
        child.kill(first);
        setTimeout(() => {
          child.kill(second);
          writeFileSync(go, "");
        }, 300);
      }
    });
    if (!existsSync(go)) writeFileSync(go, ""); // the program ended before: let the reader finish
    await closed;
    assert.ok(run.signal === first || run.signal === second, `${name}: ended by a signal (${run.signal}): ${run.stderr}`);
    const c = await convert(copy);
    assert.is(c.r.info.complete, true, `${name}: END written (the second signal ended the program in the middle of the flush)`);
    assert.ok(statSync(copy).size > 65536, `${name}: more than the pipe holds, so the exit flush blocked until the second signal`);
    assert.is(byCat(c, "kernel").length, 3000, name);
  }
});

test("SIGTERM while the signalled thread holds CUPTI's lock (inside cuptiActivityFlushAll): the exit flush does not wait on CUPTI for ever, END is written", () => {
  // The program's flush raises SIGTERM inside the double's cuptiActivityFlushAll, with its lock held: the handler
  // waits for the exit flush, whose own disable and flush of CUPTI need that lock. Before, it waited until the
  // handler's wait (RAWTRACE_EXIT_TIMEOUT, 3 s) ran out and the process died without END.
  const run = runSync("cu13", "basic", "held-lock", { FAKE_CUPTI_FLUSH_RAISE: "1", RAWTRACE_EXIT_TIMEOUT: "3" });
  assert.is(run.signal, "SIGTERM", run.stderr);
  assert.match(run.stderr, /CUPTI's stop and flush did not return within 1\.5 s/);
  const cs = chunks(outPath("cu13", "held-lock", run.pid));
  assert.is(cs[cs.length - 1].type, T.END, "END written");
  assert.ok(cs.some((c) => c.type === T.LOG && c.p.toString("latin1").includes("did not return")), "said in the file");
});

test("SIGTERM while the signalled thread holds CUPTI's lock and buffers are queued (a slow output): the writer makes no CUPTI call, END is written", async () => {
  // As above, with 8 threads of launches into 64 KiB buffers and an output read at ≈ 12 MB/s, so that buffers wait in
  // the queue when the signal lands (≈ 8 MB in all: written within the 6 s exit timeout once the flush is reached). The writer asked CUPTI for its drop count after each buffer, which waits on the
  // lock the signalled thread holds: the exit flush was never reached and the process died after the whole
  // RAWTRACE_EXIT_TIMEOUT without END (5 of 5 runs in the ThreadSanitizer audit's reproduction).
  const fifo = join(dir, "held-lock-busy.fifo");
  const copy = join(dir, "held-lock-busy-copy.rawtrace");
  const reader = startFifoReader(fifo, copy, { pauseS: 0.005 });
  await reader.ready;
  const run = runSync("cu13", "threads", "held-lock-busy", {
    FAKE_CUPTI_FLUSH_RAISE: "1", RAWTRACE_EXIT_TIMEOUT: "6", RAWTRACE_BUFFER_SIZE: "64K", RAWTRACE_OUTPUT: fifo,
  });
  await reader.closed;
  assert.is(run.signal, "SIGTERM", run.stderr);
  // The flush was reached (its bounded stop of CUPTI gave up after half the timeout), then wrote what was queued.
  assert.match(run.stderr, /CUPTI's stop and flush did not return within 3\.0 s/);
  const cs = chunks(copy);
  assert.is(cs[cs.length - 1].type, T.END, `END written: ${run.stderr}`);
});

test("Ctrl-C in a program that handles SIGINT (Python), then SIGTERM while the flush it asked for still writes: the exit flush is not cut short by that flush's end", async () => {
  // The collector flushes what it has for a SIGINT the program handles and wakes the handler with a byte in its pipe.
  // The SIGTERM handler, waiting for the exit flush, took that byte for the exit flush's end and let the process die
  // in the middle of it: no END. The output is a FIFO read only once both signals were sent, so the first flush (more
  // than the pipe holds) is still writing when SIGTERM lands.
  const fifo = join(dir, "sigint-term.fifo");
  const copy = join(dir, "sigint-term-copy.rawtrace");
  const go = join(dir, "sigint-term.go");
  const reader = startFifoReader(fifo, copy, { goFile: go });
  await reader.ready;
  const closed = reader.closed;
  const run = await runAsync("cu13", "sigint_term", "sigint-term", { RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "30" }, (e, child) => {
    if (e.ev === "ready") {
      child.kill("SIGINT");
      setTimeout(() => {
        child.kill("SIGTERM");
        setTimeout(() => writeFileSync(go, ""), 300);
      }, 300);
    }
  });
  if (!existsSync(go)) writeFileSync(go, "");
  await closed;
  assert.is(run.signal, "SIGTERM", run.stderr);
  const c = await convert(copy);
  assert.is(c.r.info.complete, true, "END written (before: the process died when the SIGINT's flush ended)");
  assert.ok(statSync(copy).size > 65536, "more than the pipe holds: the SIGINT's flush blocked until SIGTERM landed");
  assert.is(byCat(c, "kernel").length, 3000);
});

test("SIGTERM with more queued than a slow output takes within RAWTRACE_EXIT_TIMEOUT: the flush stops in time, says what it left (DROPPED reason 4, a LOG line), END is written", async () => {
  // As above with an output read at ≈ 1.3 MB/s: the ≈ 18 MB the threads' buffers hold would take ≈ 14 s, and the
  // 4 s exit timeout leaves the flush 2 s after CUPTI's bounded stop. Before, the writer wrote buffers until the handler's wait ran out and the
  // process died in the middle of a chunk, without END (nothing said what was missing).
  const fifo = join(dir, "exit-time.fifo");
  const copy = join(dir, "exit-time-copy.rawtrace");
  const reader = startFifoReader(fifo, copy, { pauseS: 0.05 });
  await reader.ready;
  const run = runSync("cu13", "threads", "exit-time", {
    FAKE_CUPTI_FLUSH_RAISE: "1", RAWTRACE_EXIT_TIMEOUT: "4", RAWTRACE_BUFFER_SIZE: "64K", RAWTRACE_OUTPUT: fifo,
  });
  // From the signal (the double says when, CLOCK_MONOTONIC as process.hrtime) to the process's end, not from its
  // start: on a loaded machine the program's own run before the signal took 4.5 s more (a false failure at 8.5 s).
  const ended = process.hrtime.bigint();
  const raisedAt = /fake_cupti: SIGTERM raised at (\d+) ns/.exec(run.stderr);
  assert.ok(raisedAt, run.stderr);
  const took = Number((ended - BigInt(raisedAt![1])) / 1_000_000n);
  await reader.closed;
  assert.is(run.signal, "SIGTERM", run.stderr);
  const cs = chunks(copy);
  assert.is(cs[cs.length - 1].type, T.END, `END written after ${took} ms (${cs.length} chunks, status ${run.status}): ${run.stderr}`);
  const n = exitLeft(cs, run.stderr, "activity buffers");
  const written = cs.filter((c) => c.type === T.ACTIVITY).length;
  assert.ok(written > 0, `${written} buffers written, ${n} left`);
  assert.ok(cs.some((c) => c.type === T.LOG && /left unwritten/.test(c.p.toString("latin1"))), "said in the file");
  // The 4 s timeout and the process's end; writing all ≈ 18 MB at the reader's speed would take ≈ 14 s.
  assert.ok(took < 7000, `${took} ms from the signal to the end`);
  const c = await convert(copy);
  assert.is(c.r.info.complete, true);
  assert.is(c.r.info.droppedBuffers, n, "the buffers left, as buffers");
  assert.ok(c.r.info.warnings.some((w) => w.code === "DROPPED_BUFFERS" && w.detail === n));
});

test("SIGTERM with the program's own handler: chained, the program goes on, exit flush at the end", async () => {
  const run = await runAsync("cu13", "sigterm_chain", "sigterm-chain", {}, (e, child) => {
    if (e.ev === "ready") child.kill("SIGTERM");
  });
  assert.is(run.signal, null);
  assert.is(run.status, 0, run.stderr);
  assert.is(one(run, "after_term").kernels, 3010);
  const c = await convert(outPath("cu13", "sigterm-chain", run.pid));
  assert.is(c.r.info.complete, true);
  assert.is(byCat(c, "kernel").length, 3010);
});

test("exit() from a thread while four threads keep launching into a slow output: the exit flush is not starved, END is written", async () => {
  // The writer used to drain its queue until empty before looking at the exit request; with buffers arriving faster
  // than the output takes them it never was, so the exit waited the whole RAWTRACE_EXIT_TIMEOUT and the file had no
  // END. The output here is a FIFO that a reader drains at ≈ 30 MB/s into a file.
  const fifo = join(dir, "busy.fifo");
  const copy = join(dir, "busy-copy.rawtrace");
  const reader = startFifoReader(fifo, copy, { pauseS: 0.002 });
  await reader.ready; // as above
  const closed = reader.closed;
  const run = runSync("cu13", "exit_busy", "exit-busy", {
    RAWTRACE_OUTPUT: fifo, RAWTRACE_BUFFER_SIZE: "256K", RAWTRACE_MAX_MEMORY: "4M", RAWTRACE_EXIT_TIMEOUT: "20",
  });
  await closed;
  assert.is(run.status, 0, run.stderr);
  assert.ok(run.events.some((e) => e.ev === "exiting"), run.stderr);
  assert.not.match(run.stderr, /did not finish/);
  const c = await convert(copy);
  assert.is(c.r.info.complete, true, "END written");
  assert.ok(byCat(c, "kernel").length > 0);
});

test("exit() while threads keep launching into an output too slow for RAWTRACE_EXIT_TIMEOUT: the flush stops in time, says what it left, END is written", async () => {
  // The test above with an output read at ≈ 1.3 MB/s and a 4 s exit timeout: the 16 MiB the queue may hold take ≈ 13 s.
  // Before, the exit hook's wait ran out while the writer still wrote its queue, and the file had no END.
  const fifo = join(dir, "exit-slow.fifo");
  const copy = join(dir, "exit-slow-copy.rawtrace");
  const reader = startFifoReader(fifo, copy, { pauseS: 0.05 });
  await reader.ready;
  const run = runSync("cu13", "exit_busy", "exit-slow", {
    RAWTRACE_OUTPUT: fifo, RAWTRACE_BUFFER_SIZE: "64K", RAWTRACE_MAX_MEMORY: "16M", RAWTRACE_EXIT_TIMEOUT: "4",
  });
  await reader.closed;
  assert.is(run.status, 0, run.stderr);
  assert.not.match(run.stderr, /did not finish/);
  const cs = chunks(copy);
  assert.is(cs[cs.length - 1].type, T.END, `END written: ${run.stderr}`);
  exitLeft(cs, run.stderr, "activity buffers");
  const c = await convert(copy);
  assert.is(c.r.info.complete, true);
  assert.ok(byCat(c, "kernel").length > 0);
});

// ---- an output that stalls at exit --------------------------------------------------------------------------------

/** How long a finished run's exit took (ms): from its main's return (cuda_app's `main_end`) to now. */
function exitMs(run: { events: Array<Record<string, unknown>> }): number {
  const end = run.events.find((e) => e.ev === "main_end");
  assert.ok(end, "the program's main returned");
  return Date.now() - Number(end!.wall_ms);
}

test("an output that stalls (a FIFO read by nobody after it opened): the exit waits RAWTRACE_EXIT_TIMEOUT once, not once per exit handler", async () => {
  const fifo = join(dir, "stalled.fifo");
  execFileSync("mkfifo", [fifo]);
  // This process opens the FIFO for reading and never reads: the writer's writes block once the pipe is full.
  const rd = openSync(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  try {
    // Two exit hooks (registered again at the first buffer request): the first waits RAWTRACE_EXIT_TIMEOUT (3 s), the
    // second finds the writer stuck and gives it 1 s, not 3 s again (before: 6 s and two warnings).
    const run = runSync("cu13", "many", "stalled", { RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "3" });
    const took = exitMs(run);
    assert.is(run.status, 0, run.stderr);
    const warned = run.stderr.split("\n").filter((l) => /exit flush did not finish/.test(l));
    assert.is(warned.length, 1, run.stderr);
    assert.ok(took >= 3000 && took < 5500, `${took} ms: the exit waits 3 s, then 1 s for the stuck writer (before: 6 s)`);
  } finally {
    closeSync(rd);
  }
});

test("an output that stalls, and a program that handles SIGINT: a signal's wait that found the writer stuck is not repeated in full by the next signals or the exit", async () => {
  const fifo = join(dir, "stalled_sigint.fifo");
  execFileSync("mkfifo", [fifo]);
  const rd = openSync(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK); // opened, never read
  try {
    const run = runSync("cu13", "sigint_stalled", "stalled-sigint", { RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "4" });
    const exit = exitMs(run);
    assert.is(run.status, 0, run.stderr);
    const waits = run.events.filter((e) => e.ev === "sigint") as unknown as Array<{ ms: number; handled: number }>;
    assert.is(waits.length, 3, run.stderr);
    assert.ok(waits.every((w) => w.handled === 1), "the program's own handler ran each time");
    // A SIGINT waits up to 3 s for the flush it asks for. The writer is blocked in a write from the first signal on,
    // so by the second wait at the latest it is known to be stuck: the third gets 1 s (before: 3 s each, and the exit
    // then waited its full 4 s and 1 s more).
    assert.ok(waits[0].ms >= 2900, `first wait ${waits[0].ms} ms`);
    assert.ok(waits[2].ms < 1800, `third wait ${waits[2].ms} ms: the writer was known stuck`);
    assert.ok(exit < 3500, `the exit after them took ${exit} ms (1 s per exit hook for a stuck writer; 5 s before)`);
  } finally {
    closeSync(rd);
  }
});

// ---- unfinished work at the exit flush (docs/errors.md, Timestamps) --------------------------------------------------

for (const tag of TAGS) {
  test(`${tag}: a kernel still running at exit comes with end 0 from the forced flush; converted as incomplete`, async () => {
    const run = runSync(tag, "unfinished", "unfinished");
    ok(run, "unfinished");
    const running = one(run, "running");
    const path = outPath(tag, "unfinished", run.pid);
    // The dump holds CUPTI's record as delivered: the kernel's end is CUPTI_TIMESTAMP_UNKNOWN (0).
    const cs = chunks(path);
    const sizes = readKindSizes(cs.find((x) => x.type === T.KIND_SIZES)!.p);
    const ends: Array<[number, bigint]> = []; // CONCURRENT_KERNEL: correlationId @92, end @24
    for (const c of cs.filter((x) => x.type === T.ACTIVITY)) {
      for (let o = 0; o + 4 <= c.p.length; o += sizes.get(c.p.readUInt32LE(o))!) {
        if (c.p.readUInt32LE(o) === 10) ends.push([c.p.readUInt32LE(o + 92), c.p.readBigUInt64LE(o + 24)]);
      }
    }
    assert.equal(ends.filter(([, e]) => e === 0n).map(([corr]) => corr), [running.corr], "one record with end 0");
    assert.is(cs[cs.length - 1].type, T.END);

    const c = await convert(path);
    const made = run.events.filter((e) => e.ev === "kernel");
    const k = byCat(c, "kernel");
    assert.equal(k.map((e) => e.name), [...made.map((e) => e.name), "unfinished_kernel"]);
    made.forEach((m, i) => assertTimes(k[i], m.start, m.end, c.base, m.name));
    const u = k[k.length - 1];
    assertTimes(u, running.start, running.start, c.base, "unfinished_kernel at its start, dur 0");
    assert.is(u.args.incomplete, true);
    assert.is(u.args.correlation, running.corr);
    // Neither the base nor the trace's extent comes from the unknown end.
    const first = BigInt(run.events.find((e) => e.ev === "runtime").start);
    assert.ok(c.base > 0n && c.base <= first && first - c.base < 7_889_238_000_000_000n, `base ${c.base}`);
    const last = BigInt(running.start) - c.base;
    for (const e of c.trace.traceEvents.filter((x) => x.ph === "X")) {
      assert.ok(Math.round((e.ts + e.dur) * 1000) <= Number(last), `${e.name} ends by the last known time`);
    }
    const w = c.r.info.warnings.map((x) => [x.code, x.count, x.detail]);
    assert.equal(w, [["INCOMPLETE_RECORD", 1, 10]]);
  });
}

test.run();
