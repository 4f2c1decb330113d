// Bundles the Node CLI (and later the browser page) with esbuild; copies the core's .wasm next to the bundle.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, chmodSync } from "node:fs";

mkdirSync("dist/node", { recursive: true });
await build({
  entryPoints: { cli: "src/cli.ts" },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  mainFields: ["module", "main"],
  outdir: "dist/node",
  banner: { js: "#!/usr/bin/env node" },
  logLevel: "warning",
});
copyFileSync("build/rawtrace.wasm", "dist/node/rawtrace.wasm");
chmodSync("dist/node/cli.js", 0o755);
console.log("built dist/node/cli.js + rawtrace.wasm");
