/**
 * Outputs never destroy (src/node/output.ts, docs/errors.md "Outputs and inputs"), through the built CLI
 * (dist/node/cli.js): `-o -`, devices, FIFOs and symlinks; inputs never overwritten; exclusive temporaries that
 * ignore planted symlinks and leave a user's own `<out>.tmp` alone; the lock against a concurrent run; full disks
 * (tmpfs when mounting is allowed, `ulimit -f` always); SIGINT/SIGTERM mid-conversion; permission failures as an
 * unprivileged user.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync, copyFileSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync,
  symlinkSync, writeFileSync,
} from "node:fs";
import { constants as osConstants, hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { generate } from "../../bench/generate.js";
import { conversionHold } from "../helpers/conversion_hold.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const SAMPLE = join(ROOT, "samples/alexnet_a100_rank0.rawtrace");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-output-"));
chmodSync(tmp, 0o755);
/** A larger input (≈ 30 MB of JSON) so a conversion runs long enough to be interrupted or to fill a small disk. */
const BIG = join(tmp, "big.rawtrace");
generate(300000, BIG);

const cli = (args: string[], opts: { cwd?: string; input?: string } = {}) =>
  spawnSync(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? tmp, encoding: "utf8", timeout: 120000, input: opts.input });

let n = 0;
function dir(): string {
  const d = join(tmp, `case${n++}`);
  mkdirSync(d);
  chmodSync(d, 0o777);
  writeFileSync(join(d, "in.rawtrace"), readFileSync(SAMPLE));
  return d;
}
const expected = (() => {
  const d = dir();
  const r = cli(["convert", "in.rawtrace", "-o", "ref.json"], { cwd: d });
  assert.is(r.status, 0, r.stderr);
  return readFileSync(join(d, "ref.json"));
})();

test("-o - writes the trace to standard output and creates no file named '-'", () => {
  const d = dir();
  const r = spawnSync(process.execPath, [CLI, "convert", "in.rawtrace", "-o", "-"], { cwd: d, timeout: 60000 });
  assert.is(r.status, 0, String(r.stderr));
  assert.ok(Buffer.compare(r.stdout, expected) === 0, "stdout carries the same bytes as a file conversion");
  assert.not.ok(existsSync(join(d, "-")));
  assert.equal(readdirSync(d).sort(), ["in.rawtrace"]);
});

test("--json with -o - is a usage error (both want standard output)", () => {
  const d = dir();
  for (const cmd of ["convert", "merge"]) {
    const r = cli([cmd, "in.rawtrace", "-o", "-", "--json"], { cwd: d });
    assert.is(r.status, 2, r.stderr);
    assert.match(r.stderr, "--json");
  }
  assert.equal(readdirSync(d).sort(), ["in.rawtrace"]);
});

test("XSpace log directory: a final file that exists is kept (exit 3) and no hidden temporary is left", () => {
  const d = dir();
  const first = cli(["convert", "in.rawtrace", "--format", "xspace", "-o", "logs"], { cwd: d });
  assert.is(first.status, 0, first.stderr);
  const list = () => spawnSync("find", ["logs"], { cwd: d, encoding: "utf8" }).stdout.trim().split("\n").sort();
  const before = list();
  assert.ok(before.some((f) => f.endsWith(".xplane.pb")), before.join(" "));
  const again = cli(["convert", "in.rawtrace", "--format", "xspace", "-o", "logs"], { cwd: d });
  assert.is(again.status, 3, again.stderr);
  assert.equal(list(), before, "nothing new, no hidden .rawtrace-* or temporary left");
  const forced = cli(["convert", "in.rawtrace", "--format", "xspace", "-o", "logs", "--force"], { cwd: d });
  assert.is(forced.status, 0, forced.stderr);
  assert.equal(list(), before);
});

test("-o /dev/stdout and -o /dev/null are written, never replaced", () => {
  const d = dir();
  const r = spawnSync(process.execPath, [CLI, "convert", "in.rawtrace", "-o", "/dev/stdout"], { cwd: d, timeout: 60000 });
  assert.is(r.status, 0, String(r.stderr));
  assert.ok(Buffer.compare(r.stdout, expected) === 0);
  const before = statSync("/dev/null");
  const z = cli(["convert", "in.rawtrace", "-o", "/dev/null"], { cwd: d });
  assert.is(z.status, 0, z.stderr);
  const after = statSync("/dev/null");
  assert.ok(after.isCharacterDevice(), "/dev/null is still a character device");
  assert.is(after.ino, before.ino);
  assert.is(after.rdev, before.rdev);
  assert.equal(readdirSync(d).sort(), ["in.rawtrace"]);
});

test("a FIFO output is written directly and stays a FIFO", async () => {
  const d = dir();
  const fifo = join(d, "pipe.json");
  assert.is(spawnSync("mkfifo", [fifo]).status, 0);
  const reader = spawn("cat", [fifo]);
  const chunks: Buffer[] = [];
  reader.stdout.on("data", (c: Buffer) => chunks.push(c));
  const readerDone = new Promise((res) => reader.on("close", res));
  const w = spawn(process.execPath, [CLI, "convert", "in.rawtrace", "-o", fifo], { cwd: d });
  const code = await new Promise((res) => w.on("close", res));
  await readerDone;
  assert.is(code, 0);
  assert.ok(Buffer.compare(Buffer.concat(chunks), expected) === 0);
  assert.ok(lstatSync(fifo).isFIFO());
  assert.equal(readdirSync(d).sort(), ["in.rawtrace", "pipe.json"]);
});

test("a symlink output is followed: the target gets the trace, the link stays a link", () => {
  const d = dir();
  symlinkSync("target.json", join(d, "link.json"));
  const r = cli(["convert", "in.rawtrace", "-o", "link.json"], { cwd: d });
  assert.is(r.status, 0, r.stderr);
  assert.ok(lstatSync(join(d, "link.json")).isSymbolicLink());
  assert.ok(Buffer.compare(readFileSync(join(d, "target.json")), expected) === 0);
  // Existing target: only with --force, and the link still stays.
  const again = cli(["convert", "in.rawtrace", "-o", "link.json"], { cwd: d });
  assert.is(again.status, 3, again.stderr);
  const forced = cli(["convert", "in.rawtrace", "-o", "link.json", "--force"], { cwd: d });
  assert.is(forced.status, 0, forced.stderr);
  assert.ok(lstatSync(join(d, "link.json")).isSymbolicLink());
  assert.equal(readdirSync(d).sort(), ["in.rawtrace", "link.json", "target.json"]);
});

test("an output that is an input is refused with exit 2, --force or not: same path, hard link, symlink", () => {
  const d = dir();
  const original = readFileSync(join(d, "in.rawtrace"));
  linkSync(join(d, "in.rawtrace"), join(d, "hard.rawtrace"));
  symlinkSync("in.rawtrace", join(d, "soft.json"));
  for (const out of ["in.rawtrace", "hard.rawtrace", "soft.json", "./in.rawtrace"]) {
    for (const force of [[], ["--force"]]) {
      const r = cli(["convert", "in.rawtrace", "-o", out, ...force], { cwd: d });
      assert.is(r.status, 2, `${out} ${force}: ${r.stderr}`);
      assert.match(r.stderr, out);
      assert.match(r.stderr, "in.rawtrace");
    }
  }
  // merge too
  const m = cli(["merge", "in.rawtrace", "-o", "hard.rawtrace", "--force"], { cwd: d });
  assert.is(m.status, 2, m.stderr);
  assert.ok(Buffer.compare(readFileSync(join(d, "in.rawtrace")), original) === 0, "the dump is intact");
  assert.equal(readdirSync(d).sort(), ["hard.rawtrace", "in.rawtrace", "soft.json"]);
});

test("a default output name never equals an input: trace.json converts to trace.json.json", () => {
  const d = dir();
  writeFileSync(join(d, "trace.json"), readFileSync(SAMPLE));
  const r = cli(["convert", "trace.json"], { cwd: d });
  assert.is(r.status, 0, r.stderr);
  assert.ok(Buffer.compare(readFileSync(join(d, "trace.json")), readFileSync(SAMPLE)) === 0);
  assert.ok(existsSync(join(d, "trace.json.json")));
  // Two inputs where one's default is the other: a.rawtrace's default a.json is an input.
  writeFileSync(join(d, "a.rawtrace"), readFileSync(SAMPLE));
  writeFileSync(join(d, "a.json"), readFileSync(SAMPLE));
  const two = cli(["convert", "a.rawtrace", "a.json"], { cwd: d });
  assert.is(two.status, 0, two.stderr);
  assert.ok(Buffer.compare(readFileSync(join(d, "a.json")), readFileSync(SAMPLE)) === 0);
  assert.ok(existsSync(join(d, "a.rawtrace.json")));
  assert.ok(existsSync(join(d, "a.json.json")));
});

test("planted <out>.tmp symlink is ignored (victim intact); a user's own <out>.tmp survives a failed run", () => {
  const d = dir();
  writeFileSync(join(d, "victim"), "precious");
  symlinkSync(join(d, "victim"), join(d, "out.json.tmp"));
  const r = cli(["convert", "in.rawtrace", "-o", "out.json"], { cwd: d });
  assert.is(r.status, 0, r.stderr);
  assert.is(readFileSync(join(d, "victim"), "utf8"), "precious");
  assert.ok(lstatSync(join(d, "out.json.tmp")).isSymbolicLink());
  // A failing run (bad input) must not delete the user's own file of the old temporary name.
  writeFileSync(join(d, "bad.rawtrace"), "not a dump at all, long enough to be read");
  writeFileSync(join(d, "mine.json.tmp"), "mine");
  const bad = cli(["convert", "bad.rawtrace", "-o", "mine.json"], { cwd: d });
  assert.is(bad.status, 1, bad.stderr);
  assert.is(readFileSync(join(d, "mine.json.tmp"), "utf8"), "mine");
  assert.equal(readdirSync(d).sort(), ["bad.rawtrace", "in.rawtrace", "mine.json.tmp", "out.json", "out.json.tmp", "victim"]);
  assert.is(statSync(join(d, "out.json")).mode & 0o777, 0o666 & ~process.umask());
});

test("a lock held by a live run refuses a second run (exit 3); a stale lock is taken over", () => {
  const d = dir();
  writeFileSync(join(d, "out.json.lock"), `${process.pid} ${hostname()}\n`);
  const r = cli(["convert", "in.rawtrace", "-o", "out.json", "--force"], { cwd: d });
  assert.is(r.status, 3, r.stderr);
  assert.match(r.stderr, `being written by rawtrace pid ${process.pid}`);
  assert.not.ok(existsSync(join(d, "out.json")));
  assert.ok(existsSync(join(d, "out.json.lock")), "another run's lock is not removed");
  // A lock whose process is gone (pid 2^22 + 1 is above Linux's pid_max limit… use a finished child's pid).
  const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
  writeFileSync(join(d, "out.json.lock"), `${dead} ${hostname()}\n`);
  const s = cli(["convert", "in.rawtrace", "-o", "out.json"], { cwd: d });
  assert.is(s.status, 0, s.stderr);
  assert.equal(readdirSync(d).sort(), ["in.rawtrace", "out.json"]);
});

test("two processes converting to one output at once: the reported result and the final file agree", async () => {
  const d = dir();
  writeFileSync(join(d, "small.rawtrace"), readFileSync(SAMPLE));
  const a = spawn(process.execPath, [CLI, "convert", BIG, "-o", "out.json", "--force"], { cwd: d });
  const aDone = new Promise<number>((res) => a.on("close", (c) => res(c ?? -1)));
  // Start the second once the first holds the output (its lock exists).
  for (let i = 0; i < 2000 && !existsSync(join(d, "out.json.lock")); i++) await new Promise((r) => setTimeout(r, 5));
  const b = spawnSync(process.execPath, [CLI, "convert", "small.rawtrace", "-o", "out.json", "--force"], { cwd: d, encoding: "utf8" });
  const codeA = await aDone;
  assert.is(codeA, 0);
  const final = readFileSync(join(d, "out.json"), "utf8");
  const traceName = /"traceName":\s*"([^"]*)"/.exec(final)?.[1];
  if (b.status === 3) {
    assert.match(b.stderr, "being written by");
    assert.is(traceName, "big.rawtrace", "the run that succeeded owns the file");
  } else {
    // The first had already finished: the second ran alone and its trace is the one in place.
    assert.is(b.status, 0, b.stderr);
    assert.is(traceName, "small.rawtrace");
  }
  assert.equal(readdirSync(d).sort(), ["in.rawtrace", "out.json", "small.rawtrace"]);
});

function fullDisk(what: string, args: string[], mkdirOut: (d: string) => string, limit: "tmpfs" | "ulimit"): void {
  const d = dir();
  const out = mkdirOut(d);
  const r = limit === "ulimit"
    ? spawnSync("bash", ["-c", `ulimit -f 64; exec "${process.execPath}" "${CLI}" "$@"`, "rawtrace", ...args.map((a) => a.replace("OUT", out))], { cwd: d, encoding: "utf8", timeout: 120000 })
    : cli(args.map((a) => a.replace("OUT", out)), { cwd: d });
  assert.is(r.status, 4, `${what} (${limit}): ${r.stderr}`);
  assert.match(r.stderr, out, `${what}: names the output`);
  assert.match(r.stderr, limit === "tmpfs" ? "disk full" : "file size limit");
  const left = spawnSync("find", [limit === "tmpfs" ? out.replace(/\/[^/]*$/, "") : d, "-type", "f", "-newer", join(d, "in.rawtrace")], { encoding: "utf8" }).stdout.trim();
  assert.is(left, "", `${what}: nothing partial left`);
}

const OUTPUT_KINDS: Array<[string, string[]]> = [
  ["Chrome JSON", ["convert", BIG, "-o", "OUT/o.json"]],
  [".json.gz", ["convert", BIG, "-o", "OUT/o.json.gz"]],
  ["XSpace file", ["convert", BIG, "--format", "xspace", "-o", "OUT/o.xplane.pb"]],
  ["XSpace logdir", ["convert", BIG, "--format", "xspace", "-o", "OUT/logdir"]],
  ["batch --out-dir", ["convert", BIG, "--out-dir", "OUT/batch"]],
  ["merge", ["merge", BIG, "-o", "OUT/m.json"]],
  ["merge xspace", ["merge", BIG, "--format", "xspace", "-o", "OUT/mx"]],
];

test("full disk (ulimit -f, EFBIG): every output kind exits 4, names the output, leaves nothing", () => {
  for (const [what, args] of OUTPUT_KINDS) {
    fullDisk(what, args, (d) => {
      mkdirSync(join(d, "out"));
      return join(d, "out");
    }, "ulimit");
  }
});

const mnt = join(tmp, "mnt");
mkdirSync(mnt);
const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt]).status === 0;

test("full disk (1 MiB tmpfs, ENOSPC): every output kind exits 4, names the output, leaves nothing", () => {
  if (!mounted) {
    console.log("  (skipped: mounting a tmpfs is not permitted here; the ulimit case covers the same code)");
    return;
  }
  for (const [what, args] of OUTPUT_KINDS) {
    fullDisk(what, args, () => {
      const out = join(mnt, `k${n++}`);
      mkdirSync(out);
      return out;
    }, "tmpfs");
  }
  const df = spawnSync("df", ["--output=used", mnt], { encoding: "utf8" }).stdout;
  assert.ok(Number(df.split("\n")[1]) < 64, `the disk is free again: ${df}`);
});

/** A child's status as a shell gives it: its exit code, or 128 + the number of the signal that ended it. */
const shellStatus = (code: number | null, signal: NodeJS.Signals | null): number | null =>
  code ?? (signal ? 128 + osConstants.signals[signal] : null);

for (const [sig, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
  test(`${sig} during a conversion removes the temporaries and exits ${code}`, async () => {
    for (const args of [["convert", BIG, "-o", "out.json.gz"], ["merge", BIG, BIG, "-o", "m.json", "--force"]]) {
      const d = dir();
      // Held at its first window of output (test/helpers/conversion_hold.ts): the signal comes mid-conversion on a
      // machine of any speed (before: 5 ms after the temporary appeared, which a fast machine could outrun).
      const hold = conversionHold();
      const p = spawn(process.execPath, [CLI, ...args], { cwd: d, env: hold.env() });
      const done = new Promise<number | null>((res) => p.on("close", (c, s) => res(shellStatus(c, s))));
      try {
        await hold.held(p);
        assert.ok(readdirSync(d).some((f) => f.endsWith(".tmp")), `${args}: a temporary exists mid-run`);
        assert.ok(readdirSync(d).some((f) => f.endsWith(".lock")), `${args}: a lock exists mid-run`);
        p.kill(sig);
        assert.is(await done, code, String(args));
      } finally {
        p.kill("SIGKILL"); // a no-op once it ended
        hold.release();
      }
      assert.equal(readdirSync(d).sort(), ["in.rawtrace"], `${args}: nothing left`);
    }
  });
}

test("a stream that never ends (info, stats and convert of standard input): SIGTERM and SIGINT still end the run while it is copied", async () => {
  const preamble = readFileSync(SAMPLE).subarray(0, 16);
  // convert copies it in a conversion worker: the main thread's handler cleans up, then the signal itself ends the
  // process (process.exit would wait for the blocked worker).
  for (const [args, sig] of [[["info", "-"], "SIGTERM"], [["stats", "-"], "SIGINT"], [["convert", "-", "-o", "x.json"], "SIGTERM"]] as const) {
    const p = spawn(process.execPath, [CLI, ...args], { cwd: dir(), stdio: ["pipe", "ignore", "ignore"] });
    const done = new Promise<[number | null, NodeJS.Signals | null]>((res) => p.on("close", (c, s) => res([c, s])));
    p.stdin.on("error", () => {}); // EPIPE once it is gone
    p.stdin.write(preamble);
    // Zeros for as long as it reads: once 4 MiB went through the pipe (its buffer holds 64 KiB), it is copying.
    const zeros = Buffer.alloc(1 << 16);
    let sent = 0;
    let alive = true;
    void done.then(() => (alive = false));
    const feed = (async () => {
      while (alive) {
        if (!p.stdin.write(zeros)) await Promise.race([new Promise((r) => p.stdin.once("drain", r)), done]);
        sent += zeros.length;
      }
    })();
    while (sent < 4 << 20 && alive) await new Promise((r) => setTimeout(r, 5));
    p.kill(sig);
    // A run that ignored the signal would copy forever: SIGKILL after 20 s, and the assertion below fails.
    const guard = setTimeout(() => p.kill("SIGKILL"), 20000);
    const [code, signal] = await done;
    clearTimeout(guard);
    await feed;
    assert.ok(signal === sig || code === (sig === "SIGTERM" ? 143 : 130), `${args.join(" ")}: ended by ${sig} (code ${code}, signal ${signal})`);
  }
});

test("a host program with its own SIGTERM handler (process.on, or process.once: before, rawtrace then killed it): its conversions go on and publish; if it then exits, nothing is left", async () => {
  const INDEX = join(ROOT, "dist/node/index.js");
  for (const [reg, exits] of [["on", false], ["on", true], ["once", false]] as const) {
    const d = dir();
    // The input comes through a FIFO this test feeds (spooled, src/node/file_source.ts): the conversion cannot end
    // before the test closes it, so the signal sent before that reaches a run in progress on a machine of any speed
    // (before: 5 ms after the temporary appeared, which a fast machine could outrun).
    const fifo = join(mkdtempSync(join(tmp, "hostfifo-")), "big.rawtrace");
    assert.is(spawnSync("mkfifo", [fifo]).status, 0);
    const writer = spawn("sh", ["-c", 'exec cat > "$1"', "sh", fifo], { stdio: ["pipe", "ignore", "inherit"] });
    const written = new Promise((res) => writer.on("close", res));
    // The host's handler records the signal; the second host then exits with 3, as a shutdown that gives up would.
    const script = `
      import { convertFile } from ${JSON.stringify(INDEX)};
      process.${reg}("SIGTERM", () => { console.log("host got SIGTERM"); ${exits ? "process.exit(3);" : ""} });
      const r = await convertFile(${JSON.stringify(fifo)}, "out.json.gz", { gzipLevel: 6 });
      console.log("converted", r.events);`;
    writeFileSync(join(d, "host.mjs"), script);
    const p = spawn(process.execPath, ["host.mjs"], { cwd: d });
    let out = "";
    let err = "";
    p.stdout.on("data", (c) => (out += c));
    p.stderr.on("data", (c) => (err += c));
    const done = new Promise<number | null>((res) => p.on("close", (c) => res(c)));
    // The temporary is made before the input is read; the deadline only turns a hang into a failure.
    for (let i = 0; i < 24000 && !readdirSync(d).some((f) => f.endsWith(".tmp")) && p.exitCode === null; i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(readdirSync(d).some((f) => f.endsWith(".tmp")), `a temporary exists mid-run: ${err}`);
    p.kill("SIGTERM");
    // Only now the input, all of it: the handler runs while it is converted, which then goes on (or the host exits).
    writer.stdin.on("error", () => {}); // EPIPE once the host that exits is gone
    writer.stdin.end(readFileSync(BIG));
    const code = await done;
    writer.kill();
    await written;
    assert.match(out, "host got SIGTERM");
    if (exits) {
      assert.is(code, 3, err);
      assert.equal(readdirSync(d).sort(), ["host.mjs", "in.rawtrace"], "the exit hook removed the temporary and the lock");
    } else {
      assert.is(code, 0, `${reg}: ${err}`);
      assert.match(out, /converted \d+/);
      assert.ok(out.indexOf("host got SIGTERM") < out.indexOf("converted"), `the signal came during the conversion: ${out}`);
      assert.equal(readdirSync(d).sort(), ["host.mjs", "in.rawtrace", "out.json.gz"], "published, no temporary or lock left");
      JSON.parse(gunzipSync(readFileSync(join(d, "out.json.gz"))).toString("utf8"));
    }
  }
});

test("SIGINT during an XSpace conversion: no empty log directory tree, nothing in TMPDIR (the spill file is unlinked at once)", async () => {
  const d = dir();
  const temp = mkdtempSync(join(tmp, "tmpdir-"));
  // Held at its first window of output (test/helpers/conversion_hold.ts): the signal comes mid-conversion.
  const hold = conversionHold();
  const p = spawn(process.execPath, [CLI, "convert", BIG, "--format", "xspace", "-o", "lx"], { cwd: d, env: hold.env({ ...process.env, TMPDIR: temp }) });
  const done = new Promise<number | null>((res) => p.on("close", (c, s) => res(shellStatus(c, s))));
  const profile = join(d, "lx/plugins/profile");
  try {
    await hold.held(p);
    assert.ok(readdirSync(profile).some((f) => f.endsWith(".tmp")), "the XSpace temporary exists mid-run");
    p.kill("SIGINT");
    assert.is(await done, 130);
  } finally {
    p.kill("SIGKILL"); // a no-op once it ended
    hold.release();
  }
  assert.equal(readdirSync(d).sort(), ["in.rawtrace"], "no lx/plugins/profile left");
  assert.equal(readdirSync(temp), [], "nothing in TMPDIR");
});

test("a conversion that fails on its input leaves no folder it made: an XSpace log directory, an output's new parents", () => {
  const d = dir();
  writeFileSync(join(d, "text.rawtrace"), "not a dump\n");
  for (const args of [["--format", "xspace", "-o", "lx"], ["-o", "new/sub/t.xplane.pb"]]) {
    const r = cli(["convert", "text.rawtrace", ...args], { cwd: d });
    assert.is(r.status, 1, r.stderr);
    assert.match(r.stderr, /not a \.rawtrace file/);
    assert.equal(readdirSync(d).sort(), ["in.rawtrace", "text.rawtrace"], `${args.join(" ")}: nothing left`);
  }
  // A batch where one input converts: its folder stays with its output, the failed one's is gone.
  const r = cli(["batch", "in.rawtrace", "text.rawtrace", "--format", "xspace", "--out-dir", "out"], { cwd: d });
  assert.is(r.status, 1, r.stderr);
  assert.ok(readdirSync(join(d, "out")).length > 0, "the converted input's output");
});

const NOBODY = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "true"]).status === 0;
/**
 * The built CLI copied where uid 65534 can read it: the checkout may sit below a directory only root can enter (CI's
 * clone, mktemp -d). The copy keeps the package layout (package.json above dist/node, for --version).
 */
let nobodyCli = "";
function cliForNobody(): string {
  if (nobodyCli) return nobodyCli;
  const pkg = join(tmp, "pkg");
  mkdirSync(join(pkg, "dist/node"), { recursive: true });
  copyFileSync(join(ROOT, "package.json"), join(pkg, "package.json"));
  for (const f of readdirSync(join(ROOT, "dist/node"))) copyFileSync(join(ROOT, "dist/node", f), join(pkg, "dist/node", f));
  for (const d of [tmp, pkg, join(pkg, "dist"), join(pkg, "dist/node")]) chmodSync(d, 0o755);
  nobodyCli = join(pkg, "dist/node/cli.js");
  return nobodyCli;
}
const asNobody = (args: string[], cwd: string) =>
  spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, cliForNobody(), ...args], { cwd, encoding: "utf8", timeout: 60000 });

test("as an unprivileged user: unwritable output directory → exit 4 naming the output; planted symlinks ignored", () => {
  if (!NOBODY) {
    console.log("  (skipped: setpriv cannot switch to uid 65534 here)");
    return;
  }
  const d = dir();
  chmodSync(join(d, "in.rawtrace"), 0o644);
  mkdirSync(join(d, "ro"));
  chmodSync(join(d, "ro"), 0o755); // root's: not writable for nobody
  const r = asNobody(["convert", "in.rawtrace", "-o", "ro/out.json"], d);
  assert.is(r.status, 4, r.stderr);
  assert.match(r.stderr, "ro/out.json");
  assert.equal(readdirSync(join(d, "ro")), []);
  // A shared sticky directory where another user planted out.json.tmp → a file of nobody's.
  const shared = join(d, "shared");
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  assert.is(spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", "echo mine > victim"], { cwd: shared }).status, 0);
  symlinkSync(join(shared, "victim"), join(shared, "out.json.tmp"));
  const s = asNobody(["convert", "../in.rawtrace", "-o", "out.json"], shared);
  assert.is(s.status, 0, s.stderr);
  assert.is(readFileSync(join(shared, "victim"), "utf8"), "mine\n");
  assert.is(statSync(join(shared, "out.json")).uid, 65534);
  assert.equal(readdirSync(shared).sort(), ["out.json", "out.json.tmp", "victim"]);
});

test("an output in a missing directory: exit 4 naming the output, nothing created", () => {
  const d = dir();
  const r = cli(["convert", "in.rawtrace", "-o", "nodir/x.json"], { cwd: d });
  assert.is(r.status, 4, r.stderr);
  assert.match(r.stderr, /nodir\/x\.json: cannot create: the folder .*nodir does not exist \(make it first: mkdir -p\)/);
  assert.equal(readdirSync(d).sort(), ["in.rawtrace"]);
});

test("an output folder that cannot be made: exit 4 naming it, no stack trace, no endless loop (/proc), no folder left", () => {
  const d = dir();
  writeFileSync(join(d, "file"), "x");
  symlinkSync("/nonexistent-rawtrace", join(d, "dangling"));
  const cases: Array<[string[], RegExp]> = [
    [["--out-dir", "file"], /file: cannot create the output folder \(--out-dir; Node API: outDir\): .*file is a file, not a folder/],
    [["--out-dir", "file/sub"], /file\/sub: cannot create the output folder \(--out-dir; Node API: outDir\): .*file is a file, not a folder/],
    [["--out-dir", "dangling/json"], /dangling\/json: cannot create the output folder \(--out-dir; Node API: outDir\): .*dangling exists and is not a folder/],
    // Node's recursive mkdir loops forever under /proc (mkdir answers ENOENT there though /proc exists).
    [["--out-dir", "/proc/rawtrace-qa"], /\/proc\/rawtrace-qa: cannot create the output folder \(--out-dir; Node API: outDir\): ENOENT/],
    [["--format", "xspace", "-o", "/proc/rawtrace-qa"], /\/proc\/rawtrace-qa\/plugins\/profile: cannot create the XProf log directory: ENOENT/],
  ];
  for (const [args, message] of cases) {
    const r = spawnSync(process.execPath, [CLI, "convert", "in.rawtrace", ...args], { cwd: d, encoding: "utf8", timeout: 20000 });
    assert.is(r.signal, null, `${args.join(" ")}: ended on its own`);
    assert.is(r.status, 4, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.not.match(r.stderr, /\n\s+at /, "no stack trace");
  }
  const m = spawnSync(process.execPath, [CLI, "merge", "in.rawtrace", "--format", "xspace", "-o", "/proc/rawtrace-qa-m"], { cwd: d, encoding: "utf8", timeout: 20000 });
  assert.is(m.status, 4, m.stderr);
  assert.match(m.stderr, /cannot create the XProf run folder: ENOENT/);
  assert.equal(readdirSync(d).sort(), ["dangling", "file", "in.rawtrace"]);
});

test("gzip output through the new sink still gunzips to the plain bytes", () => {
  const d = dir();
  const r = cli(["convert", "in.rawtrace", "-o", "o.json.gz"], { cwd: d });
  assert.is(r.status, 0, r.stderr);
  assert.ok(Buffer.compare(gunzipSync(readFileSync(join(d, "o.json.gz"))), expected) === 0);
});

test.after(() => {
  if (mounted) spawnSync("umount", [mnt]);
  rmSync(tmp, { recursive: true, force: true });
});

test.run();
