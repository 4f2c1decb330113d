/**
 * How rawtrace starts its worker threads (the conversion pool, src/node/pool.ts, and the gzip pool,
 * src/node/gzip_pool.ts): which file a worker runs and with which Node options.
 */

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

/** Options that load code into every thread before its entry (a value follows each unless written `--opt=value`). */
const PRELOAD = new Set(["--import", "--require", "-r", "--loader", "--experimental-loader"]);

/**
 * The Node options a rawtrace worker starts with: the process's own (`process.execArgv`: memory limits, profiling
 * and the like carry over) without the ones that preload modules into the thread (`--import`, `--require`,
 * `--loader`). A worker's entry is plain JavaScript, or registers its own loader ({@link workerEntry}), so preloads
 * are only cost: under `tsx` (`node --import tsx`, which a host program or our bench may run) each one loads tsx
 * again, ≈ 0.17 CPU s and 0.12 s of start-up per worker on the 2-core VM (docs/performance.md, "gzip in parallel
 * blocks").
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
