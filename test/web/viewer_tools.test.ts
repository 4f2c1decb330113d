/**
 * The viewer as an analysis tool (docs/viewer.md), end to end in headless Chromium on real H100 dumps: range
 * selection and its aggregate (checked against the Chrome JSON conversion of the same file, recomputed here), sort
 * and TSV copy, training steps, files opened together, search over every event (regex, time-order stepping), the details panel and flows,
 * measure, marks and the URL hash, navigation (keys, tooltips, collapsing, resize, dark theme), and a keyboard-only
 * walk-through. The screenshots in docs/viewer/ are taken here: with RAWTRACE_DOC_SHOTS=1 they are written there
 * (to commit), else to test-results/web/docs/ (a plain run leaves the work tree clean).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { startHarness, type Harness } from "./browser.js";
import {
  argsShown, canvasData, chromeOf, chromeRow, clean, details, frame, load, openPage, pickEvent, selectFirstMatch, settledHash, type Chrome,
} from "./viewer_helpers.js";

const CUDA_SAMPLE = "test/fixtures/real/h100/cuda_sample.rawtrace";
const TORCH_NVTX = "samples/h100_torch_train_nvtx.rawtrace";
const DOCS = process.env.RAWTRACE_DOC_SHOTS === "1" ? "docs/viewer" : "test-results/web/docs";
const VIEW = { width: 960, height: 560 };

let h: Harness;
let cuda: Chrome;
let torch: Chrome;

test.before(async () => {
  mkdirSync(DOCS, { recursive: true });
  h = await startHarness();
  cuda = await chromeOf(CUDA_SAMPLE);
  torch = await chromeOf(TORCH_NVTX);
});

test.after(async () => {
  await h?.close();
});

// ---- Helpers ---------------------------------------------------------------------------------------------------

/**
 * Events the timeline shows (complete events and instants on a row), as the JSON has them. The JSON widens the NVTX
 * spans projected onto GPU streams (gpu_user_annotation) by 1 ns on each side; the timeline keeps the exact span
 * of the kernels they cover, so that is undone here.
 */
function rowEvents(t: Chrome): Array<Record<string, any>> {
  return t.traceEvents
    .filter((e) => (e.ph === "X" || e.ph === "i") && e.pid !== "")
    .map((e) => (e.cat === "gpu_user_annotation" ? { ...e, tsNs: e.tsNs + 1, durNs: e.durNs - 2 } : e));
}

/**
 * Per name: count and total ns of the parts of `evs` inside [a, b] (ns, JSON clock), as the viewer defines them
 * (web/aggregate.ts): incomplete work left out, and over all tracks (`all`) the NVTX ranges' GPU projections too.
 */
function expectAggregate(evs: Array<Record<string, any>>, a: number, b: number, all = false): Map<string, { count: number; total: number }> {
  const m = new Map<string, { count: number; total: number }>();
  for (const e of evs) {
    if (e.args?.incomplete === true || (all && e.cat === "gpu_user_annotation")) continue;
    const s = e.tsNs;
    const d = e.durNs ?? 0;
    const in0 = d > 0 ? s < b && s + d > a : s >= a && s <= b;
    if (!in0) continue;
    const x = m.get(e.name) ?? { count: 0, total: 0 };
    x.count++;
    x.total += d > 0 ? Math.min(s + d, b) - Math.max(s, a) : 0;
    m.set(e.name, x);
  }
  return m;
}

/** Row key of a JSON event: Kineto puts a stream's gpu_user_annotation spans on the stream's own tid. */
function jsonKey(e: Record<string, any>): string {
  return `${e.pid}/${e.tid}${e.cat === "gpu_user_annotation" ? "/a" : ""}`;
}

/** The same key for a viewer row (class 8: the stream's annotation row). */
function viewerKey(cls: number, a: number, b: number): string {
  return `${chromeRow(cls, a, b)}${cls === 8 ? "/a" : ""}`;
}

interface AggRow {
  name: string;
  count: number;
  total: number;
  percent: number;
}

async function rangeTable(page: Page): Promise<AggRow[]> {
  return page.$$eval("#range-table tbody tr[data-name]", (trs) =>
    trs.map((tr) => {
      const tds = tr.querySelectorAll<HTMLElement>("td");
      return { name: tr.getAttribute("data-name")!, count: Number(tds[1].dataset.count), total: Number(tds[2].dataset.ns), percent: Number(tds[6].dataset.percent) };
    }),
  );
}

function checkAggregate(got: AggRow[], want: Map<string, { count: number; total: number }>, tolNs: number, what: string): void {
  assert.is(got.length, want.size, `${what}: names`);
  for (const r of got) {
    const w = want.get(r.name);
    assert.ok(w, `${what}: ${r.name} in the JSON`);
    assert.is(r.count, w!.count, `${what}: ${r.name} count`);
    assert.ok(Math.abs(r.total - w!.total) <= tolNs, `${what}: ${r.name} total ${r.total} vs ${w!.total}`);
  }
}

/** JSON-clock ns of the viewer's trace start: a selected event's JSON start minus its "Start" field. */
async function originOf(page: Page, t: Chrome): Promise<number> {
  const d = await details(page);
  const e = t.traceEvents.find((x) => x.cat === "kernel" && x.args.correlation === Number(d.correlation))!;
  const [i, f] = d.start.split(" ")[0].split(".");
  return e.tsNs - (Number(i) * 1000 + Number(f));
}

async function shot(page: Page, name: string): Promise<void> {
  await frame(page);
  await page.screenshot({ path: `${DOCS}/${name}.png` });
}

// ---- Tests -----------------------------------------------------------------------------------------------------

test("range over the whole trace (R): per-name counts and totals equal the JSON; sort, per track, TSV copy", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW, permissions: ["clipboard-read", "clipboard-write"] });
  await load(page, CUDA_SAMPLE);
  await page.keyboard.press("r"); // nothing selected: the visible (fitted) window, which holds every event
  await page.waitForSelector("#range-table", { state: "visible" });
  const evs = rowEvents(cuda);
  checkAggregate(await rangeTable(page), expectAggregate(evs, -Infinity, Infinity, true), 0, "whole trace");
  const counted = evs.filter((e) => e.args?.incomplete !== true && e.cat !== "gpu_user_annotation");
  assert.is(Number(await page.getAttribute("body", "data-range-events")), counted.length, "every event counted once");

  // Sort by count (descending), then again (ascending).
  await page.click("#range-table th[data-col=count]");
  let rows = await rangeTable(page);
  assert.ok(rows.every((r, k) => k === 0 || rows[k - 1].count >= r.count), "count descending");
  await page.click("#range-table th[data-col=count]");
  rows = await rangeTable(page);
  assert.ok(rows.every((r, k) => k === 0 || rows[k - 1].count <= r.count), "count ascending");
  assert.is(await page.getAttribute("#range-table th[data-col=count]", "data-sort"), "asc");

  // TSV: header, one line per name, in the shown order, µs with ns precision.
  await page.click("#range-copy");
  const tsv = await page.evaluate(() => navigator.clipboard.readText());
  const lines = tsv.trimEnd().split("\n");
  assert.is(lines[0], "name\tcount\ttotal_us\tavg_us\tmin_us\tmax_us\tpercent_of_range");
  assert.is(lines.length, rows.length + 1);
  const [name, count, total] = lines[1].split("\t");
  assert.is(name, rows[0].name);
  assert.is(Number(count), rows[0].count);
  assert.is(total, (rows[0].total / 1000).toFixed(3));

  await shot(page, "range-aggregate");
  // One track: a GPU stream row; its events only.
  const opt = await page.$$eval("#range-track option", (os) => os.map((o) => ({ v: (o as HTMLOptionElement).value, t: o.textContent })));
  const stream = opt.find((o) => /stream \d+$/.test(o.t ?? ""))!;
  await page.selectOption("#range-track", stream.v);
  const li = await page.$$eval("#row-list li", (l, k) => {
    const e = l[k] as HTMLElement;
    return { cls: Number(e.dataset.class), a: Number(e.dataset.a), b: Number(e.dataset.b) };
  }, Number(stream.v.split(":")[1]));
  const key = viewerKey(li.cls, li.a, li.b);
  const mine = evs.filter((e) => jsonKey(e) === key);
  checkAggregate(await rangeTable(page), expectAggregate(mine, -Infinity, Infinity), 0, "one stream");
  clean(g, "whole-trace range");
  await page.close();
});

test("drag on the time axis, shift-drag over tracks: the aggregate equals the JSON clipped to the range", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  // The trace start on the JSON clock, from a selected kernel.
  await page.fill("#search", cuda.traceEvents.find((e) => e.cat === "kernel")!.name);
  await page.press("#search", "Enter");
  await page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
  const origin = await originOf(page, cuda);
  await page.fill("#search", "");
  await page.keyboard.press("Escape");
  await page.keyboard.press("Escape");
  await page.keyboard.press("f");
  // The emptied search runs debounced; its end may re-flow the header bar: measure the canvas after it.
  await page.waitForSelector("#search-results", { state: "hidden" });
  await frame(page);
  const box = (await page.locator("#canvas").boundingBox())!;
  const evs = rowEvents(cuda);
  const range = async () => (await canvasData(page, "range")).split(",").map(Number);

  // Axis drag: all tracks.
  await page.mouse.move(box.x + 250 + (box.width - 250) * 0.3, box.y + 10);
  await page.mouse.down();
  await page.mouse.move(box.x + 250 + (box.width - 250) * 0.62, box.y + 10, { steps: 4 });
  await page.mouse.up();
  await page.waitForSelector("#range-table", { state: "visible" });
  const [a, b] = await range();
  assert.ok(b > a, "a range");
  // data-range is rounded to the ns: an event within a ns of an edge could go either way; allow 1 ns per event.
  const want = expectAggregate(evs, origin + a, origin + b, true);
  const got = await rangeTable(page);
  checkAggregate(got, want, [...want.values()].reduce((s, x) => s + x.count, 0), "axis drag");
  assert.ok(got.length >= 1, "names in the range");

  // Shift-drag over the tracks: only the rows crossed.
  await page.mouse.move(box.x + 250 + (box.width - 250) * 0.2, box.y + 60);
  await page.keyboard.down("Shift");
  await page.mouse.down();
  await page.mouse.move(box.x + 250 + (box.width - 250) * 0.7, box.y + 140, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up("Shift");
  await frame(page);
  const [a2, b2] = await range();
  const picked = await page.$$eval("#range-track option", (os) => os.slice(1).map((o) => Number((o as HTMLOptionElement).value.split(":")[1])));
  assert.ok(picked.length >= 1 && picked.length < 12, `${picked.length} rows picked`);
  const rowsInfo = await page.$$eval("#row-list li", (l) => l.map((e) => ({ cls: Number((e as HTMLElement).dataset.class), a: Number((e as HTMLElement).dataset.a), b: Number((e as HTMLElement).dataset.b) })));
  const keys = new Set(picked.map((r) => viewerKey(rowsInfo[r].cls, rowsInfo[r].a, rowsInfo[r].b)));
  const want2 = expectAggregate(evs.filter((e) => keys.has(jsonKey(e))), origin + a2, origin + b2);
  checkAggregate(await rangeTable(page), want2, [...want2.values()].reduce((s, x) => s + x.count, 0), "shift-drag");
  await shot(page, "range-tracks");
  // A click on the axis clears the range.
  const now = (await page.locator("#canvas").boundingBox())!;
  await page.mouse.click(now.x + 250 + (now.width - 250) / 2, now.y + 10);
  await page.waitForSelector("#range", { state: "hidden" });
  clean(g, "drag ranges");
  await page.close();
});

test("a #steps= pattern that is not a regular expression: said once, the file still opens with the default steps", async () => {
  const { page, g } = await openPage(h, "#steps=(", { viewport: VIEW });
  await page.waitForSelector("#error", { state: "visible" });
  assert.match((await page.textContent("#error")) ?? "", /^#steps=\( in the address is not a regular expression/);
  await load(page, TORCH_NVTX);
  assert.ok((await page.$$("#row-list li")).length > 0, "the file opened");
  clean(g, "bad #steps=");
  await page.close();
});

test("steps (--steps as #steps=): listed, a click selects the step's span and aggregates it", async () => {
  const { page, g } = await openPage(h, "#steps=train_step", { viewport: VIEW });
  await load(page, TORCH_NVTX);
  const steps = torch.traceEvents
    .filter((e) => e.ph === "X" && e.name === "train_step" && e.cat !== "gpu_user_annotation")
    .sort((x, y) => x.tsNs - y.tsNs);
  assert.ok(steps.length >= 3, `${steps.length} steps`);
  const items = await page.$$eval("#steps li", (l) => l.map((li) => (li as HTMLElement).dataset.step));
  assert.equal(items, steps.map((_, k) => String(k + 1)), "steps numbered 1… in start order");
  await page.click("#steps li:nth-child(2) button");
  await page.waitForSelector("#range-table", { state: "visible" });
  assert.is(Number(await page.getAttribute("#range-info", "data-ns")), steps[1].durNs, "range = step 2's span");
  const d = await details(page);
  assert.is(d.step, "2");
  const got = await rangeTable(page);
  const want = expectAggregate(rowEvents(torch), steps[1].tsNs, steps[1].tsNs + steps[1].durNs, true);
  checkAggregate(got, want, 0, "step 2");
  await shot(page, "steps");
  // The selected step's details offer its span again once the range is cleared (a click on the axis).
  const box = (await page.locator("#canvas").boundingBox())!;
  await page.mouse.click(box.x + 250 + (box.width - 250) / 2, box.y + 10);
  await page.waitForSelector("#range", { state: "hidden" });
  await page.click("#details-body [data-field=step-range] button");
  await page.waitForSelector("#range", { state: "visible" });
  assert.is(Number(await page.getAttribute("#range-info", "data-ns")), steps[1].durNs);
  clean(g, "steps");
  await page.close();
});

test("a link to a two-file view (?open= twice, a selection in the second file) reopens that view", async () => {
  mkdirSync(join(h.dir, "files"), { recursive: true });
  copyFileSync(CUDA_SAMPLE, join(h.dir, "files", "one.rawtrace"));
  copyFileSync(TORCH_NVTX, join(h.dir, "files", "two.rawtrace"));
  const only = torch.traceEvents.find((e) => e.cat === "kernel" && !cuda.traceEvents.some((c) => c.name === e.name))!;
  const open = "?open=files/one.rawtrace&open=files/two.rawtrace";
  const ready = (p: Page) => p.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 2 &&
    document.body.dataset.state === "ready", undefined, { timeout: 120_000 });
  const first = await openPage(h, open, { viewport: VIEW });
  await ready(first.page);
  await first.page.fill("#search", only.name);
  await first.page.press("#search", "Enter");
  await first.page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
  await frame(first.page);
  const before = await details(first.page);
  // The hash follows the view after a short delay: wait for the selection to be in it (in the second file).
  await first.page.waitForFunction(() => /ev=1(:|%3A)/.test(location.hash));
  const hash = await settledHash(first.page);
  await first.page.close();
  const again = await openPage(h, `${open}${hash}`, { viewport: VIEW });
  await ready(again.page);
  await again.page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
  await frame(again.page);
  assert.equal(await details(again.page), before, "same selection");
  clean(again.g, "two-file link");
  clean(first.g, "two-file view");
  await again.page.close();
});

test("the same file opened twice: two groups of rows, not one merged group", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  const one = (await page.getAttribute("#canvas", "data-groups"))!.split("|");
  await page.setInputFiles("#file", CUDA_SAMPLE);
  await page.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 2);
  await page.waitForFunction((n) => (document.querySelector("#canvas")?.getAttribute("data-groups") ?? "").split("|").length === n, 2 * one.length);
  const two = (await page.getAttribute("#canvas", "data-groups"))!.split("|");
  assert.ok(two.some((k) => k.startsWith("cuda_sample.rawtrace (2) · ")), two.join(" | "));
  // The range panel's track list names the second copy the same way (R: the visible window as the range).
  await page.click("#canvas", { position: { x: 5, y: 5 } });
  await page.keyboard.press("r");
  await page.waitForFunction(() => document.querySelectorAll("#range-track option").length > 1);
  const tracks = await page.$$eval("#range-track option", (os) => os.map((o) => o.textContent ?? ""));
  assert.ok(tracks.some((t) => t.startsWith("cuda_sample.rawtrace (2) · ")), tracks.join(" | "));
  // So do the file chips and the export and summary choices.
  const chips = await page.$$eval("#file-list .chip", (cs) => cs.map((c) => c.textContent ?? ""));
  assert.ok(chips[1].startsWith("cuda_sample.rawtrace (2) · "), chips.join(" | "));
  const exports = await page.$$eval("#export-file option", (os) => os.map((o) => o.textContent ?? ""));
  assert.equal(exports, ["cuda_sample.rawtrace", "cuda_sample.rawtrace (2)"]);
  clean(g, "same file twice");
  await page.close();
});

test("a file loaded after a search joins it: the count covers both files", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW });
  await load(page, TORCH_NVTX);
  const name = /^cudaLaunchKernel$/i;
  const inTorch = rowEvents(torch).filter((e) => name.test(e.name)).length;
  const inCuda = rowEvents(cuda).filter((e) => name.test(e.name)).length;
  assert.ok(inTorch > 0 && inCuda > 0);
  await page.check("#search-regex");
  await page.fill("#search", "^cudaLaunchKernel$");
  await page.waitForFunction((n) => document.body.dataset.searchMatches === String(n), inTorch);
  await page.setInputFiles("#file", CUDA_SAMPLE);
  await page.waitForFunction((n) => document.body.dataset.searchMatches === String(n), inTorch + inCuda);
  clean(g, "search after a second file");
  await page.close();
});

test("search: regex over every event, total, Enter / Shift+Enter in time order with wrap-around, bad regex named", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW });
  await load(page, TORCH_NVTX);
  const re = /^cudaLaunchKernel(ExC)?$/i;
  const want = rowEvents(torch).filter((e) => re.test(e.name)).sort((x, y) => x.tsNs - y.tsNs);
  await page.check("#search-regex");
  await page.fill("#search", "^cudaLaunchKernel(ExC)?$");
  await page.waitForFunction((n) => document.body.dataset.searchMatches === String(n), want.length);
  const corr = async (key: string) => {
    await page.press("#search", key);
    await page.waitForFunction(() => document.body.dataset.searchRank !== undefined);
    await frame(page);
    const d = await details(page);
    return { rank: Number(await page.getAttribute("body", "data-search-rank")), corr: Number(d.correlation), text: await page.textContent("#search-count") };
  };
  const first = await corr("Enter");
  assert.is(first.rank, 1);
  assert.is(first.corr, want[0].args.correlation, "first in time order");
  const second = await corr("Enter");
  assert.is(second.rank, 2);
  assert.is(second.corr, want[1].args.correlation);
  assert.is(second.text, `2 of ${want.length} matches`);
  await corr("Shift+Enter");
  const last = await corr("Shift+Enter");
  assert.is(last.rank, want.length, "Shift+Enter before the first wraps to the last");
  assert.is(last.corr, want[want.length - 1].args.correlation);
  await shot(page, "search");
  await page.fill("#search", "(unclosed");
  await page.waitForFunction(() => /^bad expression/.test(document.querySelector("#search-count")!.textContent ?? ""));
  assert.ok(await page.$("#search.bad"));
  clean(g, "search regex");
  await page.close();
});

test("details: every field of a kernel, a copy and a launch; the launch lists its kernels; the flow is drawn", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  const copy = cuda.traceEvents.find((e) => e.cat === "gpu_memcpy")!;
  await page.fill("#search", copy.name);
  await page.press("#search", "Enter");
  await page.waitForSelector("#details-body [data-field=bandwidth]", { state: "attached" });
  let d = await details(page);
  assert.is(d.kind, "memcpy");
  assert.is(d.bytes.split(" ")[0].replace(/,/g, ""), String(copy.args.bytes));
  assert.is(d.device, String(copy.args.device));
  assert.is(d.stream, String(copy.args.stream));
  assert.ok(d["src-kind"] && d["dst-kind"], "memory kinds");
  // The host side of a copy is the host, not the device id the record leaves there.
  if (/HtoD/.test(copy.name)) assert.is(d["copy-devices"], `host → device ${copy.args.device}`);
  else if (/DtoH/.test(copy.name)) assert.is(d["copy-devices"], `device ${copy.args.device} → host`);
  assert.is(d.bandwidth, `${(copy.args.bytes / copy.durNs).toFixed(3)} GB/s`);
  // A launch: its kernels (same correlation) listed and clickable.
  const k = cuda.traceEvents.find((e) => e.cat === "kernel")!;
  const launch = cuda.traceEvents.find((e) => e.cat === "cuda_runtime" && e.args.correlation === k.args.correlation)!;
  await page.fill("#search", launch.name);
  for (let n = 0; n < 400; n++) {
    await page.press("#search", "Enter");
    await frame(page);
    if ((await details(page)).correlation === String(k.args.correlation)) break;
  }
  d = await details(page);
  assert.is(d.correlation, String(k.args.correlation), "found the launch");
  assert.is(d.kind, "CUDA runtime API");
  assert.is(d.tid, String(launch.tid));
  assert.ok(d.return !== undefined, "return value");
  const kernels = cuda.traceEvents.filter((e) => e.cat === "kernel" && e.args.correlation === k.args.correlation);
  assert.is(await page.$$eval("#details-body ol.launched li", (l) => l.length), kernels.length);
  assert.ok((await canvasData(page, "flow")).split(",").length === 4, "flow arrow host → device drawn");
  await shot(page, "details-launch");
  await page.click("#details-body ol.launched li:first-child button");
  await page.waitForFunction(() => document.querySelector("#details-body [data-field=kind]")?.textContent === "kernel");
  d = await details(page);
  assert.is(d.grid, `[${k.args.grid.join(", ")}]`);
  assert.is(d.block, `[${k.args.block.join(", ")}]`);
  assert.is(d.stream, String(k.args.stream));
  assert.is(d.context, String(k.args.context));
  assert.is(d.registers, String(k.args["registers per thread"]));
  assert.is(Number(d["shared-static"]) + Number(d["shared-dynamic"]), k.args["shared memory"]);
  assert.match(d.occupancy, /^\d+\.\d\d %$/);
  assert.ok(d.partner.startsWith(launch.name), "launched by, clickable back");
  clean(g, "details");
  await page.close();
});

test("measure (Ctrl+drag snaps to edges; M between two slices), marks (N) and the URL hash reopen the same view", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  const kernels = cuda.traceEvents.filter((e) => e.cat === "kernel").sort((x, y) => x.tsNs - y.tsNs);
  const [k1, k2] = kernels;
  await page.fill("#search", k1.name);
  await page.press("#search", "Enter");
  await page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
  // Select k1 precisely (the search may land on another call of the same kernel).
  const pick = (k: Record<string, any>) => pickEvent(page, k);
  await pick(k1);
  await page.locator("#canvas").focus();
  await page.keyboard.press("m");
  await pick(k2);
  await page.locator("#canvas").focus();
  await page.keyboard.press("m");
  await frame(page);
  assert.is(Number(await canvasData(page, "measure-ns")), k2.tsNs - (k1.tsNs + k1.durNs), "gap k1 end → k2 start");
  await page.keyboard.press("n");
  assert.is(await canvasData(page, "marks"), "1");
  await page.keyboard.press("r");
  await page.waitForSelector("#range-table", { state: "visible" });
  await shot(page, "measure");
  await page.waitForFunction(() => /measure=/.test(location.hash) && /marks=/.test(location.hash) && /range=/.test(location.hash));
  const hash = await settledHash(page);
  const before = { d: await details(page), range: await canvasData(page, "range"), measure: await canvasData(page, "measure-ns") };
  const pic = await page.locator("#canvas").screenshot();
  clean(g, "measure");
  await page.close();

  // The link opens the same view once the file is loaded: here the server offers the file (?open=, as
  // `rawtrace view` does), so the page opens it by itself; another origin is refused without a request.
  mkdirSync(join(h.dir, "files"), { recursive: true });
  copyFileSync(CUDA_SAMPLE, join(h.dir, "files", "cuda_sample.rawtrace"));
  const again = await openPage(h, `?open=files/cuda_sample.rawtrace&open=http://example.com/x.rawtrace${hash}`, { viewport: VIEW });
  await again.page.waitForSelector("body[data-state=ready][data-summary=ready]", { state: "attached", timeout: 120_000 });
  await again.page.waitForSelector("#range-table", { state: "visible" });
  await frame(again.page);
  assert.equal(await details(again.page), before.d, "same selection");
  assert.is(await canvasData(again.page, "range"), before.range);
  assert.is(await canvasData(again.page, "measure-ns"), before.measure);
  assert.is(await canvasData(again.page, "marks"), "1");
  assert.is(await settledHash(again.page), hash, "the hash is kept (also once rewritten)");
  assert.match((await again.page.textContent("#error")) ?? "", /open=http:\/\/example\.com\/x\.rawtrace: another site \(http:\/\/example\.com\): only files of this server are opened/);
  assert.ok(pic.length > 0);
  clean(again.g, "hash");
  await again.page.close();

  // A view of another file is not applied to this one; the hash then follows the file opened.
  const other = await openPage(h, "#file=other.rawtrace&range=1000,2000&marks=5", { viewport: VIEW });
  await load(other.page, CUDA_SAMPLE);
  await other.page.waitForFunction(() => /file=cuda_sample\.rawtrace/.test(location.hash));
  assert.ok(await other.page.isHidden("#range"), "no range from another file's view");
  assert.is(await canvasData(other.page, "marks"), "");
  clean(other.g, "hash of another file");
  await other.page.close();
});

test("navigation: tooltips follow the view and stay inside it, groups collapse, resize, dark theme", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  const kernel = cuda.traceEvents.find((e) => e.cat === "kernel")!;
  await page.fill("#search", kernel.name);
  await page.press("#search", "Enter");
  await page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
  await page.fill("#search", "");
  await page.waitForSelector("#search-results", { state: "hidden" });
  await frame(page);
  const box = (await page.locator("#canvas").boundingBox())!;
  const x = Number(await canvasData(page, "sel-x"));
  const y = Number(await canvasData(page, "sel-y"));
  await page.mouse.move(box.x + x, box.y + y);
  await page.waitForSelector("#tooltip", { state: "visible" });
  assert.ok((await page.textContent("#tooltip"))!.startsWith(kernel.name.slice(0, 20)));
  // Pan the slice away with the keyboard: the tooltip does not stay behind.
  await page.locator("#search").blur();
  for (let i = 0; i < 8; i++) await page.keyboard.press("d");
  await frame(page);
  await frame(page);
  const tipText = (await page.isVisible("#tooltip")) ? await page.textContent("#tooltip") : null;
  assert.ok(tipText === null || !tipText.startsWith(kernel.name.slice(0, 20)) , "no stale tooltip");
  await page.keyboard.press("f");
  // Near the right and bottom edges the tooltip flips to the other side of the pointer, inside the timeline: a long
  // call (cudaHostAlloc) zoomed in until it covers the whole plot, hovered at the plot's right end.
  await page.fill("#search", "cudaHostAlloc");
  await page.press("#search", "Enter");
  await page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
  await page.locator("#search").blur();
  for (let i = 0; i < 4; i++) await page.keyboard.press("w");
  await frame(page);
  const tl = (await page.locator("#timeline").boundingBox())!;
  const sy = Number(await canvasData(page, "sel-y"));
  await page.mouse.move(tl.x + tl.width - 3, box.y + sy);
  await page.waitForSelector("#tooltip", { state: "visible" });
  assert.ok((await page.textContent("#tooltip"))!.startsWith("cudaHostAlloc"));
  const tb = (await page.locator("#tooltip").boundingBox())!;
  assert.ok(tb.x >= tl.x && tb.x + tb.width <= tl.x + tl.width + 0.5, `tooltip inside: ${tb.x}+${tb.width} vs ${tl.x}+${tl.width}`);
  assert.ok(tb.x + tb.width < tl.x + tl.width - 3, "flipped to the left of the pointer");
  await page.keyboard.press("Escape");
  await page.keyboard.press("f");
  await page.mouse.move(1, 1);
  // Collapse the first group (a click on its header).
  const shown = Number(await canvasData(page, "rows-shown"));
  await page.mouse.click(box.x + 60, box.y + 24 + 10);
  await frame(page);
  assert.is(await canvasData(page, "collapsed"), "1");
  assert.ok(Number(await canvasData(page, "rows-shown")) < shown, "its rows hidden");
  await shot(page, "collapsed");
  await page.mouse.click(box.x + 60, box.y + 24 + 10);
  await frame(page);
  assert.is(Number(await canvasData(page, "rows-shown")), shown, "expanded again");
  // Pin the second group (the GPU) to the top, unpin it; move it up one place.
  const groups = (await canvasData(page, "groups")).split("|");
  assert.is(groups.length, 2, "a process and a GPU");
  const headerY = async (k: number) => box.y + 24 + Number((await canvasData(page, "header-ys")).split(",")[k]) + 10;
  await page.mouse.click(box.x + 250 - 11, await headerY(1));
  await frame(page);
  assert.equal((await canvasData(page, "groups")).split("|"), [groups[1], groups[0]], "pinned to the top");
  await shot(page, "pinned");
  await page.mouse.click(box.x + 250 - 11, await headerY(0));
  await frame(page);
  assert.equal((await canvasData(page, "groups")).split("|"), groups, "unpinned");
  await page.mouse.click(box.x + 250 - 33, await headerY(1));
  await frame(page);
  assert.equal((await canvasData(page, "groups")).split("|"), [groups[1], groups[0]], "moved up");
  assert.is(Number(await canvasData(page, "rows-shown")), shown, "no rows lost");
  // The layout follows the window.
  await page.setViewportSize({ width: 800, height: 500 });
  await page.waitForFunction((w) => (document.querySelector("#canvas") as HTMLCanvasElement).getBoundingClientRect().width < w - 50, box.width);
  // A narrow window keeps a plot beside the 250 px of row labels, and the zoom keys zoom there (before: at 630 px the
  // side panel took all but the labels, and W jumped to the widest view, stuck there).
  for (const width of [640, 630, 400]) {
    await page.setViewportSize({ width, height: 400 });
    await page.waitForFunction((w) => document.documentElement.clientWidth === w, width);
    await frame(page);
    const cw = (await page.locator("#canvas").boundingBox())!.width;
    // At 400 px only the labels fit: no plot, but the keys still work on a window (no NaN from a plot of no width).
    if (width > 400) assert.ok(cw >= 250 + 150, `width ${width}: canvas ${cw} px, a plot of ${cw - 250} px`);
    const win = async () => (await canvasData(page, "window")).split(",").map(Number);
    const span = async () => {
      const [a, b] = await win();
      return b - a;
    };
    const before = await span();
    await page.keyboard.press("w");
    await frame(page);
    const after = await span();
    assert.ok(after < before && after > 0, `width ${width}: W zooms in (${before} → ${after} ns)`);
    // D pans a fifth of the window forward (before, at 400 px: 6 windows backwards).
    const [a0, b0] = await win();
    await page.keyboard.press("d");
    await frame(page);
    const [a1, b1] = await win();
    assert.ok(Math.abs((a1 - a0) / (b0 - a0) - 0.2) < 0.01 && Math.abs(b1 - a1 - (b0 - a0)) <= 1, `width ${width}: D moved ${a0},${b0} → ${a1},${b1}`);
    await page.keyboard.press("f");
    await frame(page);
  }
  // Dark theme from the system setting: page and canvas.
  await page.setViewportSize(VIEW);
  await page.emulateMedia({ colorScheme: "dark" });
  await frame(page);
  assert.is(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), "rgb(30, 31, 34)");
  const px = await page.evaluate(() => {
    const c = document.querySelector("#canvas") as HTMLCanvasElement;
    return [...c.getContext("2d")!.getImageData(c.width - 3, c.height - 3, 1, 1).data];
  });
  assert.ok(px[0] < 80 && px[1] < 80 && px[2] < 80, `dark canvas background ${px}`);
  await shot(page, "dark");
  clean(g, "navigation");
  await page.close();
});

test("keyboard only: open, search, zoom, select a range, read and sort the aggregate, measure", async () => {
  const { page, g } = await openPage(h, "", { viewport: VIEW });
  await load(page, TORCH_NVTX); // the file chooser is the browser's own dialog; everything after is keys
  await shot(page, "walk-1-open");
  // "/" focuses the search; Enter shows and selects the first match in time order.
  await page.keyboard.press("/");
  assert.ok(await page.evaluate(() => document.activeElement?.id === "search"));
  await page.keyboard.type("cudaLaunchKernel");
  await page.keyboard.press("Enter");
  await page.waitForSelector("#details-body [data-field=correlation]", { state: "attached" });
  const first = await details(page);
  await page.keyboard.press("Escape"); // leaves the box; the timeline keys work again
  await page.keyboard.press("m"); // measure from the first launch …
  await page.keyboard.press("/");
  await page.keyboard.press("Enter"); // … to the next one
  await frame(page);
  const second = await details(page);
  assert.ok(second.correlation !== first.correlation, `next launch: ${JSON.stringify([first.correlation, second.correlation, await page.inputValue("#search"), await page.textContent("#search-count"), await page.evaluate(() => document.activeElement?.id)])}`);
  await page.keyboard.press("Escape");
  await page.keyboard.press("m");
  await frame(page);
  const gap = Number(await canvasData(page, "measure-ns"));
  const e1 = torch.traceEvents.find((e) => e.cat === "cuda_runtime" && e.args.correlation === Number(first.correlation))!;
  const e2 = torch.traceEvents.find((e) => e.cat === "cuda_runtime" && e.args.correlation === Number(second.correlation))!;
  assert.is(gap, e2.tsNs - (e1.tsNs + e1.durNs), "measured the gap between the two launches");
  await shot(page, "walk-2-measure");
  // Zoom out with S, then R: the visible window becomes the range.
  const before = await canvasData(page, "draw-ms");
  for (let i = 0; i < 6; i++) await page.keyboard.press("s");
  await page.keyboard.press("ArrowLeft");
  assert.ok(before !== undefined);
  await page.keyboard.press("Escape"); // clear the selection (R would take its span)
  await page.keyboard.press("r");
  await page.waitForSelector("#range-table", { state: "visible" });
  const [a, b] = (await canvasData(page, "range")).split(",").map(Number);
  assert.ok(b > a);
  // Tab to the "count" heading and sort with Enter.
  let tabs = 0;
  while (!(await page.evaluate(() => (document.activeElement as HTMLElement)?.dataset?.col === "count"))) {
    assert.ok(++tabs < 80, "Tab reaches the table's headings");
    await page.keyboard.press("Tab");
  }
  await page.keyboard.press("Enter");
  await page.waitForSelector("#range-table th[data-col=count][data-sort=desc]", { state: "attached" });
  const rows = await rangeTable(page);
  assert.ok(rows.length > 0, "events in the range");
  assert.ok(rows.every((r, k) => k === 0 || rows[k - 1].count >= r.count), "sorted by count");
  assert.ok(rows.some((r) => r.name === "cudaLaunchKernel"), "the launches are in it");
  await shot(page, "walk-3-aggregate");
  clean(g, "keyboard walk");
  await page.close();
});

test("a dump over 64 MiB has its args read only when asked (one more pass over 1.1 GB took 2.8 s and a 512 MiB core); ?args=ask asks for every dump", async () => {
  const path = "samples/gaudi2_mlp_synapse.rawtrace";
  const t = await chromeOf(path);
  const first = t.traceEvents.filter((e: Record<string, any>) => e.cat === "kernel" && e.args.flops !== undefined).sort((a: any, b: any) => a.tsNs - b.tsNs)[0];
  const { page, g } = await openPage(h, "?args=ask", { viewport: VIEW });
  await load(page, path);
  await selectFirstMatch(page, `^${first.name.replace(/[.*+?^$()|[\]{}\\]/g, (m: string) => `\\${m}`)}$`);
  await page.waitForSelector("body[data-args=ask]", { state: "attached" });
  assert.match(await page.$eval("#details-body button.args-read", (b) => b.textContent ?? ""), /^read them \(the .+ dump again\)$/);
  assert.is(await page.$$eval("#details-body dl.args [data-field^='arg:']", (els) => els.length), 0, "nothing read before the click");
  await page.click("#details-body button.args-read");
  const shown = await argsShown(page);
  assert.ok(shown.some(([k]) => k === "flops"), shown.map(([k]) => k).join(", "));
  clean(g, "args on request");
  await page.close();
});

test.run();
