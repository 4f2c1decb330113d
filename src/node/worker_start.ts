/**
 * How rawtrace starts its worker threads (the conversion pool, src/node/pool.ts, and the gzip pool,
 * src/node/gzip_pool.ts): which file a worker runs and with which Node options.
 */
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * URL of the worker entry `name` (without extension) next to the module at `here` (its `import.meta.url`): the
 * bundle's `name.js` (dist/node/), or from source (tests, `tsx src/cli.ts`) a small boot module that registers
 * tsx's loader in the worker and then imports `name.ts` (Node 20 workers do not get the parent's loader hooks).
 */
export function workerEntry(here: string, name: string): URL {
  if (!here.endsWith(".ts")) return new URL(`./${name}.js`, here);
  const entry = new URL(`./${name}.ts`, here).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  const boot = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(entry)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(boot)}`);
}

/**
 * Options a worker must not inherit (a value follows each unless written `--opt=value`): the ones that load code
 * into every thread before its entry, and the ones that say what the main program is (`--input-type=module` of a
 * host run as `node --input-type=module -e …`, `--eval`, `--print`): Node refuses a worker whose entry is a file
 * under them ("--input-type can only be used with string input").
 */
const PRELOAD = new Set(["--import", "--require", "-r", "--loader", "--experimental-loader", "--input-type", "--eval", "-e", "--print", "-p"]);

/**
 * The Node options a rawtrace worker starts with: the process's own (`process.execArgv`: warnings, source maps,
 * conditions and the like carry over) without the ones that preload modules into the thread (`--import`, `--require`,
 * `--loader`) or give the main program's source (`--input-type`, `--eval`, `--print`). A worker's entry is plain JavaScript, or registers its own loader ({@link workerEntry}), so preloads
 * are only cost: under `tsx` (`node --import tsx`, which a host program or our bench may run) each one loads tsx
 * again, ≈ 0.17 CPU s and 0.12 s of start-up per worker on the 2-core VM (docs/performance/gzip.md,
 * "Worker start-up").
 */
export function workerExecArgv(argv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf("=");
    const name = a.startsWith("--") && eq > 0 ? a.slice(0, eq) : a;
    if (PRELOAD.has(name)) {
      if (name === a) i++; // the value is the next argument
      continue;
    }
    out.push(a);
  }
  return out;
}

/**
 * Options of `process.execArgv` that Node refused for a worker in this process: V8's (`--max-old-space-size`,
 * `--expose-gc`, `--stack-size`…) and per-process ones (`--title`, `--v8-pool-size`). Node rejects them in a worker's
 * `execArgv` (ERR_WORKER_INVALID_EXEC_ARGV) because they already hold for every thread of the process: V8's flags
 * are process-wide, so a worker's heap limit is the one `--max-old-space-size` set.
 */
const refused = new Set<string>();

/** Drops the {@link refused} options from `argv`, with the values written after them as separate arguments. */
function withoutRefused(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!refused.has(a)) {
      out.push(a);
      continue;
    }
    // In execArgv, an argument not starting with "-" is the value of the option before it.
    while (i + 1 < argv.length && !argv[i + 1].startsWith("-")) i++;
  }
  return out;
}

/** The options that an ERR_WORKER_INVALID_EXEC_ARGV message lists ("…: --a, --b=1"). */
export function invalidExecArgv(message: string): string[] {
  const at = message.indexOf(": ");
  return at < 0 ? [] : message.slice(at + 2).split(", ").filter((a) => a.startsWith("-"));
}

/**
 * Starts a rawtrace worker thread on `entry` ({@link workerEntry}) with the process's options ({@link workerExecArgv}).
 * Options Node refuses for a worker (V8's and per-process ones, which already apply to every thread) are dropped
 * and remembered for the next start, so `node --max-old-space-size=8192 rawtrace convert --jobs 4` runs its
 * workers instead of failing every file.
 */
export function startWorker(entry: URL, options: Omit<WorkerOptions, "execArgv"> = {}, argv: readonly string[] = process.execArgv): Worker {
  for (;;) {
    const execArgv = withoutRefused(workerExecArgv(argv));
    try {
      const w = new Worker(entry, { ...options, execArgv });
      loaded.set(w, new Promise<void>((resolve) => {
        const onMessage = (m: unknown) => {
          if (m !== WORKER_READY) return;
          w.off("message", onMessage);
          resolve();
        };
        w.on("message", onMessage);
        w.once("exit", () => resolve());
        w.once("error", () => resolve());
      }));
      return w;
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw e;
      const names = invalidExecArgv(err.message).filter((a) => !refused.has(a) && execArgv.includes(a));
      if (names.length === 0) throw e; // nothing more to drop: Node's own message stands
      for (const a of names) refused.add(a);
    }
  }
}

/** What a worker entry posts to its parent once its modules are evaluated (src/node/worker.ts, gzip_worker.ts). */
export const WORKER_READY = "rawtrace:worker-ready";

/** Per worker {@link startWorker} made: settles when it has posted {@link WORKER_READY}, exited or failed. */
const loaded = new WeakMap<Worker, Promise<void>>();

/** The longest {@link stopWorker} waits for a worker to finish loading before it terminates it anyway, ms. */
export const LOAD_WAIT_MS = 10_000;

/**
 * Terminates worker `w`, but not while Node is still evaluating its modules: `terminate()` then (Node 20) leaks file
 * descriptors (a loop terminating plain workers 2 ms after "online": 20 → 78–91 descriptors over 150) and can abort
 * the whole process (V8 "Check failed: (location_) != nullptr" in SourceTextModule::ExecuteAsyncModule, seen in the
 * same loop). So it waits until the worker has said it is loaded ({@link WORKER_READY}), has exited, or
 * {@link LOAD_WAIT_MS} have passed — a pool closed right after it started a worker waits for that worker's start
 * (≈ 50 ms), no longer.
 */
export async function stopWorker(w: Worker): Promise<void> {
  const ready = loaded.get(w);
  if (ready) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ready, new Promise<void>((resolve) => (timer = setTimeout(resolve, LOAD_WAIT_MS)))]);
    clearTimeout(timer);
  }
  await w.terminate();
}
