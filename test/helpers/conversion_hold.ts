/**
 * A CLI conversion held part way, whatever the machine's speed: the run is started with RAWTRACE_TEST_HOLD naming a
 * FIFO made here (src/node/worker_api.ts testHold), so its first emit window (output being written, temporaries and
 * lock in place) reads that FIFO to its end. {@link ConversionHold.held} resolves once a conversion holds it — the
 * FIFO's write end opens only once a reader has it open — and it stays held until {@link ConversionHold.release}
 * closes that end: a signal sent in between reaches a run that is provably not finished.
 */
import { closeSync, constants, mkdtempSync, openSync, rmSync } from "node:fs";
import { execFileSync, type ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ConversionHold {
  /** The environment to start the run with (`base` and RAWTRACE_TEST_HOLD). */
  env(base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** Resolves once `child`'s conversion holds the FIFO; rejects when `child` ends first. */
  held(child: ChildProcess): Promise<void>;
  /** Closes the write end (a run still alive then goes on) and removes the FIFO. */
  release(): void;
}

export function conversionHold(): ConversionHold {
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-hold-"));
  const fifo = join(dir, "hold");
  execFileSync("mkfifo", [fifo]);
  let fd = -1;
  return {
    env: (base = process.env) => ({ ...base, RAWTRACE_TEST_HOLD: fifo }),
    async held(child) {
      let ended = false;
      child.once("exit", () => (ended = true));
      // Polled: a blocking open would wait for ever (and hold a thread of the pool) if no run ever reads the FIFO.
      // The deadline is no timing window: it only turns a run that never gets there into a failure instead of a hang.
      const deadline = Date.now() + 120_000;
      for (;;) {
        try {
          fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
          return;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "ENXIO") throw e;
        }
        if (ended || child.exitCode !== null || child.signalCode !== null) throw new Error("the run ended before its conversion reached the hold");
        if (Date.now() > deadline) throw new Error("the run's conversion never reached the hold");
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    release() {
      if (fd >= 0) closeSync(fd);
      fd = -1;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
