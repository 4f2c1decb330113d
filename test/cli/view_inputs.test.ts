/**
 * `rawtrace view` takes directories and globs as every command does (README "Use"; src/node/inputs.ts): the page URL it
 * prints names each dump found once, and a folder or pattern with no dump is said (and is an error when nothing is
 * left to serve). The built CLI, without a browser.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const dir = mkdtempSync(join(tmpdir(), "rawtrace-view-inputs-"));

test.after(() => rmSync(dir, { recursive: true, force: true }));

/** The files the page URL that `view … --no-open --port 0` prints names, and its stderr; the server is stopped. */
function served(args: string[]): Promise<{ files: string[]; stderr: string }> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [CLI, "view", ...args, "--no-open", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let files: string[] | null = null;
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = /^rawtrace viewer: (\S+)$/m.exec(out);
      if (!m || files) return;
      files = new URL(m[1]).searchParams.getAll("file").map((f) => f.replace(/^\/files\/\d+\//, ""));
      child.kill("SIGTERM");
    });
    child.once("exit", (code) => (files ? res({ files, stderr: err }) : rej(new Error(`view exited ${code} before serving: ${out}${err}`))));
  });
}

test("a directory and a glob: every dump they hold, each once, in natural order", async () => {
  mkdirSync(join(dir, "run"));
  copyFileSync(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"), join(dir, "run/rank10.rawtrace"));
  copyFileSync(join(ROOT, "samples/alexnet_a100_rank0.rawtrace"), join(dir, "run/rank2.rawtrace"));
  mkdirSync(join(dir, "empty"));
  const a = await served([join(dir, "run")]);
  assert.equal(a.files.map(decodeURIComponent), ["rank2.rawtrace", "rank10.rawtrace"]);
  const b = await served([join(dir, "run/*.rawtrace"), join(dir, "run/rank2.rawtrace"), join(dir, "empty")]);
  assert.equal(b.files.map(decodeURIComponent), ["rank2.rawtrace", "rank10.rawtrace"]);
  assert.match(b.stderr, /empty: no \.rawtrace file matches/);
});

test("nothing to serve: an error naming what matched nothing, exit 4", () => {
  const r = spawnSync(process.execPath, [CLI, "view", join(dir, "nothing/*.rawtrace"), "--no-open", "--port", "0"], { encoding: "utf8", timeout: 30_000 });
  assert.is(r.status, 4, r.stderr);
  assert.match(r.stderr, /nothing\/\*\.rawtrace: no \.rawtrace file matches/);
});

test.run();
