/**
 * A slow or late reader of a collector's output FIFO, for tests of what a collector does when its output does not
 * keep up: a Python process (Python is on every machine the suite runs on) that opens the FIFO, waits `delayS` (and,
 * with `goFile`, until that file exists), then copies it to `copy` in 64 KiB reads with `pauseS` after each, until
 * the writer closes it. `pipeBytes` shrinks the pipe's capacity (Linux: F_SETPIPE_SZ, at least a page) before the
 * writer opens it, so that even a small dump's writes block while the reader waits. A test that passes `goFile`
 * creates it when its program did not (else the reader never ends).
 */
import { execFileSync, spawn } from "node:child_process";

/** How the reader reads: see the file's comment. */
export interface FifoReaderOptions { delayS?: number; pauseS?: number; pipeBytes?: number; goFile?: string }

/**
 * Makes the FIFO `fifo` and starts its reader: `closed` settles when the reader has copied everything, `ready` once
 * it holds the FIFO open (with `pipeBytes`, at its capacity), so that a writer started after it finds a reader and
 * the small pipe — await it before starting the program: a collector gives a FIFO without reader 2 s.
 */
export function startFifoReader(fifo: string, copy: string, o: FifoReaderOptions = {}): { closed: Promise<unknown>; ready: Promise<void> } {
  execFileSync("mkfifo", [fifo]);
  // The FIFO is opened without waiting for a writer, before `ready`: a collector gives a FIFO without reader 2 s,
  // which Python can take to start on a loaded machine. That one descriptor is read: poll wakes for bytes, or for the
  // end once a writer came and left (never before a writer came, unlike read()).
  const py = "import fcntl, os, select, sys, time\n" +
    "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)\n" +
    "if int(sys.argv[5]):\n    fcntl.fcntl(fd, 1031, int(sys.argv[5]))\n" +
    "print('ready', flush=True)\ndst = open(sys.argv[2], 'wb')\n" +
    "time.sleep(float(sys.argv[3]))\npause = float(sys.argv[4])\n" +
    "while sys.argv[6] and not os.path.exists(sys.argv[6]):\n    time.sleep(0.01)\n" +
    "p = select.poll()\np.register(fd, select.POLLIN)\n" +
    "while True:\n    p.poll()\n    try:\n        b = os.read(fd, 65536)\n    except BlockingIOError:\n        continue\n" +
    "    if not b:\n        break\n    dst.write(b)\n    if pause:\n        time.sleep(pause)\n";
  const reader = spawn("python3", ["-c", py, fifo, copy, String(o.delayS ?? 0), String(o.pauseS ?? 0), String(o.pipeBytes ?? 0), o.goFile ?? ""],
    { stdio: ["ignore", "pipe", "ignore"] });
  const ready = new Promise<void>((res, rej) => {
    reader.stdout!.once("data", () => res());
    reader.on("error", rej);
    reader.on("close", () => rej(new Error(`the reader of ${fifo} ended before it was ready`)));
  });
  const closed = new Promise((res, rej) => {
    reader.on("error", rej);
    reader.on("close", res);
  });
  ready.catch(() => {});
  return { closed, ready };
}
