/**
 * Helpers of the viewer's browser tests: the Node conversions of a dump (Chrome JSON with exact ns times), a fresh
 * page with the error/foreign-request guard, a viewer whose file reads a test holds, loading a file through the file
 * input, the rows the viewer lists and the details panel's fields.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import * as assert from "uvu/assert";
import type { BrowserContextOptions, Page } from "playwright-core";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { guard, startHarness, type Guard, type Harness } from "./browser.js";

export interface Chrome {
  traceEvents: Array<Record<string, any>>;
  [k: string]: any;
}

export async function convert(path: string, format: "chrome" | "xspace"): Promise<Buffer> {
  const engine = await createEngine();
  const parts: Buffer[] = [];
  await engine.convert(fileSource(path), (b) => parts.push(Buffer.from(b)), { format, traceName: basename(path) });
  return Buffer.concat(parts);
}

/**
 * The Chrome JSON conversion, parsed; each event also gets tsNs/durNs, exact integers read from the text (ts values
 * beyond 2^32 µs lose their last ns through a float multiply).
 */
export async function chromeOf(path: string): Promise<Chrome> {
  const text = (await convert(path, "chrome")).toString("utf8");
  const t: Chrome = JSON.parse(text);
  const exact = (s: string) => {
    const [i, f] = s.split(".");
    return Number(BigInt(i) * 1000n + BigInt((f ?? "0").padEnd(3, "0")));
  };
  let k = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith('{"ph"') && !line.startsWith('{"name"')) continue;
    const e = t.traceEvents[k++];
    const ts = /"ts":(\d+(?:\.\d+)?)/.exec(line);
    const d = /"dur":(\d+(?:\.\d+)?)/.exec(line);
    if (ts) e.tsNs = exact(ts[1]);
    if (d) e.durNs = exact(d[1]);
  }
  assert.is(k, t.traceEvents.length, "one event per line");
  return t;
}

export async function openPage(h: Harness, hash = "", opts: BrowserContextOptions = {}): Promise<{ page: Page; g: Guard }> {
  const page = await h.browser.newPage({ viewport: { width: 1600, height: 900 }, acceptDownloads: true, ...opts });
  const g = guard(page);
  await page.goto(h.url + hash);
  await page.waitForSelector("body[data-boot=ok]", { state: "attached" });
  return { page, g };
}

/**
 * A copy of the built viewer (`h.dir`) under `gated/` whose file reader holds every read at or past `at` bytes
 * until the page posts "open" on BroadcastChannel `rawtrace-test-gate` (it posts "held" there when a read first
 * waits): a test can stop a load part way, however fast the machine, and let it go on. Returns the copy's path
 * relative to `h.url`.
 */
export function gatedViewer(h: Harness, at: number): string {
  const dir = join(h.dir, "gated");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  for (const f of readdirSync(h.dir)) if (statSync(join(h.dir, f)).isFile()) copyFileSync(join(h.dir, f), join(dir, f));
  const gate = `{
  const bc = new BroadcastChannel("rawtrace-test-gate");
  let open = false, told = false;
  const waiting = [];
  bc.onmessage = (e) => { if (e.data === "open") { open = true; for (const w of waiting.splice(0)) w(); } };
  const slice = Blob.prototype.slice, read = Blob.prototype.arrayBuffer;
  Blob.prototype.slice = function (start, ...rest) { const b = slice.call(this, start, ...rest); b.gateAt = start ?? 0; return b; };
  Blob.prototype.arrayBuffer = async function () {
    if (!open && (this.gateAt ?? 0) >= ${at}) {
      if (!told) { told = true; bc.postMessage("held"); }
      await new Promise((ok) => waiting.push(ok));
    }
    return read.call(this);
  };
}
`;
  writeFileSync(join(dir, "reader.js"), gate + readFileSync(join(dir, "reader.js"), "utf8"));
  return "gated/";
}

/**
 * The page's side of {@link gatedViewer}'s gate, listening from now on (call it before choosing the file): `held()`
 * resolves once a read waits at the gate, `open()` lets every read go on.
 */
export async function readGate(page: Page): Promise<{ held(): Promise<void>; open(): Promise<void> }> {
  await page.evaluate(() => {
    const w = window as unknown as { gateHeld: boolean };
    new BroadcastChannel("rawtrace-test-gate").onmessage = (e) => (w.gateHeld ||= e.data === "held");
  });
  return {
    held: async () => void (await page.waitForFunction(() => (window as unknown as { gateHeld: boolean }).gateHeld === true)),
    open: () => page.evaluate(() => new BroadcastChannel("rawtrace-test-gate").postMessage("open")),
  };
}

export async function load(page: Page, path: string): Promise<void> {
  await page.setInputFiles("#file", path);
  await page.waitForSelector("body[data-state=ready][data-summary=ready]", { state: "attached", timeout: 120_000 });
  await page.waitForSelector("#progress", { state: "hidden" });
}

export function clean(g: Guard, what: string): void {
  assert.equal(g.errors, [], `${what}: console or page errors`);
  assert.equal(g.foreign, [], `${what}: requests outside localhost`);
}

/** Chrome (pid, tid) of a viewer row (assembly/emit/timeline.ts RowClass → Kineto's rows). */
export function chromeRow(cls: number, a: number, b: number): string {
  if (cls === 10) return `${a}/${b + 1000000}`;
  if (cls === 11) return `${a}/999999`;
  if (cls === 3) return "2147483647/0"; // overheads: one Chrome row, tid 0, pid 2^31 - 1 (the viewer keeps a row per thread)
  return `${a}/${b}`;
}

/** Events per Chrome (pid, tid) as the viewer's row list reports them. */
export async function viewerRows(page: Page): Promise<Map<string, number>> {
  const rows = await page.$$eval("#row-list li", (lis) =>
    lis.map((li) => ({ cls: Number(li.dataset.class), a: Number(li.dataset.a), b: Number(li.dataset.b), n: Number(li.dataset.events) })),
  );
  const m = new Map<string, number>();
  for (const r of rows) {
    const k = chromeRow(r.cls, r.a, r.b);
    m.set(k, (m.get(k) ?? 0) + r.n);
  }
  return m;
}

export function chromeRows(t: Chrome): Map<string, number> {
  const m = new Map<string, number>();
  for (const e of t.traceEvents) {
    if ((e.ph !== "X" && e.ph !== "i") || e.pid === "") continue;
    const k = `${e.pid}/${e.tid}`;
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return m;
}


/**
 * The details panel's fields from the timeline record, by `data-field` (the Chrome JSON args, read from the dump a
 * moment later, are left out: web/details.ts; see argsShown below).
 */
export async function details(page: Page): Promise<Record<string, string>> {
  return page.$$eval("#details-body > [data-field], #details-body dl.kv:not(.args) [data-field]", (els) =>
    Object.fromEntries(els.map((e) => [(e as HTMLElement).dataset.field!, e.textContent ?? ""])),
  );
}


/**
 * The page's URL hash once no write of it is due (web/main.ts writes it 120 ms after the last change, and marks
 * the wait with `data-hash-pending`): a hash read earlier can miss the last selection or range.
 */
export async function settledHash(page: Page): Promise<string> {
  await page.waitForFunction(() => document.body.dataset.hashPending === undefined);
  return page.evaluate(() => location.hash);
}

/** Two animation frames: what the last change asked to draw is on the canvas. */
export async function frame(page: Page): Promise<void> {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/**
 * Selects JSON event `k` exactly (by its correlation id): searches its name and steps through the matches with Enter
 * (the first may be another call of the same kernel).
 */
export async function pickEvent(page: Page, k: Record<string, any>): Promise<void> {
  await page.fill("#search", k.name);
  for (let n = 0; n < 100; n++) {
    await page.press("#search", "Enter");
    await frame(page);
    if ((await details(page)).correlation === String(k.args.correlation)) return;
  }
  throw new Error(`event ${k.args.correlation} not reached`);
}

/** The viewer canvas's `data-<key>` attribute (the state the page publishes for tests), "" when absent. */
export async function canvasData(page: Page, key: string): Promise<string> {
  return (await page.getAttribute("#canvas", `data-${key}`)) ?? "";
}

/** Searches `pattern` (a regular expression), selects the first match in time order and waits for it to be drawn. */
export async function selectFirstMatch(page: Page, pattern: string): Promise<void> {
  await page.check("#search-regex");
  await page.fill("#search", pattern);
  await page.waitForFunction(() => Number(document.body.dataset.searchMatches ?? 0) > 0);
  await page.press("#search", "Enter");
  await page.waitForFunction(() => document.body.dataset.searchRank !== undefined);
  await frame(page);
}

/** The Chrome JSON args the details panel lists, in order (each `arg:<key>` field), once read from the dump. */
export async function argsShown(page: Page): Promise<Array<[string, string]>> {
  await page.waitForSelector("body[data-args=ready]", { state: "attached" });
  return page.$$eval("#details-body dl.args [data-field^='arg:']", (els) =>
    els.map((e) => [(e as HTMLElement).dataset.field!.slice(4), e.textContent ?? ""] as [string, string]),
  );
}

/** The real H100 dump most viewer tests open. */
export const CUDA_SAMPLE = "test/fixtures/real/h100/cuda_sample.rawtrace";

/**
 * Registers the hooks of a browser test file on `suite`: a harness started before its tests, with the Chrome JSON
 * conversion of {@link CUDA_SAMPLE}, and closed after them. The fields are set once the `before` hook has run.
 */
export function viewerSuite(suite: typeof import("uvu").test): { h: Harness; cuda: Chrome } {
  const v = {} as { h: Harness; cuda: Chrome };
  suite.before(async () => {
    v.h = await startHarness();
    v.cuda = await chromeOf(CUDA_SAMPLE);
  });
  suite.after(async () => {
    await v.h?.close();
  });
  return v;
}
