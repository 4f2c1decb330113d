/**
 * The viewer's details and rows in each vendor's terms (docs/viewer.md), end to end in headless Chromium: Gaudi
 * kernels without a launch shape, every Chrome JSON arg of the selected event read from the dump (Gaudi, XPU, CUDA),
 * Gaudi launches and their device ops, CUDA stream waits and syncs, Gaudi copies and counters, group labels, and
 * rows named in the dump's vendor's words.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Page } from "playwright-core";
import { type Guard } from "./browser.js";
import { AXIS_H, GUTTER } from "../../web/overlays.js";
import {
  CUDA_SAMPLE, argsShown, canvasData, chromeOf, clean, details, frame, load, openPage, selectFirstMatch, viewerSuite,
} from "./viewer_helpers.js";

const VIEW = { width: 960, height: 560 };

const v = viewerSuite(test);

/** A fresh page with the Gaudi sample open. */
async function gaudiPage(): Promise<{ page: Page; g: Guard }> {
  const opened = await openPage(v.h, "", { viewport: VIEW });
  await load(opened.page, "samples/gaudi2_mlp_synapse.rawtrace");
  return opened;
}

test("a Gaudi kernel's details say its records carry no launch shape (not grid [0, 0, 0]) and show no context 0", async () => {
  const { page, g } = await gaudiPage();
  await selectFirstMatch(page, "^matmul_fwd_bf16_1024x4096$");
  const d = await details(page);
  assert.match(d.grid ?? "", /not in this dump's kernel records/);
  assert.is(d.block, undefined);
  assert.is(d.context, undefined);
  clean(g, "gaudi kernel details");
  await page.close();
});

/** Whether `shown` (the panel's args) are exactly `args` (a Chrome JSON event's), keys in order, values as written. */
function sameArgs(shown: Array<[string, string]>, args: Record<string, any>): boolean {
  const want = Object.entries(args);
  return shown.length === want.length && want.every(([k, v], i) => shown[i][0] === k &&
    (typeof v === "string" ? shown[i][1] === v : typeof v === "number" ? Number(shown[i][1]) === v : shown[i][1] === JSON.stringify(v)));
}

test("details list every Chrome JSON arg of the selected event, read from the dump: a Gaudi op's recipe, node and flops, an XPU kernel's queues and context handle, a CUDA kernel's External id", async () => {
  const cases: Array<{ path: string; pick: (e: Record<string, any>) => boolean; keys: string[]; noContext?: boolean }> = [
    { path: "samples/gaudi2_mlp_synapse.rawtrace", pick: (e) => e.cat === "kernel" && e.args.flops !== undefined, keys: ["recipeId", "recipeName", "node", "flops", "utilization"] },
    { path: "samples/xpu_train_pti.rawtrace", pick: (e) => e.cat === "kernel", keys: ["External id", "sycl queue", "l0 queue", "context", "appended"], noContext: true },
    { path: "samples/alexnet_a100_rank0.rawtrace", pick: (e) => e.cat === "kernel", keys: ["External id", "queued", "graph node id", "channel"] },
  ];
  for (const c of cases) {
    const t = await chromeOf(c.path);
    const first = t.traceEvents.filter(c.pick).sort((a, b) => a.tsNs - b.tsNs)[0];
    const { page, g } = await openPage(v.h, "", { viewport: VIEW });
    await load(page, c.path);
    await selectFirstMatch(page, `^${first.name.replace(/[.*+?^$()|[\]{}\\]/g, (m: string) => `\\${m}`)}$`);
    const shown = await argsShown(page);
    for (const k of c.keys) assert.ok(shown.some(([key]) => key === k), `${c.path}: ${k} shown (${shown.map(([key]) => key).join(", ")})`);
    const same = t.traceEvents.filter((e) => e.name === first.name && sameArgs(shown, e.args ?? {}));
    assert.is(same.length, 1, `${c.path}: the args shown are one ${first.name}'s, all of them, as the Chrome JSON writes them`);
    const d = await details(page);
    // An XPU op's record has the dump's small context number, not the handle the Chrome JSON writes: only the handle.
    if (c.noContext) assert.is(d.context, undefined, `${c.path}: no context but the Chrome JSON's`);
    else if (d.context !== undefined) assert.is(d.context, String(same[0].args.context));
    clean(g, `${c.path} args`);
    await page.close();
  }
});

test("a Gaudi launch: every device op it lists says 'Launched by' it, with the latency, and draws the flow", async () => {
  const { page, g } = await gaudiPage();
  await selectFirstMatch(page, "synLaunch");
  const launch = await details(page);
  const listed = await page.$$eval("#details-body ol.launched li", (l) => l.length);
  assert.ok(listed > 40, `${listed} device ops listed`);
  for (const k of [0, 1, 5, 20, listed - 1]) {
    await page.click(`#details-body ol.launched li:nth-child(${k + 1}) button`);
    await page.waitForFunction(() => document.querySelector("#details-body [data-field=latency]") !== null);
    await frame(page);
    const d = await details(page);
    assert.ok(d.partner.startsWith(launch.name), `op ${k}: launched by ${d.partner}`);
    assert.is(d.correlation, launch.correlation, `op ${k}: the launch's correlation`);
    assert.match(d.latency, /\d/, `op ${k}: launch → start latency`);
    assert.ok(await canvasData(page, "flow"), `op ${k}: the flow arrow is drawn`);
    // "Launched by" leads back to the launch and its list.
    await page.click("#details-body [data-field=partner] button");
    await page.waitForSelector("#details-body ol.launched", { state: "attached" });
    assert.is((await details(page)).correlation, launch.correlation);
  }
  clean(g, "gaudi launch flows");
  await page.close();
});

test("a stream wait shows the event recording it waits on, and its link selects that record on its stream", async () => {
  const path = "test/fixtures/real/h100/jax_step.rawtrace";
  const t = await chromeOf(path);
  const { page, g } = await openPage(v.h, "", { viewport: VIEW });
  await load(page, path);
  await selectFirstMatch(page, "^Stream Wait Event$");
  const d = await details(page);
  const sync = t.traceEvents.find((e) => e.cat === "cuda_sync" && e.args.correlation === Number(d.correlation));
  assert.ok(sync, `the selected wait ${d.correlation} in the Chrome JSON`);
  const m = /^event recorded on stream (\d+) by call (\d+) \(cudaEvent\)$/.exec(d["wait-source"] ?? "");
  assert.ok(m, d["wait-source"]);
  assert.is(Number(m![1]), sync!.args.wait_on_stream);
  assert.is(Number(m![2]), sync!.args.wait_on_cuda_event_record_corr_id);
  await page.click("#details-body [data-field=wait-source] button");
  await page.waitForFunction((c) => document.querySelector("#details-body [data-field=correlation]")?.textContent === c, m![2]);
  const r = await details(page);
  assert.is(r.kind, "CUDA event");
  assert.is(r["event-id"], String(sync!.args.wait_on_cuda_event_id), "the event the wait is on");
  clean(g, "stream wait");
  await page.close();
});

test("a stream sync and a context sync: their kind named as the Chrome JSON's cuda_sync_kind, no event id (CUPTI leaves its invalid id there)", async () => {
  const { page, g } = await openPage(v.h, "", { viewport: VIEW });
  await load(page, CUDA_SAMPLE);
  for (const [name, n] of [["Stream Sync", 3], ["Context Sync", 4]] as const) {
    const want = v.cuda.traceEvents.find((e) => e.cat === "cuda_sync" && e.args.cuda_sync_kind === name);
    assert.ok(want, `${name} in the Chrome JSON`);
    await selectFirstMatch(page, `^${name}$`);
    const d = await details(page);
    assert.is(d["sync-type"], `${name} (${n})`);
    assert.is(d["event-id"], undefined, `${name}: no event id`);
  }
  clean(g, "sync details");
  await page.close();
});

test("Gaudi copies: the bytes the dump has (bytes_moved), 'unknown' where it has none, never a computed 0 GB/s", async () => {
  const { page, g } = await gaudiPage();
  await selectFirstMatch(page, "^memcpy_host_to_device$");
  let d = await details(page);
  assert.is(d.bytes, "8,388,608 (8.00 MiB)");
  assert.match(d.bandwidth, /^[1-9][\d.]* GB\/s$/);
  assert.is(d.direction, "unknown");
  await selectFirstMatch(page, "^memcpy_dram_to_dram$");
  d = await details(page);
  assert.match(d.bytes, /^unknown/);
  assert.match(d.bandwidth, /^unknown/);
  assert.match(d["copy-devices"], /^unknown/);
  await selectFirstMatch(page, "^memset_grad_buffer$");
  d = await details(page);
  assert.match(d.bytes, /^unknown/);
  assert.match(d.value, /^unknown/);
  const rows = await page.$$eval("#summary-memcpy tbody tr", (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
  // rawtrace stats' rows: the copies with a byte count (bytes_moved), the copies without, the fills (none have one).
  assert.equal(rows.map((r) => r.slice(0, 3)), [["Unknown", "4", "32.00 MiB"], ["Unknown", "4", "unknown"], ["memset", "4", "unknown"]]);
  assert.ok(Number(rows[0][4]) > 0, `GB/s over the copies with a byte count: ${rows[0][4]}`);
  assert.is(rows[1][4], "unknown");
  assert.not.ok(rows.some((r) => r.includes("0 B") || r.includes("0.00")), JSON.stringify(rows));
  clean(g, "gaudi copies");
  await page.close();
});

test("Gaudi counters ('C'): a counter track per name, samples selectable, counted as the Chrome JSON counts them", async () => {
  const gaudi = await chromeOf("samples/gaudi2_mlp_synapse.rawtrace");
  const { page, g } = await gaudiPage();
  const held = gaudi.traceEvents.filter((e) => (e.ph === "X" || e.ph === "i" || e.ph === "C") && e.pid !== "");
  const counters = gaudi.traceEvents.filter((e) => e.ph === "C");
  assert.ok(counters.length > 0);
  assert.is(await page.textContent("#summary-body [data-field=events]"), held.length.toLocaleString("en-US"), "Timeline events");
  const rows = await page.$$eval("#row-list li[data-class='13']", (l) => l.map((li) => [li.textContent, li.dataset.events]));
  const per = new Map<string, number>();
  for (const e of counters) per.set(e.name, (per.get(e.name) ?? 0) + 1);
  assert.equal(rows.map(([t, n]) => [/counter \((\w+)\)/.exec(t ?? "")?.[1], Number(n)]), [...per].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  const first = counters.sort((a, b) => a.tsNs - b.tsNs)[0];
  await selectFirstMatch(page, `^${first.name}$`);
  const d = await details(page);
  assert.is(d.kind, "counter sample");
  assert.is(d.value, first.args.value.toLocaleString("en-US"));
  assert.is(d.duration, undefined, "a sample has no duration");
  // Drawn: the bar under the sample differs from the row's padding above it; hovering it names its value.
  const x = Number(await canvasData(page, "sel-x")) + 10;
  const y = Number(await canvasData(page, "sel-y"));
  const [bar, pad] = await page.evaluate(([x, y]) => {
    const c = document.querySelector<HTMLCanvasElement>("#canvas")!;
    const k = c.width / c.clientWidth;
    return [y + 6, y - 9].map((yy) => c.getContext("2d")!.getImageData(Math.round(x * k), Math.round(yy * k), 1, 1).data.join(","));
  }, [x, y]);
  assert.is.not(bar, pad, "a bar is drawn");
  const box = (await page.locator("#canvas").boundingBox())!;
  await page.mouse.move(box.x + x, box.y + y + 4);
  await page.waitForSelector("#tooltip", { state: "visible" });
  assert.is(await page.textContent("#tooltip"), `${first.name} = ${first.args.value.toLocaleString("en-US")}`);
  clean(g, "gaudi counters");
  await page.close();
});

test("group header labels end before the header's ↑ and ⊤ buttons (measured in the bold font they are drawn in)", async () => {
  const { page, g } = await gaudiPage();
  // A second copy: the labels gain the file's name, far longer than the gutter.
  await page.setInputFiles("#file", "samples/gaudi2_mlp_synapse.rawtrace");
  await page.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 2);
  await frame(page);
  const groups = (await canvasData(page, "groups")).split("|");
  assert.ok(groups.some((l) => l.length > 45), `long labels: ${groups.join(" | ")}`);
  // web/view.ts: the label starts at x 6 and may take GUTTER - 2 × 22 - 10 px; the ↑ button is drawn at GUTTER - 38.
  assert.ok(Number(await canvasData(page, "header-text-px")) <= 250 - 44 - 10, await canvasData(page, "header-text-px"));
  clean(g, "header labels");
  await page.close();
});

test("rows and kinds are named in the dump's vendor's words (HIP for ROCm, Synapse for Gaudi), not CUDA's", async () => {
  const { page, g } = await openPage(v.h, "", { viewport: VIEW });
  await load(page, "samples/mi250_minitoy_rocprof.rawtrace");
  const rows = await page.$$eval("#row-list li", (l) => l.map((li) => li.textContent ?? ""));
  assert.ok(rows.some((r) => r.includes("HIP API")), rows.join(" | "));
  assert.not.ok(rows.some((r) => /CUDA|CUPTI/.test(r)), rows.join(" | "));
  await selectFirstMatch(page, "^hipLaunchKernel$");
  assert.is((await details(page)).kind, "HIP runtime API");
  await page.setInputFiles("#file", "samples/gaudi2_mlp_synapse.rawtrace");
  await page.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 2);
  const all = await page.$$eval("#row-list li", (l) => l.map((li) => li.textContent ?? ""));
  const gaudiRows = await page.$$eval("#row-list li[data-file='gaudi2_mlp_synapse.rawtrace']", (l) => l.length);
  assert.ok(gaudiRows > 0, "the Gaudi rows are listed");
  assert.not.ok(all.some((r) => /CUDA|CUPTI/.test(r)), all.join(" | "));
  clean(g, "vendor words");
  await page.close();
});

test("the summary's top kernels each read differently: kernels that share a short name (PyTorch's elementwise and reduce kernels on the MI250) show a word of their own under it", async () => {
  const { page, g } = await openPage(v.h, "", { viewport: VIEW });
  await load(page, "samples/mi250_minitoy_rocprof.rawtrace");
  const rows = await page.$$eval("#summary-kernels tbody tr td.name", (tds) => tds.map((td) => ({
    text: (td as HTMLElement).innerText.replace(/\s+/g, " ").trim(), hint: td.querySelector(".name-hint")?.textContent ?? null,
  })));
  assert.is(rows.length, 10);
  assert.is(new Set(rows.map((r) => r.text)).size, rows.length, rows.map((r) => r.text).join(" | "));
  // Before: "at::native::vectorized_elementwise_kernel" four times and "at::native::reduce_kernel" twice.
  assert.ok(rows.filter((r) => r.hint !== null).length >= 6, JSON.stringify(rows));
  // Each hint on a line of its own, inside the cell.
  const boxes = await page.$$eval("#summary-kernels td.name .name-hint", (hs) => hs.map((h) => {
    const a = h.getBoundingClientRect();
    const c = h.parentElement!.getBoundingClientRect();
    return a.top > c.top + 4 && a.right <= c.right + 1;
  }));
  assert.ok(boxes.every(Boolean), JSON.stringify(boxes));
  // The range aggregate over the whole trace (a drag along the time axis) tells them apart alike.
  const box = (await page.locator("#canvas").boundingBox())!;
  await page.mouse.move(box.x + GUTTER + 1, box.y + AXIS_H / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width - 2, box.y + AXIS_H / 2, { steps: 4 });
  await page.mouse.up();
  await page.waitForSelector("#range-table", { state: "visible" });
  const agg = await page.$$eval("#range-table td.name", (tds) => tds.map((td) => (td as HTMLElement).innerText.replace(/\s+/g, " ").trim()));
  assert.ok(agg.filter((t) => t.startsWith("at::native::vectorized_elementwise_kernel")).length >= 4, agg.join(" | "));
  assert.is(new Set(agg).size, agg.length, agg.join(" | "));
  clean(g, "summary hints");
  await page.close();
});

test.run();
