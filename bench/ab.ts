/**
 * A/B timing of core builds: converts one dump with each given `.wasm` in turn, alternating builds run by run, each
 * run in its own process, and prints the median time per build and its ratio to the first build. Meant for
 * measuring one change to the core against the build before it on a shared, noisy machine (the alternation spreads
 * the noise over both builds; read the ratios).
 *
 *   tsx bench/ab.ts --wasm base.wasm,new.wasm [--file bench/data/cupti_1000000.rawtrace] [--format chrome|xspace]
 *                   [--repeat 7] [--hash]
 *
 * `--hash` also prints the SHA-256 of each build's output (the same bytes are expected of a speed-only change).
 * Child mode (internal): `tsx bench/ab.ts --child <wasm> <file> <format> <hash 0|1>` prints one JSON line
 * {seconds, bytesOut, events, sha256}.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Engine } from "../src/core/engine.js";
import { fileSource } from "../src/node/file_source.js";

interface Run { seconds: number; bytesOut: number; events: number; sha256: string }

async function child(wasm: string, file: string, format: string, hash: boolean): Promise<Run> {
  const eng = await Engine.create(new WebAssembly.Module(readFileSync(wasm)));
  const h = hash ? createHash("sha256") : null;
  const t0 = performance.now();
  const r = await eng.convert(fileSource(file), (b) => { h?.update(b); }, { format: format as "chrome" | "xspace" });
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, bytesOut: r.bytesOut, events: r.events, sha256: h ? h.digest("hex") : "" };
}

if (process.argv[2] === "--child") {
  const [wasm, file, format, hash] = process.argv.slice(3);
  console.log(JSON.stringify(await child(wasm, file, format, hash === "1")));
} else {
  const { values } = parseArgs({
    options: {
      wasm: { type: "string" },
      file: { type: "string", default: "bench/data/cupti_1000000.rawtrace" },
      format: { type: "string", default: "chrome" },
      repeat: { type: "string", default: "7" },
      hash: { type: "boolean", default: false },
    },
  });
  if (!values.wasm) throw new Error("--wasm a.wasm,b.wasm is required");
  const builds = values.wasm.split(",");
  const repeat = Number(values.repeat);
  const runs: Run[][] = builds.map(() => []);
  for (let i = 0; i < repeat; i++) {
    for (let b = 0; b < builds.length; b++) {
      const out = execFileSync(process.execPath,
        ["--import", "tsx", "bench/ab.ts", "--child", builds[b], values.file!, values.format!, values.hash ? "1" : "0"],
        { encoding: "utf8", maxBuffer: 1 << 20 });
      runs[b].push(JSON.parse(out.trim().split("\n").pop()!));
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = med(runs[0].map((r) => r.seconds));
  for (let b = 0; b < builds.length; b++) {
    const s = med(runs[b].map((r) => r.seconds));
    const r = runs[b][0];
    console.log(
      `${builds[b]}: median ${(s * 1000).toFixed(0)} ms (${runs[b].map((x) => (x.seconds * 1000).toFixed(0)).join(" ")}), ` +
        `${(r.events / s / 1e6).toFixed(2)}M events/s, ${(r.bytesOut / s / 1e6).toFixed(0)} MB/s out, ` +
        `×${(base / s).toFixed(3)} vs first${values.hash ? `, sha256 ${r.sha256.slice(0, 16)}` : ""}`,
    );
  }
}
