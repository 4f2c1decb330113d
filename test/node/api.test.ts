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
import { convertFile, convertStream } from "../../src/node/index.js";
import { sampleDump } from "../helpers/sample_dump.js";

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

test.run();
