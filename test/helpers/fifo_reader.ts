/**
 * A slow or late reader of a collector's output FIFO, for tests of what a collector does when its output does not
 * keep up: a Python process (Python is on every machine the suite runs on) that opens the FIFO, waits `delayS`, then
 * copies it to `copy` in 64 KiB reads with `pauseS` after each, until the writer closes it.
 */
import { execFileSync, spawn } from "node:child_process";

/** Makes the FIFO `fifo` and starts its reader; the promise settles when the reader has copied everything. */
export function fifoReader(fifo: string, copy: string, o: { delayS?: number; pauseS?: number } = {}): Promise<unknown> {
  execFileSync("mkfifo", [fifo]);
  const py = "import sys, time\nsrc = open(sys.argv[1], 'rb', 0)\ndst = open(sys.argv[2], 'wb')\n" +
    "time.sleep(float(sys.argv[3]))\npause = float(sys.argv[4])\n" +
    "while True:\n    b = src.read(65536)\n    if not b:\n        break\n    dst.write(b)\n    if pause:\n        time.sleep(pause)\n";
  const reader = spawn("python3", ["-c", py, fifo, copy, String(o.delayS ?? 0), String(o.pauseS ?? 0)], { stdio: "ignore" });
  return new Promise((res, rej) => {
    reader.on("error", rej);
    reader.on("close", res);
  });
}
