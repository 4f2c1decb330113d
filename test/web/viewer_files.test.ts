/**
 * Several files in the viewer, end to end in headless Chromium: a file that joins (file input, or a second ?open=)
 * leaves the view of the files already open as the user set it — window, collapsed and pinned groups, the pixels of
 * their rows, the URL hash — and fits to all the files only when the view still showed everything; a file of
 * another run (its time range overlaps none of the others) is aligned to the first file's start and labelled so;
 * ?align=absolute keeps recorded times (docs/viewer.md, "Several files").
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Page } from "playwright-core";
import { guard, startHarness, type Guard, type Harness } from "./browser.js";
import { chromeOf, clean, details, gatedViewer, load, openPage, readGate, settledHash } from "./viewer_helpers.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { generate } from "../../bench/generate.js";
import { SLICE_BYTES } from "../../web/slice_reader.js";

const CUDA_SAMPLE = "test/fixtures/real/h100/cuda_sample.rawtrace";
const TORCH_NVTX = "samples/h100_torch_train_nvtx.rawtrace";
const VIEW = { width: 960, height: 560 };
/** Layout constants of web/view.ts and web/overlays.ts (px): axis height, gutter width. */
const AXIS_H = 24;
const GUTTER = 250;

let h: Harness;

test.before(async () => {
  h = await startHarness();
  mkdirSync(join(h.dir, "files"), { recursive: true });
  // Under their own names: the hash names the first file, and applies to that file only.
  for (const f of [CUDA_SAMPLE, TORCH_NVTX]) copyFileSync(f, join(h.dir, "files", basename(f)));
  // One run of two ranks whose dumps start 5 µs apart (their time ranges overlap): rank 1's starts later.
  mkdirSync(join(h.dir, "files", "runA"), { recursive: true });
  writeFileSync(join(h.dir, "files", "runA", "rank0.rawtrace"), sampleDump({ rank: 0 }));
  writeFileSync(join(h.dir, "files", "runA", "rank1.rawtrace"), sampleDump({ rank: 1, shiftNs: 5000n }));
  // Two ranks' dumps of one name: different files the hash must tell apart by more than their name.
  for (const [d, f] of [["rank0", CUDA_SAMPLE], ["rank1", TORCH_NVTX]]) {
    mkdirSync(join(h.dir, "files", d), { recursive: true });
    copyFileSync(f, join(h.dir, "files", d, "trace.rawtrace"));
  }
});

test.after(async () => {
  await h?.close();
});

async function frame(page: Page): Promise<void> {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

async function canvasData(page: Page, key: string): Promise<string> {
  return (await page.getAttribute("#canvas", `data-${key}`)) ?? "";
}

/** The visible window as absolute view-axis ns (data-window counts from the trace start, which a file may move). */
async function windowAbs(page: Page): Promise<[number, number]> {
  const o = Number(await canvasData(page, "origin"));
  const [a, b] = (await canvasData(page, "window")).split(",").map(Number);
  return [a + o, b + o];
}

/** Adds a file through the file input and waits until it is in (two chips, no job running). */
async function add(page: Page, path: string, chips: number): Promise<void> {
  await page.setInputFiles("#file", path);
  await page.waitForFunction((n) => document.querySelectorAll("#file-list .chip").length === n, chips, { timeout: 120_000 });
  await page.waitForSelector("body[data-state=ready][data-summary=ready]", { state: "attached" });
  await page.waitForSelector("#progress", { state: "hidden" });
  await frame(page);
}

/** The `view=` of the hash, once the hash (written after a short delay) says what the canvas says. */
async function hashView(page: Page): Promise<string> {
  const want = await canvasData(page, "window");
  await page.waitForFunction((w) => new URLSearchParams(location.hash.slice(1)).get("view") === w, want);
  return want;
}

const split = (s: string) => (s ? s.split("|") : []);

test("a file that joins keeps the view of the file open: window, collapsed and pinned groups, their pixels, the hash", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  await page.mouse.move(1, 1);
  const box = (await page.locator("#canvas").boundingBox())!;
  const headerY = async (k: number) => box.y + AXIS_H + Number((await canvasData(page, "header-ys")).split(",")[k]) + 10;
  const groups = split(await canvasData(page, "groups"));
  assert.is(groups.length, 2, "a process and a GPU");
  // Zoom in and pan (keys), pin the GPU to the top (its ⊤ button), collapse the process (a click on its header).
  const fitted = await canvasData(page, "window");
  for (const k of ["w", "w", "w", "d"]) await page.keyboard.press(k);
  await page.mouse.click(box.x + GUTTER - 11, await headerY(1));
  await page.mouse.click(box.x + 60, await headerY(1));
  await page.mouse.move(1, 1);
  await frame(page);
  assert.is.not(await canvasData(page, "window"), fitted, "zoomed in");
  assert.equal(split(await canvasData(page, "groups")), [groups[1], groups[0]], "GPU pinned first");
  assert.is(await canvasData(page, "collapsed"), "1");
  const win = await windowAbs(page);
  const view1 = await hashView(page);
  const ys = (await canvasData(page, "header-ys")).split(",").map(Number);
  const pixels = () => page.screenshot({ clip: { x: box.x + GUTTER, y: box.y + AXIS_H, width: box.width - GUTTER, height: ys[1] + 20 } });
  const before = await pixels();

  await add(page, TORCH_NVTX, 2);
  const named = (x: string) => `cuda_sample.rawtrace · ${x}`;
  assert.is(await canvasData(page, "collapsed"), "1", "one group collapsed still");
  const all = split(await canvasData(page, "groups"));
  assert.equal(all.slice(0, 2), [named(groups[1]), named(groups[0])], "the first file's groups first, in their order");
  assert.equal(await windowAbs(page), win, "the same window");
  assert.equal(split(await canvasData(page, "collapsed-groups")), [named(groups[0])], "the process still collapsed");
  assert.equal(split(await canvasData(page, "pinned-groups")), [named(groups[1])], "the GPU still pinned");
  assert.ok(all.length > 2 && all.slice(2).every((x) => x.startsWith("(aligned) h100_torch_train_nvtx.rawtrace · ")), all.join(" | "));
  assert.ok((await pixels()).equals(before), "the first file's rows drawn as before");
  // The hash follows: the same window in its numbers, and a link to both files reopens it.
  const view2 = await hashView(page);
  assert.is(view2, view1, "the trace start did not move: the same numbers");
  const hash = await page.evaluate(() => location.hash);
  clean(g, "file joins");
  await page.close();

  const again = await openPage(h, `?open=files/${basename(CUDA_SAMPLE)}&open=files/${basename(TORCH_NVTX)}${hash}`, { viewport: VIEW });
  await again.page.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 2 &&
    document.body.dataset.state === "ready", undefined, { timeout: 120_000 });
  await again.page.waitForFunction((w) => document.querySelector("#canvas")?.getAttribute("data-window") === w, view2);
  clean(again.g, "link to both files");
  await again.page.close();
});

test("a file that joins a view showing everything: fitted to both; a file of another run is aligned and labelled", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  const one = (await canvasData(page, "window")).split(",").map(Number);
  assert.ok(one[1] < 0.2e9, `cuda_sample alone: ${one}`);
  await add(page, TORCH_NVTX, 2);
  // cuda_sample spans 0.18 s, the torch dump 7.06 s, recorded 78.7 s after it: both from 0 on one axis.
  const two = (await canvasData(page, "window")).split(",").map(Number);
  assert.ok(two[0] < 0 && two[1] > 7.05e9 && two[1] < 7.3e9, `fitted to both, from the shared start: ${two}`);
  assert.is(await canvasData(page, "aligned"), "1");
  const chip = page.locator("#file-list .chip").nth(1);
  assert.match((await chip.textContent()) ?? "", / · aligned$/);
  assert.is(await chip.getAttribute("data-aligned"), "recorded 78.7 s later, aligned to the start of cuda_sample.rawtrace");
  assert.not.ok(await page.locator("#file-list .chip").nth(0).getAttribute("data-aligned"), "the first file is not moved");
  assert.ok(split(await canvasData(page, "groups")).slice(2).every((x) => x.startsWith("(aligned) h100_torch_train_nvtx.rawtrace · ")));
  // A kernel of the aligned file: its start counts from the shared start, and the details say it was moved.
  const cuda = await chromeOf(CUDA_SAMPLE);
  const torch = await chromeOf(TORCH_NVTX);
  const only = torch.traceEvents.find((e) => e.cat === "kernel" && !cuda.traceEvents.some((c) => c.name === e.name))!;
  await page.fill("#search", only.name);
  await page.press("#search", "Enter");
  await page.waitForSelector("#details-body [data-field=aligned]", { state: "attached" });
  const d = await details(page);
  assert.is(d.file, "h100_torch_train_nvtx.rawtrace");
  assert.match(d.aligned, /^recorded 78\.7 s later/);
  clean(g, "aligned");
  await page.close();

  // ?align=absolute: recorded times, the torch dump 78.7 s after cuda_sample.
  const abs = await openPage(h, "?align=absolute", { viewport: VIEW });
  await load(abs.page, CUDA_SAMPLE);
  await add(abs.page, TORCH_NVTX, 2);
  const w = (await canvasData(abs.page, "window")).split(",").map(Number);
  assert.ok(w[1] > 85e9, `absolute: ${w}`);
  assert.is(await canvasData(abs.page, "aligned"), "0");
  assert.is(await abs.page.locator("#file-list .chip").nth(1).getAttribute("data-aligned"), null);
  clean(abs.g, "absolute");
  await abs.page.close();
});

/** A tall page: every group of three files on screen at once (the drags below reach into the last file's rows). */
const TALL = { width: 960, height: 1400 };

/** Opens `?open=files/<name>` for each name, plus `hash`, and waits until every file is in. */
async function openLink(names: string[], hash: string): Promise<{ page: Page; g: Guard }> {
  const r = await openPage(h, `?${names.map((n) => `open=files/${n}`).join("&")}${hash}`, { viewport: TALL });
  await r.page.waitForFunction((n) => document.querySelectorAll("#file-list .chip").length === n &&
    document.body.dataset.state === "ready", names.length, { timeout: 120_000 });
  await r.page.waitForSelector("#progress", { state: "hidden" });
  await frame(r.page);
  return r;
}

/** Shift-drags over the first rows of the first group whose header starts with `prefix`: a range over those tracks. */
async function rangeOverGroup(page: Page, prefix: string): Promise<void> {
  const groups = split(await canvasData(page, "groups"));
  const k = groups.findIndex((x) => x.startsWith(prefix));
  assert.ok(k >= 0, `${prefix}: ${groups.join(" | ")}`);
  const box = (await page.locator("#canvas").boundingBox())!;
  const top = box.y + AXIS_H + Number((await canvasData(page, "header-ys")).split(",")[k]) + 20 + 4;
  assert.ok(top + 30 < box.y + box.height, "the group's rows are on screen");
  await page.mouse.move(box.x + GUTTER + (box.width - GUTTER) * 0.2, top);
  await page.keyboard.down("Shift");
  await page.mouse.down();
  await page.mouse.move(box.x + GUTTER + (box.width - GUTTER) * 0.7, top + 30, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up("Shift");
  await page.waitForSelector("#range-table", { state: "visible" });
}

/** Selects a match of `name` in the file the details call `file` (Enter steps through the matches in time order). */
async function selectIn(page: Page, name: string, file: string, tries: number): Promise<void> {
  await page.fill("#search", name);
  for (let k = 0; k < tries; k++) {
    await page.press("#search", "Enter");
    await page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
    if ((await details(page)).file === file) return;
  }
  throw new Error(`no match of ${name} in ${file}`);
}

/** What a restored link must show again: the selection's details, the range and its tracks, the window. */
async function viewOf(page: Page): Promise<Record<string, unknown>> {
  await page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
  await page.waitForSelector("#range-table", { state: "visible" });
  const d = await details(page);
  // Which file of another run is the one moved depends on which was opened first (docs/viewer.md).
  delete d.aligned;
  return {
    details: d,
    tracks: await page.$$eval("#range-track option", (os) => os.map((o) => o.textContent ?? "")),
    range: await canvasData(page, "range"),
    window: await canvasData(page, "window"),
  };
}

/** The hash once it carries the selection and the range's tracks. */
async function linkHash(page: Page): Promise<string> {
  await page.waitForFunction(() => /(^|&)ev=/.test(location.hash.slice(1)) && /(^|&)rows=/.test(location.hash.slice(1)));
  return settledHash(page);
}

/** A kernel of cuda_sample that the torch dump does not have, the one with the fewest launches. */
async function cudaOnlyKernel(): Promise<{ name: string; count: number }> {
  const [cuda, torch] = [await chromeOf(CUDA_SAMPLE), await chromeOf(TORCH_NVTX)];
  const counts = new Map<string, number>();
  for (const e of cuda.traceEvents) if (e.cat === "kernel") counts.set(e.name, (counts.get(e.name) ?? 0) + 1);
  const names = [...counts].filter(([n]) => !torch.traceEvents.some((e) => e.name === n)).sort((a, b) => a[1] - b[1]);
  return { name: names[0][0], count: names[0][1] };
}

test("the same file opened twice: a link's selection and range tracks in the second copy restore there, in another order", async () => {
  const CUDA = basename(CUDA_SAMPLE);
  const TORCH = basename(TORCH_NVTX);
  const first = await openLink([CUDA, TORCH, CUDA], "");
  await rangeOverGroup(first.page, `${CUDA} (2) · `);
  const kernel = await cudaOnlyKernel();
  await selectIn(first.page, kernel.name, `${CUDA} (2)`, 2 * kernel.count + 1);
  const hash = await linkHash(first.page);
  const before = await viewOf(first.page);
  assert.ok((before.tracks as string[]).slice(1).every((t) => t.startsWith(`${CUDA} (2) · `)), (before.tracks as string[]).join(" | "));
  clean(first.g, "three files");
  await first.page.close();

  // The second copy is now the second file opened, not the third.
  const again = await openLink([CUDA, CUDA, TORCH], hash);
  assert.equal(await viewOf(again.page), before, "the same view, in the second copy");
  clean(again.g, "restored in another order");
  await again.page.close();
});

test("a link to two files restores its view whatever order they are opened in: ?open= swapped, or both chosen at once", async () => {
  const CUDA = basename(CUDA_SAMPLE);
  const TORCH = basename(TORCH_NVTX);
  // The selection and the tracks in the file opened first, which comes last when the link is restored.
  const first = await openLink([CUDA, TORCH], "");
  await rangeOverGroup(first.page, `${CUDA} · `);
  await selectIn(first.page, (await cudaOnlyKernel()).name, CUDA, 1);
  const hash = await linkHash(first.page);
  const before = await viewOf(first.page);
  clean(first.g, "two files");
  await first.page.close();

  const swapped = await openLink([TORCH, CUDA], hash);
  assert.equal(await viewOf(swapped.page), before, "?open= in the other order");
  clean(swapped.g, "swapped");
  await swapped.page.close();

  // Both files chosen at once (as a drop of both): the hash waits for the last of them.
  const chosen = await openPage(h, hash, { viewport: TALL });
  await chosen.page.setInputFiles("#file", [TORCH_NVTX, CUDA_SAMPLE]);
  await chosen.page.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 2 &&
    document.body.dataset.state === "ready", undefined, { timeout: 120_000 });
  assert.equal(await viewOf(chosen.page), before, "both chosen, in the other order");
  clean(chosen.g, "chosen");
  await chosen.page.close();
});

test("two different files of one name: a link's selection and tracks restore in the same file, whichever opens first", async () => {
  // The CUDA dump opened second: on screen it is `trace.rawtrace (2)`, aligned (another run).
  const first = await openLink(["rank1/trace.rawtrace", "rank0/trace.rawtrace"], "");
  await rangeOverGroup(first.page, "(aligned) trace.rawtrace (2) · ");
  const kernel = await cudaOnlyKernel();
  await selectIn(first.page, kernel.name, "trace.rawtrace (2)", kernel.count + 1);
  const hash = await linkHash(first.page);
  assert.match(hash, /(^#|&)fid=[0-9a-f]{8}\.[0-9a-f]{8}(&|$)/, "the files' identities are in the link");
  const before = await viewOf(first.page);
  clean(first.g, "two files of one name");
  await first.page.close();

  // Opened the other way round, the CUDA dump arrives first: name and copy alone would pick the torch dump (a kernel
  // index that is not this kernel, rows of its groups). Once both are in, they take the link's order again: the
  // CUDA dump is `trace.rawtrace (2)` and the aligned run, as where the link was made.
  const swapped = await openLink(["rank0/trace.rawtrace", "rank1/trace.rawtrace"], hash);
  const after = await viewOf(swapped.page);
  assert.is((after.details as Record<string, string>).file, "trace.rawtrace (2)", "the selection is in the link's second file");
  assert.equal(after, before, "the same kernel, tracks, range and window");
  clean(swapped.g, "swapped");
  await swapped.page.close();
});

test("another run's alignment restores from a link whatever order the files are opened in (its run's ranks start apart)", async () => {
  const CUDA = basename(CUDA_SAMPLE);
  // cuda_sample is another run, aligned to the start of the first file placed: rank 0's here.
  const first = await openLink(["runA/rank0.rawtrace", "runA/rank1.rawtrace", CUDA], "");
  const chips = first.page.locator("#file-list .chip");
  assert.match((await chips.nth(2).getAttribute("data-aligned")) ?? "", /aligned to the start of rank0\.rawtrace$/);
  await rangeOverGroup(first.page, `(aligned) ${CUDA} · `);
  const kernel = await cudaOnlyKernel();
  await selectIn(first.page, kernel.name, CUDA, 1);
  const hash = await linkHash(first.page);
  const before = await viewOf(first.page);
  clean(first.g, "run A and another run");
  await first.page.close();

  // Rank 1 first: as it arrives, cuda_sample is aligned to rank 1's start, 5 µs later than in the link; once all
  // are in, the link's order places them again.
  const swapped = await openLink(["runA/rank1.rawtrace", CUDA, "runA/rank0.rawtrace"], hash);
  assert.equal(await viewOf(swapped.page), before, "the same selection (its start), tracks, range and window");
  const again = swapped.page.locator("#file-list .chip");
  assert.match((await again.nth(2).getAttribute("data-aligned")) ?? "", /aligned to the start of rank0\.rawtrace$/);
  assert.not.ok(await again.nth(1).getAttribute("data-aligned"), "rank 1 (the chips in the link's order) is on its recorded time");
  // The link written from here lists the files in the link's order: opened again in the arrival order, it shows
  // the same.
  const rewritten = await settledHash(swapped.page);
  clean(swapped.g, "swapped");
  await swapped.page.close();
  const reload = await openLink(["runA/rank1.rawtrace", CUDA, "runA/rank0.rawtrace"], rewritten);
  assert.equal(await viewOf(reload.page), before, "the rewritten link");
  clean(reload.g, "reload");
  await reload.page.close();
});

test("a file opened while another loads: the running load's progress goes on being shown, then the second file's (before: the bar froze on the first load's last step)", async () => {
  // A dump of some 24 MB: its passes report progress once per 4 MiB window, in several steps each. Its reader holds
  // the second slice until the second file was chosen: the first load is still running then, on any machine.
  const big = join(h.dir, "big-progress.rawtrace");
  generate(300_000, big);
  assert.ok(statSync(big).size > SLICE_BYTES, "more than one slice");
  const { page, g } = await openPage(h, gatedViewer(h, SLICE_BYTES), { viewport: VIEW });
  // Every text the progress bar shows, in order.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { progressSeen: string[] }).progressSeen = seen;
    const t = document.querySelector(".progress .text")!;
    new MutationObserver(() => seen.push(t.textContent ?? "")).observe(t, { childList: true, characterData: true, subtree: true });
  });
  const gate = await readGate(page);
  await page.setInputFiles("#file", big);
  await gate.held();
  await page.waitForFunction(() => (window as unknown as { progressSeen: string[] }).progressSeen.some((x) => x.startsWith("big-progress.rawtrace: indexing")));
  await page.setInputFiles("#file", TORCH_NVTX); // queued behind the running load
  const queuedAt = await page.evaluate(() => (window as unknown as { progressSeen: string[] }).progressSeen.length);
  await gate.open();
  await page.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 2, undefined, { timeout: 120_000 });
  await page.waitForSelector("#progress", { state: "hidden" });
  const after = (await page.evaluate(() => (window as unknown as { progressSeen: string[] }).progressSeen)).slice(queuedAt);
  const first = after.filter((x) => x.startsWith("big-progress.rawtrace:"));
  assert.ok(new Set(first).size >= 3, `the running load's progress after the second file was chosen: ${JSON.stringify(first.slice(0, 8))}`);
  assert.ok(first.some((x) => x.startsWith("big-progress.rawtrace: building timeline")), "its later passes shown");
  assert.ok(after.some((x) => x.startsWith(`${basename(TORCH_NVTX)}:`)), "then the second file's");
  clean(g, "progress of a queued file");
  await page.close();
});

test("a file a link names shows its download's progress before it loads, the hint saying it is opening (before: nothing on screen until it had arrived, the hint asking for files)", async () => {
  const name = "big-fetch.rawtrace";
  generate(300_000, join(h.dir, "files", name));
  const page = await h.browser.newPage({ viewport: VIEW });
  const g = guard(page);
  // Every text the progress bar shows, from the page's first script on, and the hint's lead line shown with each.
  await page.addInitScript(() => {
    const seen: string[] = [];
    const leads: string[] = [];
    Object.assign(window, { progressSeen: seen, leadsSeen: leads });
    document.addEventListener("DOMContentLoaded", () => {
      const t = document.querySelector(".progress .text")!;
      new MutationObserver(() => {
        seen.push(t.textContent ?? "");
        const shown = [...document.querySelectorAll<HTMLElement>("#drop-hint p")].filter((p) => p.offsetParent !== null);
        leads.push(shown[0]?.textContent ?? "");
      }).observe(t, { childList: true, characterData: true, subtree: true });
    });
  });
  await page.goto(`${h.url}?open=files/${name}`);
  await page.waitForSelector("body[data-state=ready][data-summary=ready]", { state: "attached", timeout: 120_000 });
  await page.waitForSelector("#progress", { state: "hidden" });
  const seen = await page.evaluate(() => (window as unknown as { progressSeen: string[] }).progressSeen);
  const fetching = seen.filter((x) => x.startsWith(`${name}: fetching`));
  assert.ok(fetching.length >= 1, JSON.stringify(seen.slice(0, 6)));
  assert.ok(fetching.some((x) => x.endsWith("100%")), `up to 100%: ${JSON.stringify(fetching.slice(-3))}`);
  assert.ok(seen.indexOf(fetching[0]) < seen.findIndex((x) => x.startsWith(`${name}: indexing`)), "before the load");
  const leads = await page.evaluate(() => (window as unknown as { leadsSeen: string[] }).leadsSeen);
  assert.equal([...new Set(leads.filter((_, k) => seen[k].startsWith(`${name}:`)))], ["Opening the files…"], "the hint while it downloads and loads");
  assert.ok(await page.isHidden("#drop-hint"), "no hint once it is on screen");
  clean(g, "download progress");
  await page.close();
});

test("Cancel during a link's downloads stops them; the files fetched before it still open (before: none did)", async () => {
  const page = await h.browser.newPage({ viewport: VIEW });
  const g = guard(page);
  // The second file's answer is held until the click landed.
  let held!: () => void;
  const heldNow = new Promise<void>((ok) => (held = ok));
  let release!: () => void;
  const released = new Promise<void>((ok) => (release = ok));
  await page.route(`**/files/${basename(TORCH_NVTX)}`, async (route) => {
    held();
    await released;
    await route.continue().catch(() => undefined);
  });
  await page.goto(`${h.url}?open=files/${basename(CUDA_SAMPLE)}&open=files/${basename(TORCH_NVTX)}`);
  await heldNow;
  await page.click("#cancel");
  release();
  await page.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 1 &&
    document.body.dataset.state === "ready", undefined, { timeout: 60_000 });
  await page.waitForSelector("#progress", { state: "hidden" });
  // The link's files are done with once data-opening goes (web/main.ts openTogether): had the second been opened
  // after all, it is in by then (before: looked 0.5 s on).
  await page.waitForFunction(() => document.body.dataset.opening === undefined, undefined, { timeout: 60_000 });
  assert.is(await page.$$eval("#file-list .chip", (l) => l.length), 1, "the second is not opened after all");
  assert.match((await page.textContent("#file-list .chip")) ?? "", basename(CUDA_SAMPLE));
  assert.ok(await page.isHidden("#error"), "a cancel is not an error");
  clean(g, "cancelled download");
  await page.close();
});

test("a ?open= file the server does not have: the page says so, the console logs no 404 of its own", async () => {
  const { page, g } = await openPage(h, `?open=files/nope.rawtrace&open=files/${basename(CUDA_SAMPLE)}`, { viewport: VIEW });
  await page.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 1 &&
    document.body.dataset.state === "ready", undefined, { timeout: 120_000 });
  assert.match((await page.textContent("#error")) ?? "", "nope.rawtrace: cannot fetch /files/nope.rawtrace: 404 Not Found");
  // Chromium logs a fetch answered 404 as "Failed to load resource: … 404"; rawtrace's server answers it quietly.
  assert.equal(g.errors.filter((m) => /404|Failed to load resource/.test(m)), [], "no 404 on the console");
  clean(g, "missing file");
  await page.close();
});

test.run();
