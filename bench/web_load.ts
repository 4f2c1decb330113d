/**
 * Loads a large dump into the viewer (web/) in headless Chromium and measures what a user would feel: time until
 * the timeline is drawn, time until the summary is in, the page's peak JS heap while loading (CDP
 * Performance.getMetrics, sampled every 100 ms), the browser processes' peak resident memory, the core's memory in
 * the worker, the cost of a frame at full zoom-out and zoomed in, and the time to aggregate a range selection over
 * the whole trace (web/aggregate.ts, the range panel). Reported, not asserted (issue 19's budgets: a frame with
 * everything in view ≤ 16 ms and a whole-trace aggregation ≤ 200 ms at 10^6 records). Not a CI test: run it by hand.
 *
 *   npx tsx bench/web_load.ts [dump]      (default bench/data/cupti_14000000.rawtrace, generated when missing)
 *   npx tsx bench/web_load.ts bench/data/cupti_1000000.rawtrace     (the 10^6-record budgets)
 *   npx tsx bench/web_load.ts <dump> --keep packed|raw|mixed        (how the viewer keeps the file: web/worker.ts)
 *
 * Writes bench/results/web_load.json (ignored) and prints a summary.
 */
import { existsSync, mkdirSync, statSync, writeFileSync, readdirSync, readFileSync } from "node:fs";
import { ensureDump } from "./generate.js";
import { startHarness } from "../test/web/browser.js";
import { TL_REC } from "../src/core/timeline.js";

const path = process.argv[2] ?? "bench/data/cupti_14000000.rawtrace";
/** How the viewer keeps the file (web/worker.ts KeepMode): `--keep packed|raw|mixed|auto` after the dump (default auto). */
const keepArg = process.argv.indexOf("--keep");
const keep = keepArg > 0 ? process.argv[keepArg + 1] : "auto";
if (!["packed", "raw", "mixed", "auto"].includes(keep)) throw new Error(`--keep ${keep}: packed, raw, mixed or auto`);
{
  const m = /cupti_(\d+)\.rawtrace$/.exec(path);
  if (m) {
    mkdirSync("bench/data", { recursive: true });
    ensureDump(Number(m[1]), path);
  } else if (!existsSync(path)) throw new Error(`${path} is missing`);
}
const size = statSync(path).size;

/**
 * Memory (bytes) of every process of the browser we launched (its profile dir is in their args): `rss`, the sum of
 * their resident sets (pages shared between the processes, such as the browser's own code, count once per
 * process), and `pss`, the proportional set size (a shared page split between its sharers: the sum is what the
 * browser really holds).
 */
function browserMemory(): { rss: number; pss: number; byType: Record<string, number> } {
  let rss = 0;
  let pss = 0;
  const byType: Record<string, number> = {};
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!args.includes("playwright_chromiumdev_profile")) continue;
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) rss += Number(m[1]) * 1024;
      const p = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
      if (p) {
        pss += Number(p[1]) * 1024;
        const type = /--type=([a-z-]+)/.exec(args)?.[1] ?? "browser";
        const t = type === "utility" ? `utility:${/--utility-sub-type=([\w.]+)/.exec(args)?.[1] ?? "?"}` : type;
        byType[t] = (byType[t] ?? 0) + Math.round(Number(p[1]) / 1024);
      }
    } catch {
      // exited meanwhile
    }
  }
  return { rss, pss, byType };
}

const h = await startHarness(["--enable-precise-memory-info"]);
try {
  const page = await h.browser.newPage({ viewport: { width: 1600, height: 900 } });
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(keep === "auto" ? h.url : `${h.url}?keep=${keep}`);
  await page.waitForSelector("body[data-boot=ok]", { state: "attached" });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const heap = async () => {
    const { metrics } = (await cdp.send("Performance.getMetrics")) as { metrics: Array<{ name: string; value: number }> };
    return metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? 0;
  };
  const heapBefore = await heap();
  let peakHeap = heapBefore;
  const idle = browserMemory();
  let peakRss = idle.rss;
  let peakPss = idle.pss;
  let sampling = true;
  /** [s since the file was handed over, PSS MiB] every sample: where in the load the memory peaks. */
  const series: Array<[number, number]> = [];
  /** PSS (MiB) per kind of browser process at the peak: renderer (the page and its workers), browser, gpu, … */
  let peakByType: Record<string, number> = {};
  let tLoad = 0;
  const sampler = (async () => {
    while (sampling) {
      peakHeap = Math.max(peakHeap, await heap().catch(() => 0));
      const m = browserMemory();
      peakRss = Math.max(peakRss, m.rss);
      if (m.pss > peakPss) peakByType = m.byType;
      peakPss = Math.max(peakPss, m.pss);
      if (tLoad) series.push([+((performance.now() - tLoad) / 1000).toFixed(1), Math.round(m.pss / 2 ** 20)]);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  const t0 = performance.now();
  tLoad = t0;
  await page.setInputFiles("#file", path);
  // Ready, or the load failed (the page is empty again and shows why): fail now instead of waiting for ever.
  await page.waitForFunction(() => {
    const b = document.body.dataset;
    return b.state === "ready" || (b.state === "empty" && !document.getElementById("error")!.hidden);
  }, undefined, { timeout: 1_800_000, polling: 100 });
  if ((await page.getAttribute("body", "data-state")) !== "ready") {
    throw new Error(`the viewer did not load ${path}: ${await page.textContent("#error")}`);
  }
  const timelineS = (performance.now() - t0) / 1000;
  await page.waitForSelector("body[data-summary=ready]", { state: "attached", timeout: 1_800_000 });
  const summaryS = (performance.now() - t0) / 1000;
  sampling = false;
  await sampler;
  // What stays once the load is over (the worker's core instance is garbage once the job returns).
  await page.waitForTimeout(5000);
  const settled = browserMemory();
  const heapAfter = await heap();
  const data = await page.evaluate(() => ({ ...document.body.dataset }));
  const events = Number(await page.$$eval("#row-list li", (l) => l.reduce((n, li) => n + Number((li as HTMLElement).dataset.events), 0)));

  // Frame cost: full view, then zoomed in step by step around the middle.
  const frames: Array<{ zoom: number; ms: number }> = [];
  const box = (await page.locator("#canvas").boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.55, box.y + 150);
  const frame = async () => {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    return Number(await page.getAttribute("#canvas", "data-draw-ms"));
  };
  for (let z = 0; z <= 10; z++) {
    // Each step zooms in about 6× (three wheel notches).
    if (z > 0) for (let k = 0; k < 3; k++) await page.mouse.wheel(0, -400);
    await page.waitForTimeout(50);
    const ms: number[] = [];
    for (let k = 0; k < 5; k++) {
      await page.mouse.wheel(0, k % 2 ? 1 : -1); // a redraw at (almost) the same zoom
      ms.push(await frame());
    }
    frames.push({ zoom: z, ms: ms.sort((a, b) => a - b)[2] });
    if (z === 0 || z === 4 || z === 8) await page.screenshot({ path: `test-results/web/web_load-zoom${z}.png` });
  }

  // Whole-trace range aggregation: F fits, R makes the visible window (every event) the range; median of 5.
  await page.mouse.move(1, 1);
  const agg: number[] = [];
  for (let k = 0; k < 5; k++) {
    await page.keyboard.press("f");
    await page.keyboard.press("Escape");
    await page.keyboard.press("Escape");
    await page.keyboard.press("r");
    await page.waitForSelector("#range-table", { state: "visible" });
    agg.push(Number(await page.getAttribute("body", "data-agg-ms")));
  }
  const aggMs = agg.sort((a, b) => a - b)[2];
  const aggEvents = Number(await page.getAttribute("body", "data-range-events"));
  // The frame with everything in view and the range drawn over it.
  const fullFrame: number[] = [];
  for (let k = 0; k < 5; k++) {
    await page.mouse.move(box.x + box.width * 0.55, box.y + 150);
    await page.mouse.wheel(0, k % 2 ? 1 : -1);
    fullFrame.push(await frame());
    await page.keyboard.press("f");
    fullFrame.push(await frame());
  }
  const fullFrameMs = fullFrame.sort((a, b) => a - b)[Math.floor(fullFrame.length / 2)];

  // Search: a regex that matches every named event, then Enter twice (next match in time order, with its rank).
  await page.check("#search-regex");
  await page.fill("#search", ".");
  await page.press("#search", "Enter");
  await page.waitForSelector("body[data-step-ms]", { state: "attached" });
  await page.press("#search", "Enter");
  const searchMs = Number(await page.getAttribute("body", "data-search-ms"));
  const stepMs = Number(await page.getAttribute("body", "data-step-ms"));
  const searchMatches = Number(await page.getAttribute("body", "data-search-matches"));

  const result = {
    file: path, bytes: size, events,
    timelineSeconds: +timelineS.toFixed(2), summarySeconds: +summaryS.toFixed(2),
    pageLoadMsReported: Number(data.loadMs),
    peakJsHeapBytes: peakHeap, jsHeapBeforeBytes: heapBefore, jsHeapAfterBytes: heapAfter,
    peakBrowserRssBytes: peakRss, peakBrowserPssBytes: peakPss, peakPssMiBByProcess: peakByType, idleBrowserRssBytes: idle.rss, idleBrowserPssBytes: idle.pss,
    settledBrowserPssBytes: settled.pss, settledBrowserRssBytes: settled.rss,
    keep, fileReads: Number(data.fileReads), keptBytes: Number(data.keptBytes), pssSeriesMiB: series, coreWasmBytes: Number(data.coreBytes), passMs: JSON.parse(data.passMs ?? "{}"),
    tablesBytes: events * TL_REC,
    frameMedianMs: frames,
    fullViewFrameMs: fullFrameMs,
    wholeTraceAggregationMs: aggMs, aggregatedEvents: aggEvents,
    searchAllMs: searchMs, searchStepMs: stepMs, searchMatches,
    errors,
    chromium: h.browser.version(),
  };
  mkdirSync("bench/results", { recursive: true });
  writeFileSync("bench/results/web_load.json", JSON.stringify(result, null, 2));
  const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  console.log(`${path}: ${mb(size)}, ${events.toLocaleString("en-US")} events`);
  console.log(`timeline drawn after ${timelineS.toFixed(1)} s, summary after ${summaryS.toFixed(1)} s; worker passes (ms): ${data.passMs}`);
  console.log(`page JS heap: peak ${mb(peakHeap)} (before ${mb(heapBefore)}, after ${mb(heapAfter)})`);
  console.log(`timeline tables (ArrayBuffers, outside the JS heap): ${mb(events * TL_REC)}; core memory in the worker: ${mb(Number(data.coreBytes))}`);
  console.log(`browser processes, peak: RSS ${mb(peakRss)}, PSS ${mb(peakPss)} (page open, nothing loaded: RSS ${mb(idle.rss)}, PSS ${mb(idle.pss)})`);
  console.log(`PSS at the peak by process (MiB): ${Object.entries(peakByType).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  console.log(`5 s after the load: RSS ${mb(settled.rss)}, PSS ${mb(settled.pss)}`);
  console.log(`file reads: ${data.fileReads}; kept (${keep}) for the later passes: ${mb(Number(data.keptBytes))}; PSS (MiB) by second: ${series.filter((_, k) => k % 10 === 0).map(([t, v]) => `${t}: ${v}`).join(", ")}`);
  console.log(`frame (median of 5) by zoom step (each ~6× closer): ${frames.map((f) => `${f.zoom}: ${f.ms} ms`).join(", ")}`);
  console.log(`everything in view: frame ${fullFrameMs} ms (median); whole-trace range aggregation ${aggMs} ms over ${aggEvents.toLocaleString("en-US")} events (median of 5)`);
  console.log(`search matching ${searchMatches.toLocaleString("en-US")} events: ${searchMs} ms; Enter (next in time order, with its rank): ${stepMs} ms`);
  if (errors.length) console.log("errors:", errors);
} finally {
  await h.close();
}
