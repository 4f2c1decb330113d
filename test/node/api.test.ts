/**
 * The `rawtrace/node` API surface: convertStream (plain and gzip, with a slow consumer) equals convertFile; the
 * bundle (dist/node: cli.js, worker.js, index.js, built by scripts/build.mjs) runs the worker pool from its own
 * entry point, through the package's `exports` and the CLI, and exits on its own.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { convertBatch, convertFile, convertStream, createEngine, fileSource, merge, stepStats, timelineStats, stepsCsv, gapsCsv } from "../../src/node/index.js";
import { readdirSync, mkdirSync, statSync } from "node:fs";
import { sampleDump } from "../helpers/sample_dump.js";
import { generate } from "../../bench/generate.js";
import { infoFile } from "../../src/node/convert.js";
import { stats, statsFiles } from "../../src/node/stats.js";
import { WorkerPool } from "../../src/node/pool.js";
import { xspaceProfilePath } from "../../src/node/convert.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-api-"));
const input = join(tmp, "in.rawtrace");
writeFileSync(input, readFileSync(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace")));

test("convertStream equals convertFile, plain and gzip, with back pressure from a slow consumer", async () => {
  await convertFile(input, join(tmp, "file.json"));
  const want = readFileSync(join(tmp, "file.json"));
  const chunks: Buffer[] = [];
  const slow = new Writable({
    highWaterMark: 1024,
    write(chunk, _enc, done) {
      chunks.push(Buffer.from(chunk));
      setTimeout(done, 0);
    },
  });
  const r = await convertStream(input, slow);
  assert.ok(Buffer.concat(chunks).equals(want));
  assert.is(r.bytesOut, want.length);
  const gz: Buffer[] = [];
  const pass = new PassThrough();
  pass.on("data", (b) => gz.push(b));
  await convertStream(input, pass, { gzip: true });
  assert.ok(gunzipSync(Buffer.concat(gz)).equals(want));
});

test("convertStream rejects when the stream fails", async () => {
  const broken = new Writable({
    write(_c, _e, done) {
      done(new Error("disk on fire"));
    },
  });
  broken.on("error", () => {});
  const e = await convertStream(input, broken).catch((x) => x);
  assert.is(e.name, "IO");
  assert.match(e.message, /disk on fire/);
});

test("an onProgress that throws: convertFile and convertStream reject with that very error (not IO), and leave no output", async () => {
  class Mine extends Error {}
  const out = join(tmp, "callback.json");
  const e = await convertFile(input, out, { onProgress: () => { throw new Mine("callback bug"); } }).catch((x: unknown) => x);
  assert.ok(e instanceof Mine, String(e));
  assert.not.ok(existsSync(out));
  assert.equal(readdirSync(tmp).filter((f) => f.startsWith(".callback.json")), [], "no temporary or lock left");
  const sink = new PassThrough();
  sink.resume();
  const s = await convertStream(input, sink, { onProgress: () => { throw new Mine("stream callback bug"); } }).catch((x: unknown) => x);
  assert.ok(s instanceof Mine, String(s));
});

test("async callbacks: a rejected promise from onFile, onProgress or an Engine sink fails the call like a throw, never as an unhandled rejection; a resolved one is waited for", async () => {
  class Mine extends Error {}
  const unhandled: unknown[] = [];
  const note = (e: unknown) => unhandled.push(e);
  process.on("unhandledRejection", note);
  try {
    // convertBatch: every file still converted, then the batch rejects with the callback's error (it ended the
    // process before, with two files never converted).
    const dir = mkdtempSync(join(tmp, "async-onfile-"));
    const second = join(tmp, "in-async-2.rawtrace");
    writeFileSync(second, readFileSync(input));
    const seen: string[] = [];
    const b = await convertBatch([input, second], {
      outDir: dir, jobs: 1, onFile: async (f) => { seen.push(f.file); throw new Mine("async onFile bug"); },
    }).catch((x: unknown) => x);
    assert.ok(b instanceof Mine, String(b));
    assert.is(seen.length, 2);
    assert.is(readdirSync(dir).filter((f) => f.endsWith(".json")).length, 2, "both converted");
    const p = await convertBatch([input], {
      outDir: mkdtempSync(join(tmp, "async-progress-")), jobs: 1, progressMs: 1,
      onProgress: async () => { throw new Mine("async onProgress bug"); },
    }).catch((x: unknown) => x);
    assert.ok(p instanceof Mine, String(p));
    // convertFile and convertStream: an async onProgress's rejection is that call's error, no output left (it was
    // dropped unhandled and ended the process).
    const out = join(tmp, "async-progress.json");
    const f = await convertFile(input, out, { onProgress: async () => { throw new Mine("async file progress"); } }).catch((x: unknown) => x);
    assert.ok(f instanceof Mine, String(f));
    assert.not.ok(existsSync(out));
    const sink = new PassThrough();
    sink.resume();
    const s = await convertStream(input, sink, { onProgress: () => Promise.reject(new Mine("async stream progress")) }).catch((x: unknown) => x);
    assert.ok(s instanceof Mine, String(s));
    // Engine.convert: a sink's rejection fails the conversion; a slow async sink is waited for, window by window.
    const eng = await createEngine();
    const e = await eng.convert(fileSource(input), async () => { throw new Mine("async sink bug"); }).catch((x: unknown) => x);
    assert.ok(e instanceof Mine, String(e));
    const parts: Buffer[] = [];
    let inFlight = 0;
    let most = 0;
    await eng.convert(fileSource(input), (bytes) => {
      parts.push(Buffer.from(bytes)); // the view is valid during the call only
      inFlight++;
      most = Math.max(most, inFlight);
      return new Promise<void>((ok) => setTimeout(() => { inFlight--; ok(); }, 1));
    });
    assert.ok(Buffer.concat(parts).equals(readFileSync(join(tmp, "file.json"))), "the same bytes");
    assert.ok(most >= 1 && inFlight === 0, "every write settled before convert() resolved");
    await new Promise((ok) => setTimeout(ok, 20));
    assert.equal(unhandled, [], "no unhandled rejection");
  } finally {
    process.off("unhandledRejection", note);
  }
});

test("a source whose read() returns a count that is not a whole number of bytes within what was asked: API_MISUSE naming it (NaN looped for ever)", async () => {
  const eng = await createEngine();
  for (const bad of [Number.NaN, 0.5, -1, 1 << 30]) {
    const src = { name: "custom", size: 100, open: () => ({ read: () => bad }) };
    const e = await Promise.race([
      eng.convert(src, () => {}).catch((x: unknown) => x),
      new Promise((ok) => setTimeout(() => ok("hung"), 5000)),
    ]);
    assert.ok(e instanceof Error && (e as { code?: string }).code === "API_MISUSE", `${bad}: ${String(e)}`);
    assert.match((e as Error).message, `read() returned ${bad}`);
  }
});

test("arguments and options of the wrong type are USAGE naming them, before any output (audit: TypeErrors, a floored or converted jobs, steps {} as a pattern)", async () => {
  const usage = async (what: string, f: () => unknown, mentions: string) => {
    let e: unknown;
    try {
      await f();
    } catch (x) {
      e = x;
    }
    assert.ok(e instanceof Error && (e as { code?: string }).code === "USAGE", `${what}: ${String(e)}`);
    assert.match((e as Error).message, mentions, what);
  };
  const out = join(tmp, "typed.json");
  await usage("convertFile output undefined", () => convertFile(input, undefined as unknown as string), "convertFile: the output must be a file path, not undefined");
  await usage("convertFile input ''", () => convertFile("", out), "convertFile: the input must be a file path, not an empty string");
  await usage("infoFile input 7", () => infoFile(7 as unknown as string), "infoFile: the input must be a file path, not number");
  await usage("convertStream output null", () => convertStream(input, null as unknown as Writable), "convertStream: the output must be a Writable stream, not null");
  await usage("gzipLevel '5'", () => convertFile(input, join(tmp, "typed.json.gz"), { gzipLevel: "5" as unknown as number }), `not "5" (a string)`);
  for (const jobs of [2.5, "4"]) {
    await usage(`jobs ${jobs}`, () => convertBatch([input], { outDir: tmp, jobs: jobs as number }), `jobs must be a whole number from 1 to 1024, not ${typeof jobs === "string" ? `"4" (a string)` : "2.5"}`);
  }
  await usage("steps {}", () => convertFile(input, out, { steps: {} as unknown as string }), "steps must be a RegExp or its source text, not a value of type object");
  assert.not.ok(existsSync(out), "no output");
  await usage("outDir '-'", () => convertBatch([input], { outDir: "-" }), "outDir '-': outDir names a folder, not standard output");
  // Exploratory testing of 2026-12-02: TypeErrors from deep inside, and values taken silently as others.
  const X = (v: unknown) => v as never;
  await usage("stats 5", () => stats(X(5)), "stats: the input must be a file path or a ByteSource, not 5");
  await usage("statsFiles 'x'", () => statsFiles(X("x")), `statsFiles: inputs must be an array of paths, not "x" (a string)`);
  await usage("merge output 5", () => merge([input], X(5)), "merge: the output must be a file path, not number");
  await usage("merge output ''", () => merge([input], ""), "merge: the output must be a file path, not an empty string");
  await usage("merge no output", () => merge([input], X(undefined)), "merge: the output must be a file path, not undefined");
  await usage("outDir 5", () => convertBatch([input], { outDir: X(5) }), "convertBatch: the outDir must be a file path, not number");
  await usage("gzip 'no'", () => convertFile(input, join(tmp, "typed-gz.json"), { gzip: X("no") }), `convertFile: gzip must be true or false, not "no" (a string)`);
  await usage("signal", () => convertFile(input, join(tmp, "typed-sig.json"), X({ signal: AbortSignal.abort() })), "convertFile: there is no signal option");
  await usage("minGapNs NaN", () => timelineStats(input, { gaps: true, minGapNs: NaN }), "timelineStats: minGapNs must be a number of ns ≥ 0, not NaN");
  await usage("minGapNs 'abc'", () => timelineStats(input, { gaps: true, minGapNs: X("abc") }), `not "abc" (a string)`);
  await usage("xspaceProfilePath host 5", () => xspaceProfilePath("x", 0n, X(5)), "xspaceProfilePath: the host name must be a string, not 5");
  await usage("new WorkerPool(null)", () => new WorkerPool(X(null)), "WorkerPool: the options must be an object, not null");
  await usage("merge options null", () => merge([input], join(tmp, "typed-m.json"), X(null)), "merge: the options must be an object, not null");
  await usage("batch output 5", () => convertBatch([input], { output: X(5) }), "convertBatch: the output must be a file path, not number");
  await usage("xspaceProfilePath logdir 5", () => xspaceProfilePath(X(5), 0n, "h"), "xspaceProfilePath: the log directory must be a path, not 5");
  const pool = new WorkerPool({ jobs: 1 });
  try {
    await usage("pool.convert({input})", () => pool.convert(X({ input })), "WorkerPool.convert: the output must be a file path, not undefined");
    await usage("pool.info(5)", () => pool.info(X(5)), "WorkerPool.info: the input must be a file path, not number");
    await usage("pool.stats options null", () => pool.stats(input, X(null)), "WorkerPool.stats: the options must be an object, not null");
    await usage("batch pool jobs -5", () => convertBatch([input], { outDir: join(tmp, "typed-dir"), pool, jobs: -5 }), "jobs must be a whole number from 1 to 1024, not -5");
  } finally {
    await pool.close();
  }
  assert.not.ok(existsSync(join(tmp, "typed-gz.json")) || existsSync(join(tmp, "typed-sig.json")) || existsSync(join(tmp, "typed-dir")), "nothing made");
  assert.not.ok(existsSync(join(process.cwd(), "-")), "no folder named '-'");
  // No input: nothing to convert, and no output folder made for it.
  const none = join(tmp, "no-inputs-dir");
  const r = await convertBatch([], { outDir: none });
  assert.is(r.files.length, 0);
  assert.not.ok(existsSync(none), "no folder made for no input");
});

const bundled = existsSync(join(ROOT, "dist/node/worker.js")) && existsSync(join(ROOT, "dist/node/index.js"));

test("the bundle: rawtrace/node through package exports runs its pool from dist/node/worker.js and exits", () => {
  if (!bundled) throw new Error("dist/node not built (node scripts/build.mjs)");
  const dir = join(tmp, "pkg");
  const script = join(ROOT, "dist", "api-probe.mjs");
  // Resolve "rawtrace/node" as a dependent package would: through package.json "exports".
  writeFileSync(script, `
    import { WorkerPool, stats, convertBatch } from "rawtrace/node";
    const pool = new WorkerPool({ jobs: 2 });
    const s = await stats(${JSON.stringify(input)}, { pool });
    const b = await convertBatch([${JSON.stringify(input)}], { pool, outDir: ${JSON.stringify(dir)} });
    await pool.close();
    console.log(JSON.stringify({ events: s.events, ok: b.ok }));`);
  try {
    const r = spawnSync(process.execPath, [script], { cwd: ROOT, encoding: "utf8", timeout: 60000 });
    assert.is(r.signal, null, "exited on its own");
    assert.is(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.ok(out.events > 0);
    assert.is(out.ok, 1);
    assert.ok(readFileSync(join(dir, "in.json")).equals(readFileSync(join(tmp, "file.json"))));
  } finally {
    rmSync(script, { force: true });
  }
});

test("the bundle imported in a host's own worker thread leaves its parentPort alone, and converts there", () => {
  if (!bundled) throw new Error("dist/node not built (node scripts/build.mjs)");
  const script = join(ROOT, "dist", "api-thread-probe.mjs");
  const out = join(tmp, "in-thread-of-host.json");
  // The host's worker imports rawtrace/node, then talks to its parent over its own messages.
  writeFileSync(script, `
    import { Worker } from "node:worker_threads";
    const w = new Worker(\`
      const { parentPort } = await import("node:worker_threads");
      const api = await import("rawtrace/node");
      const listeners = parentPort.listenerCount("message");
      const r = await api.convertFile(${JSON.stringify(input)}, ${JSON.stringify(out)}, { force: true });
      parentPort.postMessage({ listeners, events: r.events });
    \`, { eval: true, type: "module" });
    const got = [];
    w.on("message", (m) => got.push(m));
    w.on("exit", () => console.log(JSON.stringify(got)));`);
  try {
    const r = spawnSync(process.execPath, [script], { cwd: ROOT, encoding: "utf8", timeout: 60000 });
    assert.is(r.status, 0, r.stderr);
    const got = JSON.parse(r.stdout) as Array<{ listeners: number; events: number }>;
    assert.is(got.length, 1, r.stdout);
    assert.is(got[0].listeners, 0, "no listener of rawtrace's on the host's port");
    assert.ok(got[0].events > 0);
  } finally {
    rmSync(script, { force: true });
  }
});

test("the bundled CLI converts many files with workers, the same bytes as from source", () => {
  if (!bundled) throw new Error("dist/node not built (node scripts/build.mjs)");
  const second = join(tmp, "second.rawtrace");
  writeFileSync(second, sampleDump());
  const out = join(tmp, "cli-out");
  const r = spawnSync(process.execPath, ["dist/node/cli.js", "convert", input, second, "--out-dir", out, "--jobs", "2"], {
    cwd: ROOT, encoding: "utf8", timeout: 60000,
  });
  assert.is(r.signal, null);
  assert.is(r.status, 0, r.stderr);
  assert.ok(readFileSync(join(out, "in.json")).equals(readFileSync(join(tmp, "file.json"))));
  assert.match(r.stderr, /converted 2 of 2 files with 2 workers/);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("wrong output options are USAGE before any output is opened: no temporary file, no lock, the name free after", async () => {
  const dir = join(tmp, "opts");
  mkdirSync(dir);
  const cases: Array<[string, () => Promise<unknown>, RegExp]> = [
    ["convertFile gzipLevel 10", () => convertFile(input, join(dir, "o.json.gz"), { gzipLevel: 10 }), /gzip level must be a whole number from 0 to 9, not 10/],
    ["convertFile xspace to .gz", () => convertFile(input, join(dir, "x.xplane.pb.gz"), { format: "xspace" }), /XSpace output cannot be gzipped/],
    ["convertFile format perfetto", () => convertFile(input, join(dir, "p.json"), { format: "perfetto" as "chrome" }), /unknown output format 'perfetto'/],
    ["convertStream gzipLevel -1", () => convertStream(input, new PassThrough(), { gzip: true, gzipLevel: -1 }), /not -1/],
    ["convertStream xspace gzip", () => convertStream(input, new PassThrough(), { format: "xspace", gzip: true }), /cannot be gzipped/],
    ["convertBatch gzipLevel 1.5", () => convertBatch([input], { outDir: dir, gzip: true, gzipLevel: 1.5 }), /not 1.5/],
    ["merge gzipLevel 12", () => merge([input], join(dir, "m.json.gz"), { gzipLevel: 12 }), /not 12/],
    ["convertBatch output and outDir", () => convertBatch([input], { output: join(dir, "b.json"), outDir: dir }), /output and outDir: give one/],
    // The engine itself (createEngine().convert): a misspelt format used to fall back to Chrome JSON.
    ["engine.convert format bogus", async () => (await createEngine()).convert(fileSource(input), () => {}, { format: "bogus" as "chrome" }), /unknown output format 'bogus'/],
  ];
  for (const [what, run, message] of cases) {
    const e = await run().then(() => null, (x) => x);
    assert.ok(e, `${what}: refused`);
    assert.is(e.name, "USAGE", `${what}: ${e.message}`);
    assert.match(e.message, message);
    assert.equal(readdirSync(dir), [], `${what}: nothing left in the folder`);
  }
  // The same name converts at once afterwards (no stale lock held by this process).
  await convertFile(input, join(dir, "o.json.gz"), { gzipLevel: 1 });
  assert.ok(gunzipSync(readFileSync(join(dir, "o.json.gz"))).length > 0);
});

test("convertFile XSpace into a folder that does not exist makes it (as the CLI and convertBatch); Chrome JSON is refused", async () => {
  const base = join(tmp, "nofolder");
  const r = await convertFile(input, join(base, "a/b/x.xplane.pb"), { format: "xspace" });
  assert.ok(r.events > 0);
  assert.ok(readFileSync(join(base, "a/b/x.xplane.pb")).length > 0);
  const e = await convertFile(input, join(base, "c/x.json")).then(() => null, (x) => x);
  assert.is(e?.name, "IO");
  assert.match(e.message, /does not exist/);
  assert.not.ok(existsSync(join(base, "c")));
});

test("an output named .JSON.GZ is gzipped by convertFile, convertBatch and merge as .json.gz is (gzip by name, any case)", async () => {
  const dir = join(tmp, "upper");
  mkdirSync(dir);
  await convertFile(input, join(dir, "a.JSON.GZ"));
  await convertBatch([input], { output: join(dir, "b.Json.Gz") });
  await merge([input], join(dir, "m.JSON.GZ"));
  for (const f of ["a.JSON.GZ", "b.Json.Gz", "m.JSON.GZ"]) {
    const bytes = readFileSync(join(dir, f));
    assert.equal([bytes[0], bytes[1]], [0x1f, 0x8b], f);
    assert.ok(Array.isArray(JSON.parse(gunzipSync(bytes).toString("utf8")).traceEvents), f);
  }
  const e = await convertFile(input, join(dir, "x.xplane.pb.GZ"), { format: "xspace" }).then(() => null, (x) => x);
  assert.is(e?.name, "USAGE");
});

test("convertBatch with an out-dir that is a file: IO naming it (a RawtraceError, not Node's EEXIST)", async () => {
  const file = join(tmp, "not-a-folder");
  writeFileSync(file, "x");
  const e = await convertBatch([input], { outDir: file }).then(() => null, (x) => x);
  assert.is(e?.name, "IO");
  assert.match(e.message, /is a file, not a folder/);
});

test("step and gap reports are exported (what stats --steps / --gaps compute) and close their input", async () => {
  const fds = () => readdirSync("/proc/self/fd").length;
  const before = fds();
  const steps = await stepStats(input, { steps: "train_step" });
  assert.ok(steps.length > 0, "train_step ranges of the H100 sample");
  const t = await timelineStats(input, { steps: "train_step", gaps: true, minGapNs: 0 });
  assert.is(t.steps!.length, steps.length);
  assert.ok(t.gaps!.length > 0);
  assert.match(stepsCsv([{ input: "in.rawtrace", steps }]), /^file,step,/);
  assert.match(gapsCsv([{ input: "in.rawtrace", gaps: t.gaps! }]), /^file,device,start_ns,/);
  assert.is(fds(), before, "no descriptor left open");
});

test("convertFile, infoFile and stats run on the caller's thread but give its event loop a turn after each 4 MiB window (they held it for a whole conversion)", async () => {
  const big = join(tmp, "windows.rawtrace");
  generate(300000, big);
  const bytes = statSync(big).size;
  const windows = Math.floor(bytes / (4 << 20)); // whole windows of one pass (23.5 MB: 5)
  assert.ok(windows >= 5, String(bytes));
  let ticks = 0;
  let on = false;
  const tick = () => {
    ticks++;
    if (on) setImmediate(tick);
  };
  const count = async (what: string, fn: () => Promise<unknown>) => {
    ticks = 0;
    on = true;
    setImmediate(tick);
    await fn();
    on = false;
    // One turn per window at least (every pass yields; before, 1–3 turns in all, from the output's own I/O).
    assert.ok(ticks >= windows, `${what}: ${ticks} turns for ${windows} windows`);
  };
  await count("convertFile chrome", () => convertFile(big, join(tmp, "windows.json")));
  await count("convertFile xspace", () => convertFile(big, join(tmp, "windows_xspace"), { format: "xspace" }));
  await count("infoFile", () => infoFile(big));
  await count("stats", () => stats(big));
  rmSync(big);
});

test.run();
