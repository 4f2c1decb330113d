/**
 * A/B timing of core builds: converts one dump with each given `.wasm` in turn, alternating builds run by run, each
 * run in its own process, and prints the median time per build and its ratio to the first build. Meant for
 * measuring one change to the core against the build before it on a shared, noisy machine (the alternation spreads
 * the noise over both builds; read the ratios).
 *
 *   tsx bench/ab.ts --wasm base.wasm,new.wasm [--file bench/data/cupti_1000000.rawtrace] [--format chrome|xspace]
 *                   [--repeat 7] [--hash] [--warm N] [--inproc [--index]]
 *
 * `--hash` also prints the SHA-256 of each build's output (the same bytes are expected of a speed-only change).
 * Besides wall time it reports the process's CPU time (user + system) over the conversion: on a machine shared with
 * other jobs, wall time measures the scheduler as much as the code, CPU time much less so. A fresh process's CPU
 * time includes V8 compiling the core on background threads; `--warm N` converts N times first and measures the next
 * conversion (the code tiered up), which isolates the conversion itself.
 * `--inproc` runs every build in this one process instead, one engine each, alternating conversion by conversion
 * (`--repeat` each, the first two dropped as warm-up), and prints CPU-time min / quartile / median per build: the
 * steadiest ratio on a busy machine, for the conversion alone (not process start or compilation).
 * With `--inproc`, `--file` may name several dumps (comma-separated, e.g. the same records written with XXH32 and
 * with XXH64 payload checksums): every build converts every file, alternating, one row per (build, file).
 * `--index` (with `--inproc`) measures the index pass alone (`Engine.info`: reading, payload checksums, the scan)
 * instead of the whole conversion.
 *
 * Child mode (internal): `tsx bench/ab.ts --child <wasm> <file> <format> <hash 0|1> <warm>` prints one JSON line
 * {seconds, cpuSeconds, bytesOut, events, sha256}.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Engine } from "../src/core/engine.js";
import { fileSource } from "../src/node/file_source.js";
import { tieredSpill } from "../src/node/spill.js";

interface Run { seconds: number; cpuSeconds: number; bytesOut: number; events: number; sha256: string }

async function child(wasm: string, file: string, format: string, hash: boolean, warm: number): Promise<Run> {
  const eng = await Engine.create(new WebAssembly.Module(readFileSync(wasm)));
  eng.spillFactory = () => tieredSpill(); // as the Node CLI: 16 MiB of spill in memory, the rest in a temporary file
  let run: Run | null = null;
  // With warm > 0, that many conversions first (the engine's code tiered up): the last one is measured.
  for (let i = 0; i <= warm; i++) {
    const h = hash ? createHash("sha256") : null;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await eng.convert(fileSource(file), (b) => { h?.update(b); }, { format: format as "chrome" | "xspace" });
    const seconds = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    const cpuSeconds = (c.user + c.system) / 1e6;
    run = { seconds, cpuSeconds, bytesOut: r.bytesOut, events: r.events, sha256: h ? h.digest("hex") : "" };
  }
  return run!;
}

/**
 * `--inproc`: all builds in this process, alternating over every (build, file) pair; CPU time per conversion (or
 * per index pass with `index`) after two warm-up rounds.
 */
async function inProcess(builds: string[], files: string[], format: string, repeat: number, index: boolean): Promise<void> {
  const engines = await Promise.all(builds.map((w) => Engine.create(new WebAssembly.Module(readFileSync(w)))));
  for (const e of engines) e.spillFactory = () => tieredSpill();
  const pairs = builds.flatMap((_, b) => files.map((file) => ({ b, file })));
  const cpu: number[][] = pairs.map(() => []);
  for (let i = 0; i < repeat + 2; i++) {
    for (let k = 0; k < pairs.length; k++) {
      const { b, file } = pairs[k];
      const c0 = process.cpuUsage();
      if (index) await engines[b].info(fileSource(file));
      else await engines[b].convert(fileSource(file), () => {}, { format: format as "chrome" | "xspace" });
      const c = process.cpuUsage(c0);
      if (i >= 2) cpu[k].push((c.user + c.system) / 1000);
    }
  }
  const q = (xs: number[], f: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * f)];
  for (let k = 0; k < pairs.length; k++) {
    const label = files.length > 1 ? `${builds[pairs[k].b]} ${pairs[k].file}` : builds[pairs[k].b];
    console.log(
      `${label}${index ? " (index pass)" : ""}: CPU ms min ${q(cpu[k], 0).toFixed(0)}, p25 ${q(cpu[k], 0.25).toFixed(0)}, median ${q(cpu[k], 0.5).toFixed(0)}; ` +
        `×${(q(cpu[0], 0) / q(cpu[k], 0)).toFixed(3)} (min), ×${(q(cpu[0], 0.5) / q(cpu[k], 0.5)).toFixed(3)} (median) vs first`,
    );
  }
}

if (process.argv[2] === "--child") {
  const [wasm, file, format, hash, warm] = process.argv.slice(3);
  console.log(JSON.stringify(await child(wasm, file, format, hash === "1", Number(warm ?? 0))));
} else {
  const { values } = parseArgs({
    options: {
      wasm: { type: "string" },
      file: { type: "string", default: "bench/data/cupti_1000000.rawtrace" },
      format: { type: "string", default: "chrome" },
      repeat: { type: "string", default: "7" },
      hash: { type: "boolean", default: false },
      warm: { type: "string", default: "0" },
      inproc: { type: "boolean", default: false },
      index: { type: "boolean", default: false },
    },
  });
  if (!values.wasm) throw new Error("--wasm a.wasm,b.wasm is required");
  const builds = values.wasm.split(",");
  const repeat = Number(values.repeat);
  const files = values.file!.split(",");
  if (values.inproc) {
    await inProcess(builds, files, values.format!, repeat, values.index!);
    process.exit(0);
  }
  if (files.length > 1 || values.index) throw new Error("several --file dumps and --index need --inproc");
  const runs: Run[][] = builds.map(() => []);
  for (let i = 0; i < repeat; i++) {
    for (let b = 0; b < builds.length; b++) {
      // This same script (under tsx, or bundled) in child mode.
      const out = execFileSync(process.execPath,
        [...process.execArgv, process.argv[1], "--child", builds[b], values.file!, values.format!, values.hash ? "1" : "0", values.warm!],
        { encoding: "utf8", maxBuffer: 1 << 20 });
      runs[b].push(JSON.parse(out.trim().split("\n").pop()!));
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = med(runs[0].map((r) => r.seconds));
  const baseCpu = med(runs[0].map((r) => r.cpuSeconds));
  const ms = (xs: number[]) => xs.map((x) => (x * 1000).toFixed(0)).join(" ");
  for (let b = 0; b < builds.length; b++) {
    const s = med(runs[b].map((r) => r.seconds));
    const c = med(runs[b].map((r) => r.cpuSeconds));
    const r = runs[b][0];
    console.log(
      `${builds[b]}: wall median ${(s * 1000).toFixed(0)} ms (${ms(runs[b].map((x) => x.seconds))}), ×${(base / s).toFixed(3)} vs first; ` +
        `CPU median ${(c * 1000).toFixed(0)} ms (${ms(runs[b].map((x) => x.cpuSeconds))}), ×${(baseCpu / c).toFixed(3)} vs first; ` +
        `${(r.events / c / 1e6).toFixed(2)}M events/s, ${(r.bytesOut / c / 1e6).toFixed(0)} MB/s out per CPU second` +
        `${values.hash ? `, sha256 ${r.sha256.slice(0, 16)}` : ""}`,
    );
  }
}
