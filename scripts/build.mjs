// Bundles the Node CLI (and later the browser page) with esbuild; copies the core's .wasm next to the bundle.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, chmodSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { buildWeb } from "./build-web.mjs";

mkdirSync("dist/node", { recursive: true });
await build({
  // The worker is its own entry (esbuild does not bundle `new Worker(new URL(...))`): dist/node/worker.js sits next
  // to cli.js and index.js (the `rawtrace/node` API), which start it by that relative URL; so does gzip_worker.js
  // (the gzip encoder's threads, src/node/gzip_pool.ts).
  // xspace_merge.js, too, is an entry of its own: merge loads it on first need (src/node/merge.ts), so that the other
  // commands do not load and boot the protobuf runtime it uses.
  entryPoints: {
    cli: "src/cli.ts", worker: "src/node/worker.ts", gzip_worker: "src/node/gzip_worker.ts", index: "src/node/index.ts",
    xspace_merge: "src/node/xspace_merge.ts",
  },
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
copyFileSync("build/deflate.wasm", "dist/node/deflate.wasm"); // the gzip encoder (src/node/fast_gzip.ts)
copyFileSync("build/inflate.wasm", "dist/node/inflate.wasm"); // the gzip reader of damaged inputs (src/node/gzip_members.ts)
chmodSync("dist/node/cli.js", 0o755);
console.log("built dist/node/cli.js, worker.js, index.js + rawtrace.wasm");
// Type declarations of the Node API (package.json exports "./node" types: dist/types/node/index.d.ts).
const tsc = spawnSync(process.execPath, [
  "node_modules/typescript/bin/tsc", "src/node/index.ts", "src/types/comlink-node-adapter.d.ts", "--declaration",
  "--emitDeclarationOnly", "--outDir", "dist/types", "--rootDir", "src", "--module", "nodenext", "--moduleResolution",
  "nodenext", "--target", "es2022", "--lib", "es2023,esnext.disposable,dom", "--types", "node", "--skipLibCheck",
], { encoding: "utf8" });
if (tsc.status !== 0) console.warn(`types: tsc reported problems (declarations still written):\n${tsc.stdout}${tsc.stderr}`);
await buildWeb("dist/web");
console.log("built dist/web (the viewer: npm run web)");
