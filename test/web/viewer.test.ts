/**
 * The in-browser viewer (web/), end to end in headless Chromium: real H100 dumps opened through the file input,
 * converted in the page's Web Worker; rows, summary and the details of a selected kernel checked against the Chrome
 * JSON conversion of the same file in Node; downloads compared byte for byte with the Node conversions; .gz input;
 * cancel. Any console error, page error or request outside localhost fails the test. Screenshots are kept in
 * test-results/web/.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { gunzipSync, gzipSync } from "node:zlib";
import type { Page } from "playwright-core";
import { startHarness, type Harness } from "./browser.js";
import { chromeOf, chromeRows, clean, convert, details, gatedViewer, load, openPage, readGate, viewerRows, type Chrome } from "./viewer_helpers.js";
import { generate } from "../../bench/generate.js";
import { CLI } from "../helpers/cli.js";
import { SLICE_BYTES } from "../../web/slice_reader.js";

const CUDA_SAMPLE = "test/fixtures/real/h100/cuda_sample.rawtrace";
const TORCH_NVTX = "samples/h100_torch_train_nvtx.rawtrace";
const SHOTS = "test-results/web";

let h: Harness;
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-viewer-"));

test.before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  h = await startHarness();
});

test.after(async () => {
  await h?.close();
  rmSync(tmp, { recursive: true, force: true });
});

// ---- Helpers ---------------------------------------------------------------------------------------------------

/** Union length of [start, end) intervals (ns). */
function union(iv: Array<[number, number]>): number {
  iv.sort((a, b) => a[0] - b[0]);
  let total = 0;
  let s = -Infinity;
  let e = -Infinity;
  for (const [a, b] of iv) {
    if (a > e) {
      if (e > s) total += e - s;
      s = a;
      e = b;
    } else if (b > e) e = b;
  }
  if (e > s) total += e - s;
  return total;
}

/** The summary numbers recomputed from the Chrome JSON. */
function expectedSummary(t: Chrome) {
  const xs = t.traceEvents.filter((e) => e.ph === "X" && e.cat !== "gpu_user_annotation");
  const lo = Math.min(...xs.map((e) => e.tsNs));
  const hi = Math.max(...xs.map((e) => e.tsNs + e.durNs));
  const devices = new Map<number, { busy: Array<[number, number]>; kernels: number }>();
  const kernels = new Map<string, { count: number; total: number }>();
  const copies = new Map<string, { count: number; bytes: number }>();
  for (const e of xs) {
    if (e.cat !== "kernel" && e.cat !== "gpu_memcpy" && e.cat !== "gpu_memset") continue;
    const d = devices.get(e.pid) ?? { busy: [], kernels: 0 };
    devices.set(e.pid, d);
    d.busy.push([e.tsNs, e.tsNs + e.durNs]);
    if (e.cat === "kernel") {
      d.kernels++;
      const k = kernels.get(e.name) ?? { count: 0, total: 0 };
      k.count++;
      k.total += e.durNs;
      kernels.set(e.name, k);
    } else if (e.cat === "gpu_memcpy") {
      const dir = /^Memcpy (\w+)/.exec(e.name)![1];
      const c = copies.get(dir) ?? { count: 0, bytes: 0 };
      c.count++;
      c.bytes += e.args.bytes;
      copies.set(dir, c);
    }
  }
  return {
    span: hi - lo,
    busy: new Map([...devices].map(([id, d]) => [id, { pct: (union(d.busy) / (hi - lo)) * 100, kernels: d.kernels }])),
    kernels: [...kernels].sort((a, b) => b[1].total - a[1].total),
    copies,
  };
}

async function checkSummary(page: Page, t: Chrome, what: string): Promise<void> {
  const want = expectedSummary(t);
  const span = Number(await page.getAttribute("#summary-body [data-field=span]", "data-ns"));
  assert.is(span, want.span, `${what}: trace span`);
  const devs = await page.$$eval("#summary-devices tbody tr", (trs) =>
    trs.map((tr) => ({
      id: Number(tr.getAttribute("data-device")),
      pct: Number(tr.querySelector<HTMLElement>("[data-busy-percent]")!.dataset.busyPercent),
      kernels: Number(tr.querySelector<HTMLElement>("[data-count]")!.dataset.count),
    })),
  );
  assert.is(devs.length, want.busy.size, `${what}: devices`);
  for (const d of devs) {
    const w = want.busy.get(d.id)!;
    assert.ok(Math.abs(d.pct - w.pct) < 1e-6, `${what}: GPU ${d.id} busy ${d.pct} vs ${w.pct}`);
    assert.is(d.kernels, w.kernels, `${what}: GPU ${d.id} kernels`);
  }
  const top = await page.$$eval("#summary-kernels tbody tr", (trs) =>
    trs.map((tr) => ({
      name: tr.getAttribute("data-name")!,
      count: Number(tr.querySelector<HTMLElement>("[data-count]")!.dataset.count),
      ns: Number(tr.querySelector<HTMLElement>("[data-ns]")!.dataset.ns),
    })),
  );
  assert.is(top.length, Math.min(10, want.kernels.length), `${what}: top kernels listed`);
  for (let i = 0; i < top.length; i++) {
    const [name, k] = want.kernels[i];
    assert.is(top[i].name, name, `${what}: top kernel ${i}`);
    assert.is(top[i].count, k.count, `${what}: ${name} calls`);
    assert.is(top[i].ns, k.total, `${what}: ${name} total ns`);
  }
  const copies = await page.$$eval("#summary-memcpy tbody tr[data-direction]", (trs) =>
    trs.map((tr) => ({
      dir: tr.getAttribute("data-direction")!,
      count: Number(tr.querySelector<HTMLElement>("[data-count]")!.dataset.count),
      bytes: Number(tr.querySelector<HTMLElement>("[data-bytes]")!.dataset.bytes),
    })),
  );
  const plain = copies.filter((c) => c.dir !== "memset");
  assert.is(plain.length, want.copies.size, `${what}: copy directions`);
  for (const c of plain) {
    const w = want.copies.get(c.dir);
    assert.ok(w, `${what}: direction ${c.dir} in the JSON`);
    assert.is(c.count, w!.count, `${what}: ${c.dir} count`);
    assert.is(c.bytes, w!.bytes, `${what}: ${c.dir} bytes`);
  }
}

/** Selects the first match of `name` through the search box and checks the details panel against the JSON. */
async function selectAndCheckKernel(page: Page, t: Chrome, name: string, what: string): Promise<Record<string, string>> {
  await page.fill("#search", name);
  await page.press("#search", "Enter");
  await page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
  const d = await details(page);
  assert.is(d.name, name, `${what}: selected name`);
  assert.is(d.kind, "kernel", `${what}: kind`);
  const corr = Number(d.correlation);
  const k = t.traceEvents.find((e) => e.cat === "kernel" && e.args.correlation === corr);
  assert.ok(k, `${what}: kernel with correlation ${corr} in the JSON`);
  assert.is(k!.name, name);
  assert.is(d.duration.split(" ")[0], k!.dur.toFixed(3), `${what}: duration`);
  assert.is(d.grid, `[${k!.args.grid.join(", ")}]`, `${what}: grid`);
  assert.is(d.block, `[${k!.args.block.join(", ")}]`, `${what}: block`);
  const launch = t.traceEvents.find((e) => e.cat === "cuda_runtime" && e.args.correlation === corr);
  assert.ok(launch, `${what}: launch in the JSON`);
  assert.ok(d.partner.startsWith(launch!.name), `${what}: launched by ${d.partner}`);
  return d;
}

// ---- Tests -----------------------------------------------------------------------------------------------------

test("cuda_sample: rows, summary and a selected kernel match the Chrome JSON conversion", async () => {
  const t = await chromeOf(CUDA_SAMPLE);
  const { page, g } = await openPage(h);
  await load(page, CUDA_SAMPLE);
  await page.screenshot({ path: `${SHOTS}/cuda_sample.png` });

  assert.equal(await viewerRows(page), chromeRows(t), "events per (pid, tid)");
  const rowCount = await page.$$eval("#row-list li", (l) => l.length);
  assert.is(rowCount, 12, "rows: NVTX, API, overhead; per stream annotations, ops, sync; context sync");
  await checkSummary(page, t, "cuda_sample");

  const top = expectedSummary(t).kernels[0][0];
  const d = await selectAndCheckKernel(page, t, top, "cuda_sample");
  assert.match(await page.textContent("#search-count") ?? "", /^1 of 20 matches$/);
  await page.screenshot({ path: `${SHOTS}/cuda_sample-selected.png` });

  // Click on the canvas where the selection is drawn: hit testing finds the same kernel again.
  const x = Number(await page.getAttribute("#canvas", "data-sel-x"));
  const y = Number(await page.getAttribute("#canvas", "data-sel-y"));
  assert.ok(x > 0 && y > 0, "selection is on screen");
  await page.fill("#search", "");
  await page.press("#canvas", "Escape");
  await page.waitForSelector("#details-body [data-field=correlation]", { state: "detached" });
  await page.mouse.click(x, y + (await page.locator("#canvas").boundingBox())!.y);
  await page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
  const again = await details(page);
  assert.is(again.correlation, d.correlation, "clicked kernel");
  assert.is(again.name, top);

  // Follow the flow to the launch.
  await page.click("#details-body [data-field=partner] button");
  await page.waitForFunction(() => document.querySelector("#details-body [data-field=kind]")?.textContent === "CUDA runtime API");
  const launch = await details(page);
  assert.is(launch.correlation, d.correlation, "launch has the kernel's correlation");
  assert.ok(launch.partner.startsWith(top), "the launch points back to its kernel");
  await page.screenshot({ path: `${SHOTS}/cuda_sample-launch.png` });

  // Wheel zoom and drag pan keep the page working (and error-free).
  const box = (await page.locator("#canvas").boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.6, box.y + 200);
  for (let i = 0; i < 5; i++) await page.mouse.wheel(0, 300);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.3, box.y + 260, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.press("f");
  // The frames that draw what the keys did (web/view.ts invalidate: one requestAnimationFrame) have run.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  clean(g, "cuda_sample");
  await page.close();
});

test("torch training dump with NVTX: rows, summary and a kernel match the Chrome JSON conversion", async () => {
  const t = await chromeOf(TORCH_NVTX);
  const { page, g } = await openPage(h);
  await load(page, TORCH_NVTX);
  assert.equal(await viewerRows(page), chromeRows(t), "events per (pid, tid)");
  const classes = await page.$$eval("#row-list li", (l) => l.map((li) => Number(li.dataset.class)));
  assert.ok(classes.includes(1) && classes.includes(2) && classes.includes(8) && classes.includes(9), "NVTX, API, annotation and stream rows");
  await checkSummary(page, t, "torch");
  await page.screenshot({ path: `${SHOTS}/torch_nvtx.png` });
  const top = expectedSummary(t).kernels[0][0];
  await selectAndCheckKernel(page, t, top, "torch");
  await page.screenshot({ path: `${SHOTS}/torch_nvtx-selected.png` });
  clean(g, "torch");
  await page.close();
});

test("the file kept packed by the reader thread (?keep=packed), raw (?keep=raw) or mixed: same rows and summary, read once", async () => {
  const t = await chromeOf(TORCH_NVTX);
  const size = readFileSync(TORCH_NVTX).length;
  // mixed: the reader thread keeps the first 640 MiB as read (this whole file), packs the rest.
  for (const mode of ["packed", "raw", "mixed"]) {
    const { page, g } = await openPage(h, `?keep=${mode}`);
    await load(page, TORCH_NVTX);
    assert.equal(await viewerRows(page), chromeRows(t), `${mode}: events per (pid, tid)`);
    await checkSummary(page, t, `torch, ${mode}`);
    assert.is(await page.getAttribute("body", "data-file-reads"), "1", `${mode}: read once (index, projection and timeline passes)`);
    const kept = Number(await page.getAttribute("body", "data-kept-bytes"));
    if (mode === "packed") assert.ok(kept > 0 && kept < size / 2, `packed: ${kept} bytes kept of ${size}`);
    else assert.is(kept, size, `${mode}: the file's bytes`);
    clean(g, `keep ${mode}`);
    await page.close();
  }
  // A .gz file is kept as read even when packing is asked for: its bytes are compressed already.
  const gz = join(tmp, "torch_keep.rawtrace.gz");
  writeFileSync(gz, gzipSync(readFileSync(TORCH_NVTX)));
  const { page, g } = await openPage(h, "?keep=packed");
  await load(page, gz);
  assert.equal(await viewerRows(page), chromeRows(t), "gz, packed asked: events per (pid, tid)");
  assert.is(Number(await page.getAttribute("body", "data-kept-bytes")), readFileSync(gz).length, "the .gz bytes as read");
  clean(g, "keep packed, .gz");
  await page.close();
});

test("downloads made in the worker equal the Node conversions (Chrome JSON gzipped, XSpace)", async () => {
  const { page, g } = await openPage(h);
  await load(page, CUDA_SAMPLE);
  const [json] = await Promise.all([page.waitForEvent("download"), page.click("#dl-json")]);
  assert.is(json.suggestedFilename(), "cuda_sample.json.gz");
  const jsonPath = join(tmp, "dl.json.gz");
  await json.saveAs(jsonPath);
  assert.ok(gunzipSync(readFileSync(jsonPath)).equals(await convert(CUDA_SAMPLE, "chrome")), "Chrome JSON bytes");
  const [xs] = await Promise.all([page.waitForEvent("download"), page.click("#dl-xspace")]);
  assert.is(xs.suggestedFilename(), "cuda_sample.xplane.pb");
  const xsPath = join(tmp, "dl.xplane.pb");
  await xs.saveAs(xsPath);
  assert.ok(readFileSync(xsPath).equals(await convert(CUDA_SAMPLE, "xspace")), "XSpace bytes");
  clean(g, "downloads");
  await page.close();
});

test("#steps=REGEX: the downloads are what `rawtrace convert --steps REGEX` writes (ProfilerStep#N events included)", async () => {
  const { page, g } = await openPage(h, "#steps=train_step");
  await load(page, TORCH_NVTX);
  const out = join(tmp, "steps");
  mkdirSync(out, { recursive: true });
  const cli = (o: string) => {
    const r = spawnSync(process.execPath, [CLI, "convert", TORCH_NVTX, "--steps", "train_step", "-o", join(out, o), "-f"], { encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    return readFileSync(join(out, o));
  };
  const [json] = await Promise.all([page.waitForEvent("download"), page.click("#dl-json")]);
  await json.saveAs(join(out, "dl.json.gz"));
  const got = gunzipSync(readFileSync(join(out, "dl.json.gz")));
  assert.match(got.toString("utf8"), /"name":"ProfilerStep#1"/, "the step markers --steps adds");
  assert.ok(got.equals(cli("cli.json")), "Chrome JSON bytes as convert --steps train_step");
  const [xs] = await Promise.all([page.waitForEvent("download"), page.click("#dl-xspace")]);
  await xs.saveAs(join(out, "dl.xplane.pb"));
  const xsGot = readFileSync(join(out, "dl.xplane.pb"));
  assert.ok(xsGot.equals(cli("cli.xplane.pb")), "XSpace bytes as convert --steps train_step");
  assert.not.ok(xsGot.equals(await convert(TORCH_NVTX, "xspace")), "not the plain conversion");
  clean(g, "downloads with #steps");
  await page.close();
});

test(".rawtrace.gz opens through DecompressionStream; a second file joins the timeline", async () => {
  const gz = join(tmp, "cuda_sample.rawtrace.gz");
  writeFileSync(gz, gzipSync(readFileSync(CUDA_SAMPLE)));
  const t = await chromeOf(CUDA_SAMPLE);
  const { page, g } = await openPage(h);
  await load(page, gz);
  assert.equal(await viewerRows(page), chromeRows(t), "same rows and events as the plain file");
  await page.setInputFiles("#file", TORCH_NVTX);
  await page.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 2);
  await page.waitForSelector("body[data-summary=ready]", { state: "attached" });
  await page.waitForSelector("#progress", { state: "hidden" });
  const files = await page.$$eval("#row-list li", (l) => [...new Set(l.map((li) => li.getAttribute("data-file")))]);
  assert.equal(files, ["cuda_sample.rawtrace.gz", basename(TORCH_NVTX)]);
  await page.screenshot({ path: `${SHOTS}/two_files.png` });
  clean(g, "gz + two files");
  await page.close();
});

test("gzip is known by the bytes, not the name: a gzipped dump named .rawtrace and a plain one named .gz both open", async () => {
  const t = await chromeOf(CUDA_SAMPLE);
  const zipped = join(tmp, "zipped_but_named.rawtrace");
  writeFileSync(zipped, gzipSync(readFileSync(CUDA_SAMPLE)));
  const plain = join(tmp, "plain_but_named.rawtrace.gz");
  writeFileSync(plain, readFileSync(CUDA_SAMPLE));
  for (const f of [zipped, plain]) {
    const { page, g } = await openPage(h);
    await load(page, f);
    assert.equal(await viewerRows(page), chromeRows(t), basename(f));
    clean(g, basename(f));
    await page.close();
  }
});

test(".rawtrace.gz cut short opens what it holds (as the CLI does); damaged: what it gave opens, GZIP_DAMAGED says where; damaged from its start: one message naming the file", async () => {
  const cut = join(tmp, "cut.rawtrace.gz");
  writeFileSync(cut, gzipSync(readFileSync(TORCH_NVTX)).subarray(0, 60000));
  const { page, g } = await openPage(h);
  await load(page, cut);
  assert.ok((await page.$$("#row-list li")).length > 0, "rows from the part it holds");
  // The sample gzipped with bytes [from, to) overwritten, opened; resolves with the message box once it names `name`.
  const openDamaged = async (name: string, from: number, to: number, says: string): Promise<string> => {
    const bad = gzipSync(readFileSync(TORCH_NVTX));
    bad.fill(0xff, from, to);
    writeFileSync(join(tmp, `${name}.rawtrace.gz`), bad);
    await page.setInputFiles("#file", join(tmp, `${name}.rawtrace.gz`));
    // The message box may still show the previous file's message: wait for this file's.
    await page.waitForFunction(([n, w]) => {
      const t = document.querySelector("#error")?.textContent ?? "";
      return t.includes(n) && t.includes(w);
    }, [name, says]);
    return (await page.textContent("#error")) ?? "";
  };
  assert.match(await openDamaged("damaged", 40000, 40008, "GZIP_DAMAGED"),
    /GZIP_DAMAGED ×1 \(offset \d+\): the gzip stream is damaged at compressed byte \d+ \(/);
  // Several members (cat a.gz b.gz) and a bad trailer: every event, as the plain file (the browser's own
  // DecompressionStream read the first member only, and dropped its last output at the bad trailer).
  const plain = readFileSync(TORCH_NVTX);
  const events = async (path: string): Promise<string> => {
    await page.setInputFiles("#file", path);
    await page.waitForFunction((n) => [...document.querySelectorAll("#file-list .chip")].some((c) => c.textContent?.includes(n)), basename(path));
    const chips = await page.$$eval("#file-list .chip", (l) => l.map((c) => c.textContent ?? ""));
    return /([\d,]+) events/.exec(chips.find((c) => c.includes(basename(path)))!)![1];
  };
  writeFileSync(join(tmp, "plain.rawtrace"), plain);
  writeFileSync(join(tmp, "members.rawtrace.gz"), Buffer.concat([gzipSync(plain.subarray(0, 100000)), gzipSync(plain.subarray(100000))]));
  const badTrailer = gzipSync(plain);
  badTrailer[badTrailer.length - 7] ^= 1;
  writeFileSync(join(tmp, "trailer.rawtrace.gz"), badTrailer);
  const all = await events(join(tmp, "plain.rawtrace"));
  assert.is(await events(join(tmp, "members.rawtrace.gz")), all, "two members");
  assert.is(await events(join(tmp, "trailer.rawtrace.gz")), all, "a bad trailer");
  // Damaged in its first block: nothing to open, one message.
  assert.match(await openDamaged("broken", 12, 40, "cannot decompress"),
    /^broken\.rawtrace(\.gz)?: cannot decompress \(damaged gzip\): at compressed byte \d+, before any byte of the dump: /);
  clean(g, "gz cut short, damaged");
  await page.close();
});

test("files opened together keep their own messages; damage says how much was lost and where", async () => {
  const cut = join(tmp, "cut.rawtrace");
  writeFileSync(cut, readFileSync(TORCH_NVTX).subarray(0, 200000));
  const junk = join(tmp, "junk.rawtrace");
  writeFileSync(junk, "not a trace at all\n".repeat(10));
  const { page, g } = await openPage(h);
  await page.setInputFiles("#file", [cut, junk]);
  await page.waitForFunction(() => {
    const t = document.querySelector("#error")?.textContent ?? "";
    return t.includes("cut.rawtrace:") && t.includes("junk.rawtrace:");
  });
  const text = (await page.textContent("#error")) ?? "";
  assert.match(text, /junk\.rawtrace: offset 0: not a \.rawtrace file/);
  // The damage in the CLI's words: its DATA LOST line (bytes in how many ranges, the codes), the ranges skipped and
  // each warning with what it means, as `rawtrace convert` prints them (without its "rawtrace: " prefix).
  const r = spawnSync(process.execPath, [CLI, "convert", "cut.rawtrace", "-o", "cut.json", "-f"], { cwd: tmp, encoding: "utf8" });
  const said = r.stderr.split("\n").filter((l) => /^(rawtrace: cut\.rawtrace: DATA LOST|  skipped bytes|  warning)/.test(l));
  // (The cut buffer's whole records are read: what is skipped is the record the cut went through.)
  assert.ok(said.some((l) => / in 1 range \(/.test(l)) && said.some((l) => /^  skipped bytes \d+–\d+ \(RECORD_TRUNCATED\)$/.test(l)), r.stderr);
  assert.ok(said.some((l) => /^  warning TRUNCATED ×1 \(offset \d+\): file ends inside a chunk/.test(l)), r.stderr);
  const lines = text.split("\n");
  for (const l of said) assert.ok(lines.includes(l.replace(/^rawtrace: /, "")), `the page says ${JSON.stringify(l)}:\n${text}`);
  clean(g, "two messages");
  await page.close();
});

test("a file that is not a dump: one message naming it and the offset, the page stays usable", async () => {
  const bad = join(tmp, "notes.rawtrace");
  writeFileSync(bad, "these are notes, not a trace\n".repeat(100));
  const { page, g } = await openPage(h);
  await page.setInputFiles("#file", bad);
  await page.waitForSelector("#error", { state: "visible" });
  const msg = (await page.textContent("#error")) ?? "";
  assert.match(msg, /^notes\.rawtrace: offset 0: not a \.rawtrace file/);
  assert.not.match(msg, /notes\.rawtrace: notes\.rawtrace/, "the name once");
  await page.waitForSelector("#progress", { state: "hidden" });
  assert.is(await page.getAttribute("body", "data-state"), "empty");
  await load(page, CUDA_SAMPLE);
  assert.is(await page.$$eval("#row-list li", (l) => l.length), 12);
  clean(g, "not a dump");
  await page.close();
});

test("cancel stops a conversion, and the files opened with it, and leaves the page usable", async () => {
  // More than one slice, whose reader holds the second until the click landed: the conversion is still running
  // then, on any machine.
  const big = join(tmp, "big-cancel.rawtrace");
  generate(300_000, big);
  assert.ok(statSync(big).size > SLICE_BYTES, "more than one slice");
  const { page, g } = await openPage(h, gatedViewer(h, SLICE_BYTES));
  const gate = await readGate(page);
  // Opened together with a small file: Cancel stops both (the second is not opened after the first was cancelled).
  await page.setInputFiles("#file", [big, CUDA_SAMPLE]);
  await gate.held();
  await page.waitForSelector("#progress", { state: "visible" });
  await page.click("#cancel");
  await gate.open();
  // The files chosen together are done with once data-opening goes (web/main.ts openTogether: after the last one was
  // opened or skipped): had the small file been opened after the cancel, it is in by then (before: looked 1.5 s on).
  await page.waitForFunction(() => document.body.dataset.opening === undefined, undefined, { timeout: 60_000 });
  await page.waitForSelector("#progress", { state: "hidden", timeout: 60_000 });
  assert.ok(await page.isHidden("#progress"), "no file opened after the cancel");
  assert.is(await page.getAttribute("body", "data-state"), "empty", "nothing loaded");
  assert.is(await page.$$eval("#file-list .chip", (l) => l.length), 0);
  assert.ok(await page.isHidden("#error"), "a cancel is not an error");
  // The same worker takes the next file.
  await load(page, CUDA_SAMPLE);
  assert.is(await page.$$eval("#row-list li", (l) => l.length), 12);
  clean(g, "cancel");
  await page.close();
});

test("cancel while the timeline is laid out (after the last read) opens nothing either", async () => {
  const big = join(tmp, "big-cancel.rawtrace");
  if (!existsSync(big)) generate(300_000, big);
  const { page, g } = await openPage(h);
  // Clicked the moment the progress bar names the phase after the file's last byte was read: the reads a cancel
  // stops are over, so the worker and the page must drop the result themselves.
  await page.evaluate(() => {
    const bar = document.querySelector("#progress")!;
    const mo = new MutationObserver(() => {
      if (/laying out the timeline/.test(bar.textContent ?? "")) {
        mo.disconnect();
        document.body.dataset.cancelledAt = bar.textContent ?? "";
        (document.querySelector("#cancel") as HTMLButtonElement).click();
      }
    });
    mo.observe(bar, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await page.setInputFiles("#file", big);
  await page.waitForFunction(() => document.body.dataset.cancelledAt !== undefined, undefined, { timeout: 120_000 });
  // The load is over once data-opening goes (web/main.ts openTogether, after the file was opened or dropped): a
  // result the page did not drop is in by then (before: looked 1.5 s on).
  await page.waitForFunction(() => document.body.dataset.opening === undefined, undefined, { timeout: 60_000 });
  await page.waitForSelector("#progress", { state: "hidden", timeout: 60_000 });
  assert.is(await page.$$eval("#file-list .chip", (l) => l.length), 0, "nothing opened");
  assert.is(await page.getAttribute("body", "data-state"), "empty");
  assert.ok(await page.isHidden("#error"), "a cancel is not an error");
  await load(page, CUDA_SAMPLE);
  assert.is(await page.$$eval("#row-list li", (l) => l.length), 12);
  clean(g, "late cancel");
  await page.close();
});

test("keyboard: W/S and arrows zoom, A/D and arrows pan, F fits, Escape clears, without a click first; not while typing", async () => {
  const { page, g } = await openPage(h);
  await load(page, CUDA_SAMPLE);
  await page.mouse.move(1, 1); // away from the timeline: no hover outline in the pictures
  const shot = async () => {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    return page.locator("#canvas").screenshot();
  };
  const fitted = await shot();
  // Opening a file leaves the focus off the timeline: its keys work all the same.
  assert.not.ok(await page.evaluate(() => document.activeElement?.id === "canvas"));
  for (const key of ["w", "s", "a", "d", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"]) {
    await page.keyboard.press(key);
    assert.not.ok((await shot()).equals(fitted), `${key} changes the view`);
    await page.keyboard.press("f");
    assert.ok((await shot()).equals(fitted), `f after ${key} is the fitted view again`);
  }
  // In the search box, keys type (and the window stays where it is).
  const win = await page.getAttribute("#canvas", "data-window");
  await page.focus("#search");
  await page.keyboard.type("wasd");
  assert.is(await page.inputValue("#search"), "wasd");
  assert.is(await page.getAttribute("#canvas", "data-window"), win, "typing in the search box leaves the view alone");
  // Escape in the search box keeps the selection; outside it clears it.
  const t = await chromeOf(CUDA_SAMPLE);
  await selectAndCheckKernel(page, t, expectedSummary(t).kernels[0][0], "keyboard");
  await page.fill("#search", "");
  await page.keyboard.press("Escape");
  assert.ok(await page.isVisible("#details-body [data-field=correlation]"), "Escape in the search box keeps the selection");
  await page.waitForSelector("#search-results", { state: "hidden" });
  await page.keyboard.press("Escape");
  await page.waitForSelector("#details-body [data-field=correlation]", { state: "detached" });
  clean(g, "keyboard");
  await page.close();
});

test("search: case-insensitive substring, every match counted, the first 200 listed, Enter / Shift+Enter step in time order", async () => {
  const t = await chromeOf(TORCH_NVTX);
  const want = t.traceEvents.filter((e) => e.ph === "X" && String(e.name).toLowerCase().includes("cudalaunchkernel")).length;
  assert.ok(want > 200, `${want} launches in the sample`);
  const { page, g } = await openPage(h);
  await load(page, TORCH_NVTX);
  await page.fill("#search", "CUDALAUNCHKERNEL");
  await page.waitForFunction((n) => document.body.dataset.searchMatches === String(n), want);
  assert.is(await page.textContent("#search-count"), `${want.toLocaleString("en-US")} matches`);
  const items = await page.$$eval("#search-results ol li", (l) => l.map((li) => li.textContent ?? ""));
  assert.is(items.length, 201, "200 listed and a line for the rest");
  assert.ok(items.slice(0, 200).every((x) => x.startsWith("cudaLaunchKernel")), items[0]);
  assert.match(items[200], new RegExp(`^… ${(want - 200).toLocaleString("en-US")} more \\(Enter / Shift\\+Enter step through all of them in time order\\)$`));
  const step = async (key: string) => {
    await page.press("#search", key);
    await page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
    const d = await details(page);
    assert.is(d.name, "cudaLaunchKernel");
    return d.correlation;
  };
  const first = await step("Enter");
  const second = await step("Enter");
  assert.ok(second !== first, "Enter: the next match");
  assert.is(await step("Shift+Enter"), first, "Shift+Enter: back to the previous one");
  clean(g, "search");
  await page.close();
});

test.run();
