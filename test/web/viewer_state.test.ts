/**
 * The viewer's marks, range and URL hash as the user changes them (web/keys.ts N, web/view.ts double-click on the
 * axis, web/main.ts applyHash), end to end in headless Chromium: N marks a slice's start and removes only a mark
 * exactly there, a double-click on the axis adds a mark without losing the range, a hash pasted later replaces
 * the view instead of merging with it, a window far from the trace (a link, or zooming out without end) is kept
 * within reach, as are a link's range, measure and marks (each mark once), and a bad search expression leaves the
 * last search as it was.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Page } from "playwright-core";
import { CUDA_SAMPLE, clean, details, frame, load, openPage, pickEvent, settledHash, viewerSuite } from "./viewer_helpers.js";

const VIEW = { width: 960, height: 560 };
/** Plot width (px) at VIEW: the canvas less the label gutter (web/overlays.ts GUTTER). */
const PLOT_W = 960 - 250;

const v = viewerSuite(test);

const data = async (page: Page, key: string) => (await page.getAttribute("#canvas", `data-${key}`)) ?? "";

/** The marks of the page's hash (ns since the trace start). */
async function hashMarks(page: Page): Promise<number[]> {
  const m = new URLSearchParams((await settledHash(page)).slice(1)).get("marks");
  return m ? m.split(",").map(Number) : [];
}

test("N on a second slice less than 3 px from the first's mark (zoomed out) adds a mark; N again removes only its own", async () => {
  const { page, g } = await openPage(v.h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  // Two kernels that start apart, closer than 3 px when the whole trace is shown.
  const ks = v.cuda.traceEvents.filter((e) => e.cat === "kernel").sort((x, y) => x.tsNs - y.tsNs);
  let pair: [Record<string, any>, Record<string, any>] = [ks[0], ks[1]];
  for (let i = 1; i < ks.length; i++) {
    const d = ks[i].tsNs - ks[i - 1].tsNs;
    if (d > 0 && (d < pair[1].tsNs - pair[0].tsNs || pair[1].tsNs === pair[0].tsNs)) pair = [ks[i - 1], ks[i]];
  }
  const [k1, k2] = pair;
  const mark = async (k: Record<string, any>) => {
    await pickEvent(page, k);
    await page.locator("#canvas").focus();
    await page.keyboard.press("f");
    await page.keyboard.press("n");
    await frame(page);
  };
  await mark(k1);
  const [w0, w1] = (await data(page, "window")).split(",").map(Number);
  assert.ok(k2.tsNs - k1.tsNs < (3 * (w1 - w0)) / PLOT_W, `${k2.tsNs - k1.tsNs} ns apart: within 3 px of the fitted view`);
  const [m1] = await hashMarks(page);
  assert.is(await data(page, "marks"), "1");
  await mark(k2);
  assert.is(await data(page, "marks"), "2", "a mark at the second slice's start, the first kept");
  const both = await hashMarks(page);
  assert.equal(both, [m1, m1 + (k2.tsNs - k1.tsNs)]);
  await page.keyboard.press("n");
  await frame(page);
  assert.equal(await hashMarks(page), [m1], "N again: the mark exactly at the slice's start goes, the other stays");
  clean(g, "marks by N");
  await page.close();
});

test("a double-click on the time axis adds a mark and keeps the range", async () => {
  const { page, g } = await openPage(v.h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  await frame(page);
  const box = (await page.locator("#canvas").boundingBox())!;
  const x = (f: number) => box.x + 250 + (box.width - 250) * f;
  await page.mouse.move(x(0.3), box.y + 10);
  await page.mouse.down();
  await page.mouse.move(x(0.6), box.y + 10, { steps: 4 });
  await page.mouse.up();
  await page.waitForSelector("#range-table", { state: "visible" });
  const range = await data(page, "range");
  assert.ok(range, "a range");
  await page.mouse.dblclick(x(0.45), box.y + 10);
  await frame(page);
  assert.is(await data(page, "marks"), "1", "a mark");
  assert.is(await data(page, "range"), range, "the range kept");
  assert.ok(await page.isVisible("#range-table"), "its aggregate too");
  // A single click on the axis still clears it.
  await page.mouse.click(x(0.8), box.y + 10);
  await frame(page);
  assert.is(await data(page, "range"), "");
  clean(g, "double-click on the axis");
  await page.close();
});

test("a hash pasted later replaces the view: the range, measure, marks, selection and search it leaves out are cleared", async () => {
  const { page, g } = await openPage(v.h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  const k = v.cuda.traceEvents.find((e) => e.cat === "kernel")!;
  await pickEvent(page, k);
  await page.locator("#canvas").focus();
  for (const key of ["r", "n", "m", "m"]) await page.keyboard.press(key);
  await page.waitForSelector("#range-table", { state: "visible" });
  const before = new URLSearchParams((await settledHash(page)).slice(1));
  for (const f of ["range", "marks", "measure", "ev", "q"]) assert.ok(before.get(f), `${f} in the hash before: ${before}`);
  // Another view of the same file, with a window and nothing else.
  const other = new URLSearchParams({ file: before.get("file")!, fid: before.get("fid")!, view: "1000,2000000" });
  await page.evaluate((hash) => { location.hash = hash; }, `#${other}`);
  await page.waitForFunction(() => document.querySelector("#canvas")?.getAttribute("data-window") === "1000,2000000");
  await frame(page);
  assert.is(await data(page, "range"), "", "no range");
  assert.is(await data(page, "marks"), "0", "no marks");
  assert.is(await data(page, "measure-ns"), "", "no measure");
  assert.equal(await details(page), {}, "nothing selected");
  assert.is(await page.inputValue("#search"), "", "no search");
  assert.is(await settledHash(page), `#${other}`, "the hash written back is the one pasted");
  // A hash with a range only: the window is fitted (none given), the range set.
  await page.evaluate((hash) => { location.hash = hash; }, `#${new URLSearchParams({ file: before.get("file")!, range: "5000,9000" })}`);
  await page.waitForFunction(() => document.querySelector("#canvas")?.getAttribute("data-range") === "5000,9000");
  assert.is.not(await data(page, "window"), "1000,2000000");
  clean(g, "pasted hash");
  await page.close();
});

/**
 * A page with the CUDA sample loaded, its hash, and where its slices lie: first start and last end (ns, Chrome
 * times) and the widest window the viewer allows (20 × that extent, at least 100 s).
 */
async function loadedForReach() {
  const { page, g } = await openPage(v.h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  const hash = new URLSearchParams((await settledHash(page)).slice(1));
  const first = Math.min(...v.cuda.traceEvents.filter((e) => e.ph === "X").map((e) => e.tsNs));
  const last = Math.max(...v.cuda.traceEvents.filter((e) => e.ph === "X").map((e) => e.tsNs + (e.durNs ?? 0)));
  return { page, g, hash, first, last, maxSpan: Math.max((last - first) * 20, 1e11) };
}

test("a window from a link far from the trace, and zooming out without end: the page answers, the window stays within 20 × the trace", async () => {
  const { page, g, hash, first, last, maxSpan } = await loadedForReach();
  // 3e17 ns from the start: a 50 ns step there is below a double's resolution (the axis's tick loop never ended).
  const far = new URLSearchParams({ file: hash.get("file")!, fid: hash.get("fid")!, view: "300000000000000000,300000000000000050" });
  await page.evaluate((x) => { location.hash = x; }, `#${far}`);
  await page.waitForFunction(() => document.querySelector("#canvas")?.getAttribute("data-window") !== null);
  await frame(page);
  const [a, b] = (await data(page, "window")).split(",").map(Number);
  assert.ok(a <= last - first + maxSpan + 1, `window start ${a} within reach of the events`);
  assert.ok(b - a >= 50 && b - a <= maxSpan, `window ${b - a} ns`);
  // S held down: zooming out stops at 20 × the events' extent (at least 100 s).
  await page.locator("#canvas").focus();
  for (let k = 0; k < 150; k++) await page.keyboard.press("s");
  for (let k = 0; k < 3; k++) await page.keyboard.press("w");
  await frame(page);
  const [c, d] = (await data(page, "window")).split(",").map(Number);
  assert.ok(d - c <= maxSpan && d - c > maxSpan / 4, `zoomed out to ${d - c} ns (at most ${maxSpan})`);
  assert.is(await page.evaluate(() => 1 + 1), 2, "the page answers");
  clean(g, "far window");
  await page.close();
});

test("a link's range, measure and marks far out of reach (±1e308) or repeated: within 20 × the trace, each mark once, the hash written back finite", async () => {
  const { page, g, hash, first, last, maxSpan } = await loadedForReach();
  // Before: the measure read "Infinity", the range panel spanned 2e308 ns, a repeated mark needed two toggles.
  const wild = new URLSearchParams({
    file: hash.get("file")!, fid: hash.get("fid")!, view: "0,20000",
    range: "1e308,-1e308", measure: "1e308,-1e308", marks: "5000,5000,7000,-1e300",
  });
  await page.evaluate((x) => { location.hash = x; }, `#${wild}`);
  await page.waitForFunction(() => document.querySelector("#canvas")?.getAttribute("data-window") === "0,20000");
  await frame(page);
  // Times since the trace start (its first event): reach is [-maxSpan, last - first + maxSpan].
  const [r0, r1] = (await data(page, "range")).split(",").map(Number);
  assert.ok(Math.abs(r0 + maxSpan) <= 1 && Math.abs(r1 - (last - first + maxSpan)) <= 1, `range ${r0},${r1}`);
  const measure = Number(await data(page, "measure-ns"));
  assert.ok(Math.abs(measure - (last - first + 2 * maxSpan)) <= 1, `measure ${measure} ns`);
  assert.is(await data(page, "marks"), "2", "5000 once, 7000; -1e300 is out of reach");
  const back = new URLSearchParams((await settledHash(page)).slice(1));
  for (const f of ["range", "measure", "marks"]) {
    assert.ok(back.get(f)!.split(",").every((x) => /^-?\d+$/.test(x) && Math.abs(Number(x)) <= last - first + maxSpan + 1), `${f}=${back.get(f)}`);
  }
  assert.is(back.get("marks"), "5000,7000");
  clean(g, "wild link");
  await page.close();
});

test("a bad expression after a search is named and changes nothing: the list, the highlights and Enter's stepping stay the last search's", async () => {
  const { page, g } = await openPage(v.h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  await page.check("#search-regex");
  await page.fill("#search", "^cudaLaunchKernel$");
  const n = v.cuda.traceEvents.filter((e) => e.ph === "X" && e.name === "cudaLaunchKernel").length;
  assert.ok(n > 1);
  await page.waitForFunction((k) => document.body.dataset.searchMatches === String(k), n);
  const listed = await page.locator("#search-results li").count();
  assert.ok(listed > 0);
  await page.fill("#search", "^cudaLaunchKernel$(");
  await page.press("#search", "Enter");
  await page.waitForFunction(() => /^bad expression/.test(document.querySelector("#search-count")!.textContent ?? ""));
  assert.ok(await page.$("#search.bad"));
  assert.is(await page.getAttribute("body", "data-search-matches"), String(n), "the highlights are the last search's");
  assert.is(await page.locator("#search-results li").count(), listed, "so is the list");
  assert.ok(await page.isVisible("#search-results"));
  assert.is(await page.getAttribute("body", "data-search-rank"), null, "Enter stepped nothing");
  assert.match((await page.textContent("#search-count")) ?? "", /^bad expression/, "the count still names the error");
  // Fixed, the search runs again.
  await page.fill("#search", "^cudaLaunchKernel$");
  await page.press("#search", "Enter");
  await page.waitForFunction(() => document.body.dataset.searchRank === "1");
  assert.not.ok(await page.$("#search.bad"));
  clean(g, "bad expression after a search");
  await page.close();
});

test.run();
