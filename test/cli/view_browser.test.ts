// SPDX-License-Identifier: MIT
/**
 * `rawtrace view FILE… --no-open` as a user runs it (the built CLI, dist/node/cli.js, serving the built viewer,
 * dist/web): headless Chromium opens the printed URL and the page loads both named files from the server, lists
 * them, counts every event of their Chrome JSON conversion on its rows, and draws them on the timeline canvas. No
 * console error, no request outside localhost. A screenshot goes to test-results/web/view_cli.png.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { ensureChromium, guard } from "../web/browser.js";
import { frame } from "../web/viewer_helpers.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const FILES = [join(ROOT, "test/fixtures/real/h100/cuda_sample.rawtrace"), join(ROOT, "samples/h100_torch_train_nvtx.rawtrace")];

/** Timeline events (X and i with a pid) of a file's Chrome JSON conversion: what the viewer puts on its rows. */
async function chromeEvents(path: string): Promise<number> {
  const parts: Buffer[] = [];
  await (await createEngine()).convert(fileSource(path), (b) => parts.push(Buffer.from(b)), {});
  const t = JSON.parse(Buffer.concat(parts).toString("utf8")) as { traceEvents: Array<{ ph: string; pid: unknown }> };
  return t.traceEvents.filter((e) => (e.ph === "X" || e.ph === "i") && e.pid !== "").length;
}

let child: ChildProcess | null = null;
let browser: Browser | null = null;

test.after(async () => {
  await browser?.close().catch(() => undefined);
  child?.kill("SIGINT");
});

test("the URL `rawtrace view --no-open` prints opens the page with both files loaded and drawn", async () => {
  for (const f of [CLI, join(ROOT, "dist/web/index.html")]) assert.ok(existsSync(f), `${f} not built (bash scripts/setup.sh)`);
  child = spawn(process.execPath, [CLI, "view", ...FILES, "--no-open", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  const url = await new Promise<string>((ok, fail) => {
    let out = "";
    child!.stdout!.on("data", (b) => {
      out += b;
      const m = /^rawtrace viewer: (\S+)$/m.exec(out);
      if (m) ok(m[1]);
    });
    child!.once("exit", (code) => fail(new Error(`rawtrace view exited ${code}: ${out}`)));
  });
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/\?file=\/files\/0\/cuda_sample\.rawtrace&file=\/files\/1\/h100_torch_train_nvtx\.rawtrace$/);

  browser = await chromium.launch({
    executablePath: ensureChromium(), headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  const g = guard(page);
  await page.goto(url);
  await page.waitForFunction(() => document.querySelectorAll("#file-list .chip").length === 2, undefined, { timeout: 120_000 });
  await page.waitForSelector("body[data-state=ready][data-summary=ready]", { state: "attached", timeout: 120_000 });
  await page.waitForSelector("#progress", { state: "hidden" });

  const rows = await page.$$eval("#row-list li", (lis) => lis.map((li) => ({ file: li.dataset.file, n: Number(li.dataset.events) })));
  const names = FILES.map((f) => basename(f));
  assert.equal([...new Set(rows.map((r) => r.file))], names, "both files, in the order named");
  for (const [k, f] of FILES.entries()) {
    const got = rows.filter((r) => r.file === names[k]).reduce((s, r) => s + r.n, 0);
    assert.is(got, await chromeEvents(f), `${names[k]}: events on the viewer's rows`);
  }
  // Drawn: the timeline canvas holds slices, not only its background (many distinct colours). The page is ready
  // before its next frame paints: read after one.
  await frame(page);
  const colours = await page.$eval("#canvas", (c) => {
    const cv = c as HTMLCanvasElement;
    const d = cv.getContext("2d")!.getImageData(0, 0, cv.width, cv.height).data;
    const seen = new Set<number>();
    for (let i = 0; i < d.length; i += 4) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return seen.size;
  });
  assert.ok(colours > 8, `${colours} colours on the canvas`);
  mkdirSync(join(ROOT, "test-results/web"), { recursive: true });
  await page.screenshot({ path: join(ROOT, "test-results/web/view_cli.png") });
  assert.equal(g.errors, [], "console or page errors");
  assert.equal(g.foreign, [], "requests outside localhost");
  await page.close();
});

test.run();
