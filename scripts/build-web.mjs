// Bundles the viewer (web/) into dist/web: the page script, its Web Worker and that worker's file-reader thread as
// separate entry points (esbuild does not bundle `new Worker(new URL(...))`), the core's .wasm emitted as a file
// next to them (the `file` loader: the worker compiles it while it streams in), plus the static page and stylesheet.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";

/** Builds dist/web (or `outdir`). Needs build/rawtrace.wasm. */
export async function buildWeb(outdir = "dist/web") {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: { main: "web/main.ts", worker: "web/worker.ts", reader: "web/reader_worker.ts" },
    bundle: true,
    platform: "browser",
    format: "esm",
    target: ["chrome111", "firefox113", "safari16.4"],
    loader: { ".wasm": "file" },
    assetNames: "[name]-[hash]",
    entryNames: "[name]",
    outdir,
    sourcemap: true,
    minify: true,
    logLevel: "warning",
  });
  copyFileSync("web/index.html", `${outdir}/index.html`);
  copyFileSync("web/style.css", `${outdir}/style.css`);
  return outdir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildWeb(process.argv[2]);
  console.log("built dist/web");
}
