/**
 * Browser test set-up: Debian's Chromium (installed with apt-get when missing, so a fresh CI machine passes), driven
 * headless by playwright-core; the viewer built into a temporary folder and served on 127.0.0.1; a guard that
 * records console errors, page errors and any request that leaves localhost.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "node:http";
import { chromium, type Browser, type Page } from "playwright-core";
// @ts-ignore: plain ESM helpers of the build
import { buildWeb } from "../../scripts/build-web.mjs";
// @ts-ignore: plain ESM helpers of the build
import { serveWeb } from "../../scripts/serve-web.mjs";

export const CHROMIUM = process.env.RAWTRACE_CHROMIUM ?? "/usr/bin/chromium";

/** Installs Debian's chromium package when the browser is missing (root, as on CI and developer machines). */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const sudo = process.getuid?.() === 0 ? [] : ["sudo", "-n"];
  const run = (args: string[]) => {
    const [cmd, ...rest] = [...sudo, ...args];
    execFileSync(cmd, rest, { env, stdio: ["ignore", "ignore", "inherit"], timeout: 900_000 });
  };
  run(["apt-get", "update", "-qq"]);
  run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]);
  if (!existsSync(CHROMIUM)) throw new Error(`chromium installed but ${CHROMIUM} is missing`);
  return CHROMIUM;
}

export interface Harness {
  browser: Browser;
  url: string;
  /** The folder served (the built viewer). */
  dir: string;
  close(): Promise<void>;
}

/** Builds the viewer, serves it and launches headless Chromium. */
export async function startHarness(extraArgs: string[] = []): Promise<Harness> {
  const exe = ensureChromium();
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-web-"));
  await buildWeb(dir);
  const { server, url } = (await serveWeb({ dir, port: 0 })) as { server: Server; url: string };
  const browser = await chromium.launch({
    executablePath: exe,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run", ...extraArgs],
  });
  return {
    browser,
    url,
    dir,
    async close() {
      await browser.close().catch(() => undefined);
      await new Promise((ok) => server.close(ok));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What a page did wrong: console errors, uncaught errors, requests outside localhost. */
export interface Guard {
  errors: string[];
  foreign: string[];
}

/**
 * A page's waits without a timeout of their own end after this long (playwright's default is 30 s): a guard against a
 * hang, not a time budget — a loaded 2-core CI machine once took over 30 s to draw a sample.
 */
export const PAGE_WAIT_MS = 120_000;

/** Records everything a page must not do (call before navigating), and sets its waits' {@link PAGE_WAIT_MS}. */
export function guard(page: Page): Guard {
  page.setDefaultTimeout(PAGE_WAIT_MS);
  const g: Guard = { errors: [], foreign: [] };
  page.on("console", (m) => {
    if (m.type() === "error") g.errors.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => g.errors.push(`pageerror: ${e.message}`));
  const check = (u: string) => {
    const url = new URL(u);
    const local = url.protocol === "blob:" || url.protocol === "data:" ||
      (url.protocol === "http:" && (url.hostname === "127.0.0.1" || url.hostname === "localhost"));
    if (!local) g.foreign.push(u);
  };
  page.on("request", (r) => check(r.url()));
  page.on("worker", (w) => {
    check(w.url());
    // Worker console errors surface on the page's console in Chromium; uncaught worker errors too.
  });
  return g;
}
