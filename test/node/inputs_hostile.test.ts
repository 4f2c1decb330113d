/**
 * Inputs that are not plain finished files (src/node/file_source.ts): a FIFO is read once and spooled (convert,
 * info, stats, merge — which reads every rank twice) instead of hanging; a dump without END that changes size
 * during the conversion gets a STILL_WRITING warning; a finished dump does not, but FILE_CHANGED (cut, replaced or
 * appended to while read).
 */
import { test } from "uvu";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { convertFile } from "../../src/node/convert.js";
import { gzipSync } from "node:zlib";
import { sampleDump } from "../helpers/sample_dump.js";
import { fileSource, withSourceWarnings } from "../../src/node/file_source.js";
import { createEngine } from "../../src/node/wasm.js";
import type { ByteReader, ByteSource } from "../../src/core/engine.js";
import { isLossWarning } from "../../src/core/codes.js";
import { withoutInflatedCopy } from "../helpers/no_inflated_copy.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const SAMPLE = join(ROOT, "samples/alexnet_a100_rank0.rawtrace");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-inputs-"));

/** Runs the CLI with `fifo` fed by a writer process; resolves with its exit code, stdout and stderr. */
async function withFifo(fifo: string, bytes: Buffer, args: string[], cwd: string) {
  assert.is(spawnSync("mkfifo", [fifo]).status, 0);
  const src = join(tmp, `src-${Math.random().toString(36).slice(2)}`);
  writeFileSync(src, bytes);
  const writer = spawn("sh", ["-c", `cat "${src}" > "${fifo}"`]);
  const p = spawn(process.execPath, [CLI, ...args], { cwd });
  let out = "";
  let err = "";
  p.stdout.on("data", (c) => (out += c));
  p.stderr.on("data", (c) => (err += c));
  const timer = setTimeout(() => p.kill("SIGKILL"), 60000); // a hang fails the test instead of stalling it
  const code = await new Promise<number | null>((res) => p.on("close", res));
  clearTimeout(timer);
  await new Promise((res) => (writer.exitCode !== null ? res(0) : writer.on("close", res)));
  return { code, out, err };
}

const tmpBefore = () => readdirSync(tmpdir()).filter((f) => f.includes(".spool")).length;

test("a FIFO input converts like the file (no hang), and the spooled copy is gone afterwards", async () => {
  const d = join(tmp, "a");
  mkdirSync(d);
  mkdirSync(join(d, "ref"));
  writeFileSync(join(d, "ref", "in.rawtrace"), readFileSync(SAMPLE));
  assert.is(spawnSync(process.execPath, [CLI, "convert", "ref/in.rawtrace", "-o", "ref.json"], { cwd: d }).status, 0);
  const spools = tmpBefore();
  const r = await withFifo(join(d, "in.rawtrace"), readFileSync(SAMPLE), ["convert", "in.rawtrace", "-o", "fifo.json"], d);
  assert.is(r.code, 0, r.err);
  assert.ok(Buffer.compare(readFileSync(join(d, "fifo.json")), readFileSync(join(d, "ref.json"))) === 0);
  assert.is(tmpBefore(), spools, "no spooled copy left in the temporary directory");
});

test("standard input: `-` reads it, -o or --out-dir names the output; without them USAGE (no /dev/stdin.json)", () => {
  const d = join(tmp, "stdin");
  mkdirSync(d);
  const run = (args: string[]) => spawnSync("sh", ["-c", `cat "${SAMPLE}" | "${process.execPath}" "${CLI}" ${args.join(" ")}`], { cwd: d, encoding: "utf8", timeout: 60000 });
  assert.is(spawnSync(process.execPath, [CLI, "convert", SAMPLE, "-o", join(d, "ref.json")]).status, 0);
  const a = run(["convert", "-", "-o", "a.json"]);
  assert.is(a.status, 0, a.stderr);
  // The same events; only the trace's name differs (the input's name: stdin).
  const events = (f: string) => JSON.stringify(JSON.parse(readFileSync(join(d, f), "utf8")).traceEvents);
  assert.is(events("a.json"), events("ref.json"));
  const b = run(["convert", "-", "--out-dir", "out"]);
  assert.is(b.status, 0, b.stderr);
  assert.equal(readdirSync(join(d, "out")), ["stdin.json"]);
  const c = run(["convert", "/dev/stdin"]);
  assert.is(c.status, 2, c.stderr);
  assert.match(c.stderr, /\/dev\/stdin: standard input, a pipe or a device has no folder.*-o or --out-dir/);
  // Standard input redirected from a regular file too (its folder would be /dev).
  const f = spawnSync("sh", ["-c", `"${process.execPath}" "${CLI}" convert - < "${SAMPLE}"`], { cwd: d, encoding: "utf8", timeout: 60000 });
  assert.is(f.status, 2, f.stderr);
  assert.equal(readdirSync(d).sort(), ["a.json", "out", "ref.json"]);
});

test("an endless stream that is not a dump (/dev/zero, `yes |`) is refused after its first bytes, not spooled to a full disk", () => {
  const d = join(tmp, "endless");
  mkdirSync(d);
  const temp = mkdtempSync(join(tmp, "tmpdir-"));
  const cases: Array<[string, string]> = [
    ["/dev/zero", `"${process.execPath}" "${CLI}" convert /dev/zero -o z.json`],
    ["/dev/stdin", `yes | "${process.execPath}" "${CLI}" convert - -o y.json`],
    ["/dev/stdin", `yes | "${process.execPath}" "${CLI}" info -`],
    // A magic with one byte changed waits for the first chunk header (which would prove a dump), then is refused.
    ["/dev/stdin", `(printf RAWTRACX; yes) | "${process.execPath}" "${CLI}" convert - -o x.json`],
  ];
  for (const [name, cmd] of cases) {
    // TMPDIR in the run's own folder: a spool that grew would show there (it is unlinked at once, so df, not ls).
    const r = spawnSync("sh", ["-c", cmd], { cwd: d, encoding: "utf8", timeout: 30000, env: { ...process.env, TMPDIR: temp } });
    assert.is(r.status, 1, `${cmd}: ${r.stderr} (signal ${r.signal})`);
    assert.match(r.stderr, `rawtrace: ${name}: offset 0: not a .rawtrace file: expected the 8 bytes 'RAWTRACE' at offset 0`);
    assert.not.match(r.stderr, "    at ");
  }
  assert.equal(readdirSync(d), []);
  assert.equal(readdirSync(temp), []);
  // A stream shorter than the magic still reaches the core, which names its length (EMPTY), and a dump cut after
  // its first bytes still converts what it holds.
  const short = spawnSync("sh", ["-c", `printf RAWT | "${process.execPath}" "${CLI}" convert - -o s.json`], { cwd: d, encoding: "utf8", timeout: 30000 });
  assert.is(short.status, 1, short.stderr);
  assert.match(short.stderr, "file ends before the 16-byte preamble (4 bytes)");
  const gz = spawnSync("sh", ["-c", `"${process.execPath}" "${CLI}" convert - -o g.json`], { cwd: d, encoding: "utf8", timeout: 30000, input: gzipSync(readFileSync(SAMPLE)) as unknown as string });
  assert.is(gz.status, 0, gz.stderr);
  // A dump whose magic is damaged, through a pipe: its first chunk header proves it, and it converts as from a file.
  const damaged = readFileSync(SAMPLE);
  damaged[5] ^= 4;
  const dm = spawnSync("sh", ["-c", `"${process.execPath}" "${CLI}" convert - -o m.json`], { cwd: d, encoding: "utf8", timeout: 30000, input: damaged as unknown as string });
  assert.is(dm.status, 0, dm.stderr);
  assert.match(dm.stderr, "warning PREAMBLE_DAMAGED ×1 (offset 0)");
  const ref = JSON.parse(readFileSync(join(d, "g.json"), "utf8")).traceEvents;
  assert.is(JSON.parse(readFileSync(join(d, "m.json"), "utf8")).traceEvents.length, ref.length);
});

test("a missing input: IO naming it ('cannot open'), one input or several, never a bare Node error", () => {
  for (const args of [["convert", "nope.rawtrace"], ["convert", "nope.rawtrace", "--jobs", "3"], ["convert", "nope.rawtrace", "--format", "xspace"]]) {
    const r = spawnSync(process.execPath, [CLI, ...args], { cwd: tmp, encoding: "utf8", timeout: 60000 });
    assert.is(r.status, 4, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^rawtrace: nope\.rawtrace: cannot open: ENOENT/);
  }
});

test("an input that is a symlink loop: IO naming it ('cannot open: ELOOP'), as a missing one (it printed Node's bare 'ELOOP: … stat')", () => {
  symlinkSync("loop.rawtrace", join(tmp, "loop.rawtrace"));
  for (const args of [["convert", "loop.rawtrace"], ["convert", "loop.rawtrace", "-o", "l.json", "--jobs", "2"]]) {
    const r = spawnSync(process.execPath, [CLI, ...args], { cwd: tmp, encoding: "utf8", timeout: 60000 });
    assert.is(r.status, 4, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^rawtrace: loop\.rawtrace: cannot open: ELOOP/);
  }
  // A path through a file and a name too long, their output beside them: the input is named, not the output's lock
  // file (which fails with the same error).
  writeFileSync(join(tmp, "plain.rawtrace"), readFileSync(SAMPLE));
  const long = `${"a".repeat(300)}.rawtrace`;
  for (const [input, why] of [["plain.rawtrace/x.rawtrace", "ENOTDIR"], [long, "ENAMETOOLONG"]]) {
    const r = spawnSync(process.execPath, [CLI, "convert", input], { cwd: tmp, encoding: "utf8", timeout: 60000 });
    assert.is(r.status, 4, `${input}: ${r.stderr}`);
    assert.ok(r.stderr.startsWith(`rawtrace: ${input}: cannot open: ${why}`), r.stderr);
  }
});

test("content errors name the input as given (two ranks' x.rawtrace in different folders are told apart)", () => {
  mkdirSync(join(tmp, "e1"), { recursive: true });
  mkdirSync(join(tmp, "e2"), { recursive: true });
  writeFileSync(join(tmp, "e1/x.rawtrace"), readFileSync(SAMPLE));
  writeFileSync(join(tmp, "e2/x.rawtrace"), "");
  for (const args of [["convert", "e2/x.rawtrace", "-o", "e.json"], ["stats", "e2/x.rawtrace"], ["merge", "e1/x.rawtrace", "e2/x.rawtrace", "-o", "m.json"]]) {
    const r = spawnSync(process.execPath, [CLI, ...args], { cwd: tmp, encoding: "utf8", timeout: 60000 });
    assert.is(r.status, 1, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^rawtrace: e2\/x\.rawtrace: offset 0: file ends before the 16-byte preamble/m);
  }
});

test("info of a FIFO carrying a dump with no decoder: the error, exit 1, no second open of the drained FIFO (no hang)", async () => {
  const d = join(tmp, "nodecoder");
  mkdirSync(d);
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 3, vendorVersion: 1, runtimeVersion: 0, driverVersion: 0, pid: 1, startNs: 1n, hostname: "h", commandLine: "x" });
  w.activity(new Uint8Array(64));
  w.end();
  const t0 = Date.now();
  const r = await withFifo(join(d, "v.rawtrace"), Buffer.from(w.bytes()), ["info", "v.rawtrace"], d);
  assert.is(r.code, 1, r.err);
  assert.match(r.err, /vendor code 3 has no decoder in this build/);
  assert.ok(Date.now() - t0 < 30_000, "no wait for a writer that never comes");
});

test("info, stats and merge (two reads of every rank) of a FIFO input", async () => {
  const d = join(tmp, "b");
  mkdirSync(d);
  const info = await withFifo(join(d, "i.rawtrace"), readFileSync(SAMPLE), ["info", "i.rawtrace"], d);
  assert.is(info.code, 0, info.err);
  // The FIFO's size is the bytes read from it: the sample's whole length.
  assert.match(info.out, `i.rawtrace: ${(readFileSync(SAMPLE).length / 1024).toFixed(1)} KiB, complete`);
  const stats = await withFifo(join(d, "s.rawtrace"), readFileSync(SAMPLE), ["stats", "s.rawtrace"], d);
  assert.is(stats.code, 0, stats.err);
  assert.match(stats.out, "busy");
  const spools = tmpBefore();
  const merge = await withFifo(join(d, "m.rawtrace"), readFileSync(SAMPLE), ["merge", "m.rawtrace", "-o", "m.json"], d);
  assert.is(merge.code, 0, merge.err);
  assert.match(merge.err, "m.rawtrace");
  assert.ok(JSON.parse(readFileSync(join(d, "m.json"), "utf8")).traceEvents.length > 100);
  assert.is(tmpBefore(), spools);
});

/** A dump without END at `<tmp>/<name>/live.rawtrace`, as a collector still writing it leaves it. */
function liveDump(name: string): { d: string; p: string; dump: Uint8Array } {
  const d = join(tmp, name);
  mkdirSync(d);
  const p = join(d, "live.rawtrace");
  const dump = sampleDump({ end: false });
  writeFileSync(p, dump);
  return { d, p, dump };
}

test("a dump without END that grows during the conversion is reported as STILL_WRITING", async () => {
  const { d, p, dump } = liveDump("c");
  let appended = false;
  const r = await convertFile(p, join(d, "live.json"), {
    onProgress: () => {
      if (appended) return;
      appended = true;
      appendFileSync(p, sampleDump({ end: false }).subarray(16, 1016)); // the collector writes on
    },
  });
  const w = r.info.warnings.find((x) => x.code === "STILL_WRITING");
  assert.ok(w, JSON.stringify(r.info.warnings));
  assert.is(w!.offset, dump.length);
  assert.is(w!.detail, dump.length + 1000);
  assert.match(w!.message, "still writing");
  assert.is(w!.count, 1);
  // The output says it too, as the result does (a user keeping only the JSON sees the snapshot for what it is).
  const trailer = (f: string) => (JSON.parse(readFileSync(join(d, f), "utf8")).rawtrace.warnings as Array<{ code: string; offset: number; detail: number }>);
  const tw = trailer("live.json").find((x) => x.code === "STILL_WRITING");
  assert.equal(tw && [tw.offset, tw.detail], [dump.length, dump.length + 1000]);
  // The same file, unchanged during the run: no such warning (NO_END only).
  const again = await convertFile(p, join(d, "again.json"));
  assert.not.ok(again.info.warnings.some((x) => x.code === "STILL_WRITING"));
  assert.not.ok(trailer("again.json").some((x) => x.code === "STILL_WRITING"));
  assert.ok(again.info.warnings.some((x) => x.code === "NO_END"));
});

test("STILL_WRITING: the result gives the sizes the output's end was written with, not a size seen after it", async () => {
  const { p, dump } = liveDump("f");
  const more = sampleDump({ end: false }).subarray(16, 1016);
  const src = fileSource(p);
  // The collector writes 1,000 bytes while pass 1 reads, then 500 more once the output's end is written (before
  // the last pass's reader is closed, where the source looks at the size again).
  const appends: string[] = [];
  const wrapped: ByteSource = {
    ...src,
    hostWarnings: src.hostWarnings,
    open(pass) {
      const r = src.open(pass);
      let first = true;
      return {
        read(dst: Uint8Array) {
          if (pass === 1 && first) appendFileSync(p, more), appends.push("pass 1");
          first = false;
          return r.read(dst);
        },
        close() {
          if (pass === 2) appendFileSync(p, more.subarray(0, 500)), appends.push("after the end");
          r.close?.();
        },
      };
    },
  };
  const engine = await createEngine();
  const parts: Buffer[] = [];
  const res = withSourceWarnings(src, await engine.convert(wrapped, (b) => parts.push(Buffer.from(b)), { format: "chrome" }));
  src.close();
  assert.equal(appends, ["pass 1", "after the end"]);
  const trailer = (JSON.parse(Buffer.concat(parts).toString("utf8")).rawtrace.warnings as Array<{ code: string; offset: number; detail: number }>)
    .find((x) => x.code === "STILL_WRITING");
  const w = res.info.warnings.find((x) => x.code === "STILL_WRITING");
  assert.equal(trailer && [trailer.offset, trailer.detail], [dump.length, dump.length + 1000]);
  assert.equal(w && [w.offset, w.detail], [dump.length, dump.length + 1000], "the result as the output (before: the size after the end)");
  assert.equal(src.sizes, [dump.length, dump.length + 1000, dump.length + 1500], "the later size was seen");
});

/**
 * `src` with `change` run at the first read of its pass `at` (before that read), each read asking at most `chunk`
 * bytes.
 */
function changedAt(src: ByteSource, at: 1 | 2, change: () => void, chunk = Infinity): ByteSource {
  return {
    ...src,
    hostWarnings: src.hostWarnings,
    async open(pass) {
      const r = (await src.open(pass)) as ByteReader;
      let reads = 0;
      return {
        read(dst: Uint8Array) {
          if (pass === at && reads++ === 0) change();
          return r.read(dst.subarray(0, Math.min(dst.length, chunk)));
        },
        close: () => r.close?.(),
      };
    },
  };
}

test("a dump that changes size while its index pass reads it (a collector writing its END, zeros appended) is no loss: no STILL_WRITING, no FILE_CHANGED; appended to after it, FILE_CHANGED", async () => {
  const d = join(tmp, "e");
  mkdirSync(d);
  const p = join(d, "done.rawtrace");
  const full = sampleDump();
  const noEnd = sampleDump({ end: false });
  assert.ok(Buffer.from(full.subarray(0, noEnd.length)).equals(Buffer.from(noEnd)), "the dump without END is a prefix");
  const engine = await createEngine();
  // `change` runs at the first read of pass `at` of the conversion.
  const convert = async (start: Uint8Array, at: 1 | 2, change: () => void) => {
    writeFileSync(p, start);
    const src = fileSource(p);
    const wrapped = changedAt(src, at, change);
    const parts: Buffer[] = [];
    const res = withSourceWarnings(src, await engine.convert(wrapped, (b) => parts.push(Buffer.from(b)), { format: "chrome" }));
    src.close();
    return { res, codes: res.info.warnings.map((w) => w.code), trailer: JSON.parse(Buffer.concat(parts).toString("utf8")).rawtrace };
  };
  const whole = await convert(full, 1, () => {});
  // The collector writes its END while the index pass reads: the finished dump, no warning (before: FILE_CHANGED).
  const ending = await convert(noEnd, 1, () => appendFileSync(p, full.subarray(noEnd.length)));
  assert.ok(ending.res.info.complete);
  assert.is(ending.res.events, whole.res.events);
  assert.not.ok(ending.codes.includes("FILE_CHANGED") || ending.codes.includes("STILL_WRITING"), ending.codes.join());
  const zeros = await convert(full, 1, () => appendFileSync(p, Buffer.alloc(8)));
  assert.not.ok(zeros.codes.includes("FILE_CHANGED") || zeros.codes.includes("STILL_WRITING"), zeros.codes.join());
  // Appended to while the emit pass reads: FILE_CHANGED, from the size the index pass ended with.
  const later = await convert(full, 2, () => appendFileSync(p, Buffer.alloc(8)));
  const w = later.res.info.warnings.find((x) => x.code === "FILE_CHANGED");
  assert.equal(w && [w.offset, w.detail], [full.length, full.length + 8]);
  assert.not.ok(later.codes.includes("STILL_WRITING"));
  assert.ok(later.trailer.warnings.some((x: { code: string }) => x.code === "FILE_CHANGED"), "the output says it too");
});

test("a finished dump cut while a later pass reads it: FILE_CHANGED, a loss, in the result and the output (before: fewer events, complete, no warning but an unclosed range)", async () => {
  const d = join(tmp, "cut2");
  mkdirSync(d);
  const p = join(d, "done.rawtrace");
  const dump = readFileSync(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"));
  writeFileSync(p, dump);
  const engine = await createEngine();
  const convert = async (cutAt: number | null, atIndexEnd = false) => {
    writeFileSync(p, dump);
    const src = fileSource(p);
    // Reads of 16 KiB, and the file cut to `cutAt` bytes after the emit pass's first read (a new dump copied over it),
    // or `atIndexEnd` once the index pass read all of it, before it ends.
    const wrapped: ByteSource = {
      ...src,
      hostWarnings: src.hostWarnings,
      open(pass) {
        const r = src.open(pass);
        let reads = 0;
        return {
          read(dst: Uint8Array) {
            const n = r.read(dst.subarray(0, 16384));
            if (pass === 2 && ++reads === 1 && cutAt !== null && !atIndexEnd) truncateSync(p, cutAt);
            return n;
          },
          close: () => {
            if (pass === 1 && atIndexEnd && cutAt !== null) truncateSync(p, cutAt);
            return r.close?.();
          },
        };
      },
    };
    const parts: Buffer[] = [];
    const res = withSourceWarnings(src, await engine.convert(wrapped, (b) => parts.push(Buffer.from(b)), { format: "chrome" }));
    src.close();
    return { res, trailer: JSON.parse(Buffer.concat(parts).toString("utf8")).rawtrace as { complete: boolean; warnings: Array<{ code: string; offset: number; detail: number }> } };
  };
  const whole = await convert(null);
  assert.not.ok(whole.res.info.warnings.some((x) => x.code === "FILE_CHANGED"));
  const cut = await convert(100000);
  assert.ok(cut.res.events < whole.res.events, `${cut.res.events} of ${whole.res.events} events`);
  const w = cut.res.info.warnings.find((x) => x.code === "FILE_CHANGED");
  assert.equal(w && [w.offset, w.detail], [dump.length, 100000]);
  assert.ok(isLossWarning("FILE_CHANGED"), "--strict: exit 6");
  const tw = cut.trailer.warnings.find((x) => x.code === "FILE_CHANGED");
  assert.equal(tw && [tw.offset, tw.detail], [dump.length, 100000], "the output says it too");
  // Cut after the index pass read it whole, before that pass ended (before: 530 of 1,981 events, complete, no word).
  const late = await convert(100000, true);
  assert.ok(late.res.events < whole.res.events, `${late.res.events} of ${whole.res.events} events`);
  const lw = late.res.info.warnings.find((x) => x.code === "FILE_CHANGED");
  assert.equal(lw && [lw.offset, lw.detail], [dump.length, 100000]);
});

test("a .rawtrace.gz that changes size while read: STILL_WRITING without END; complete, changed after its index pass: nothing, its later passes reading the index pass's copy (FILE_CHANGED from the compressed sizes when every pass reads the file)", async () => {
  const d = join(tmp, "gzsize");
  mkdirSync(d);
  const p = join(d, "x.rawtrace.gz");
  const engine = await createEngine();
  // `change` runs at the first read of pass `at`; reads of 16 KiB.
  const convert = async (start: Uint8Array, at: 1 | 2, change: () => void) => {
    writeFileSync(p, start);
    const src = fileSource(p);
    const wrapped = changedAt(src, at, change, 16384);
    const parts: Buffer[] = [];
    const res = withSourceWarnings(src, await engine.convert(wrapped, (b) => parts.push(Buffer.from(b)), { format: "chrome" }));
    src.close();
    const trailer = JSON.parse(Buffer.concat(parts).toString("utf8")).rawtrace as { warnings: Array<{ code: string; offset: number; detail: number }> };
    const said = (code: string) => {
      const w = res.info.warnings.find((x) => x.code === code);
      const t = trailer.warnings.find((x) => x.code === code);
      assert.equal(t && [t.offset, t.detail], w && [w.offset, w.detail], `${code}: the output says what the result says`);
      return w && [w.offset, w.detail];
    };
    return { res, said, codes: res.info.warnings.map((w) => w.code) };
  };
  // A dump without END, compressed while a collector writes on: a second member lands during the index pass.
  const live = gzipSync(sampleDump({ end: false }));
  const more = gzipSync(sampleDump({ end: false }).subarray(16, 1016));
  const grows = await convert(live, 1, () => appendFileSync(p, more));
  assert.equal(grows.said("STILL_WRITING"), [live.length, live.length + more.length], grows.codes.join());
  const still = await convert(live, 1, () => {});
  assert.not.ok(still.codes.includes("STILL_WRITING"), "unchanged: NO_END only");
  // A complete dump: appended to during the emit pass, cut during it (a new file copied over it), or changed while
  // its index pass reads (no loss: every later pass reads what the index pass ended with).
  const raw = readFileSync(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"));
  const full = gzipSync(raw);
  const whole = await convert(full, 1, () => {});
  assert.ok(whole.res.info.complete);
  assert.not.ok(whole.codes.includes("FILE_CHANGED"), whole.codes.join());
  const zeros = gzipSync(Buffer.alloc(8));
  const early = await convert(full, 1, () => appendFileSync(p, zeros));
  assert.not.ok(early.codes.includes("FILE_CHANGED") || early.codes.includes("STILL_WRITING"), early.codes.join());
  // The later passes read the index pass's copy (src/node/inflated_copy.ts): what happens to the file then changes
  // nothing, every event is there.
  for (const change of [() => appendFileSync(p, zeros), () => truncateSync(p, 30000)]) {
    const after = await convert(full, 2, change);
    assert.not.ok(after.codes.includes("FILE_CHANGED") || after.codes.includes("STILL_WRITING"), after.codes.join());
    assert.is(after.res.events, whole.res.events);
  }
  // Without the copy every pass reads the file: FILE_CHANGED from the compressed sizes.
  await withoutInflatedCopy(async () => {
    const later = await convert(full, 2, () => appendFileSync(p, zeros));
    assert.equal(later.said("FILE_CHANGED"), [full.length, full.length + zeros.length], later.codes.join());
    assert.not.ok(later.codes.includes("STILL_WRITING"));
    const cut = await convert(full, 2, () => truncateSync(p, 30000));
    assert.equal(cut.said("FILE_CHANGED"), [full.length, 30000], cut.codes.join());
    assert.ok(cut.res.events < whole.res.events, `${cut.res.events} of ${whole.res.events} events`);
  });
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("a gzip-compressed dump (.rawtrace.gz, stdin too) converts to the same bytes; cut short it converts what it holds; damaged it is IO", () => {
  const d = join(tmp, "gz");
  mkdirSync(join(d, "dir"), { recursive: true });
  const H100 = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
  const raw = readFileSync(H100);
  writeFileSync(join(d, "x.rawtrace"), raw);
  writeFileSync(join(d, "dir/x.rawtrace.gz"), gzipSync(raw));
  const cli = (args: string[], input?: Buffer) => spawnSync(process.execPath, [CLI, ...args], { cwd: d, encoding: "utf8", timeout: 60000, input });
  for (const fmt of [["-o", "{}.json"], ["-F", "xspace", "-o", "{}.xplane.pb"]]) {
    const a = cli(["convert", "x.rawtrace", ...fmt.map((f) => f.replace("{}", "plain"))]);
    const b = cli(["convert", "dir/x.rawtrace.gz", ...fmt.map((f) => f.replace("{}", "gz"))]);
    assert.is(a.status, 0, a.stderr);
    assert.is(b.status, 0, b.stderr);
    const ext = fmt[fmt.length - 1].slice(2);
    assert.ok(readFileSync(join(d, `gz${ext}`)).equals(readFileSync(join(d, `plain${ext}`))), `${ext}: the same bytes`);
  }
  // Split over threads: one converting worker for a gzipped dump (each would decompress all of it in every pass).
  const j = cli(["convert", "dir/x.rawtrace.gz", "-o", "j3.json", "--jobs", "3", "--json"]);
  assert.is(j.status, 0, j.stderr);
  assert.is(JSON.parse(j.stdout).files[0].workers, 1);
  assert.ok(readFileSync(join(d, "j3.json")).equals(readFileSync(join(d, "plain.json"))));
  // A folder's .rawtrace.gz files are inputs; the default output drops both extensions.
  const w = cli(["convert", "dir"]);
  assert.is(w.status, 0, w.stderr);
  assert.ok(readFileSync(join(d, "dir/x.json")).equals(readFileSync(join(d, "plain.json"))));
  // Standard input, compressed.
  const s = cli(["convert", "-", "-o", "stdin.json"], gzipSync(raw));
  assert.is(s.status, 0, s.stderr);
  // Read twice from standard input: merge (plan, then convert) of a gzipped rank, stats with a timeline pass.
  const m = spawnSync("sh", ["-c", `gzip -c "${H100}" | "${process.execPath}" "${CLI}" merge "${SAMPLE}" - -o merged.json`], { cwd: d, encoding: "utf8", timeout: 60000 });
  assert.is(m.status, 0, m.stderr);
  assert.ok(JSON.parse(readFileSync(join(d, "merged.json"), "utf8")).traceEvents.length > 0);
  const g = spawnSync("sh", ["-c", `cat "${H100}" | "${process.execPath}" "${CLI}" stats - --gaps --json`], { cwd: d, encoding: "utf8", timeout: 60000 });
  assert.is(g.status, 0, g.stderr);
  assert.ok(JSON.parse(g.stdout).files[0].gaps.devices.length > 0);
  // Cut short: the part it holds is converted, with the dump's own truncation warning.
  writeFileSync(join(d, "cut.rawtrace.gz"), gzipSync(raw).subarray(0, 40000));
  const c = cli(["convert", "cut.rawtrace.gz", "-o", "cut.json"]);
  assert.is(c.status, 0, c.stderr);
  assert.match(c.stderr, /TRUNCATED/);
  assert.ok(JSON.parse(readFileSync(join(d, "cut.json"), "utf8")).traceEvents.length > 0);
  // Damaged from its first block: IO naming the file, nothing written.
  const bad = gzipSync(raw);
  bad.fill(0xff, 12, 40);
  writeFileSync(join(d, "bad.rawtrace.gz"), bad);
  const e = cli(["convert", "bad.rawtrace.gz", "-o", "bad.json"]);
  assert.is(e.status, 4, e.stderr);
  assert.match(e.stderr, /bad\.rawtrace\.gz: cannot decompress \(damaged gzip\): at compressed byte \d+, before any byte of the dump: /);
  assert.not.ok(readdirSync(d).includes("bad.json"));
  // Nothing readable at all: where and why, as the viewer says it (test/web/file_source.test.ts), IO as any damage
  // before the first byte (a file cut in its gzip header or first block said "file ends before the 16-byte preamble").
  const head = gzipSync(raw);
  for (const [name, bytes, want] of [
    ["head5", head.subarray(0, 5), "at compressed byte 5, before any byte of the dump: the file ends inside its gzip header"],
    ["block18", head.subarray(0, 18), "at compressed byte 18, before any byte of the dump: the file ends inside a gzip member"],
  ] as const) {
    writeFileSync(join(d, `${name}.rawtrace.gz`), bytes);
    const r = cli(["convert", `${name}.rawtrace.gz`, "-o", `${name}.json`]);
    assert.is(r.status, 4, r.stderr);
    assert.ok(r.stderr.includes(`${name}.rawtrace.gz: cannot decompress (damaged gzip): ${want}`), r.stderr);
  }
  // Damaged further on: what it still holds is converted, GZIP_DAMAGED says where, the dump's warnings what is missing.
  const mid = gzipSync(raw);
  mid.fill(0xff, 5000, 5016);
  writeFileSync(join(d, "mid.rawtrace.gz"), mid);
  const m2 = cli(["convert", "mid.rawtrace.gz", "-o", "mid.json"]);
  assert.is(m2.status, 0, m2.stderr);
  assert.match(m2.stderr, /GZIP_DAMAGED ×1 \(offset \d+\): the gzip stream is damaged at compressed byte \d+/);
  assert.match(m2.stderr, /TRUNCATED|NO_END/);
  // A bad checksum in the trailer, or bytes after the last member: nothing is lost (gunzip alone refused both whole).
  const intact = JSON.parse(readFileSync(join(d, "stdin.json"), "utf8")).traceEvents.length;
  const crc = gzipSync(raw);
  crc[crc.length - 6] ^= 0x01;
  for (const [file, bytes] of [["crc.rawtrace.gz", crc], ["tail.rawtrace.gz", Buffer.concat([gzipSync(raw), Buffer.from("trailing bytes\n")])]] as const) {
    writeFileSync(join(d, file), bytes);
    const r = cli(["convert", file, "-o", `${file}.json`]);
    assert.is(r.status, 0, r.stderr);
    assert.match(r.stderr, /GZIP_DAMAGED/, file);
    assert.not.match(r.stderr, /DATA LOST/, file);
    assert.is(JSON.parse(readFileSync(join(d, `${file}.json`), "utf8")).traceEvents.length, intact, `${file}: every event`);
  }
});

test.run();
