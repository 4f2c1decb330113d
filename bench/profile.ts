/**
 * CPU profile of one conversion: runs it `--repeat` times in this process under V8's sampling profiler (through
 * node:inspector, so the loader's own start-up is not in it) and prints the functions with the most self time, as a
 * share of all samples and of the samples inside WebAssembly. Writes the raw profile next to it with `--out`
 * (open it in Chrome DevTools' Performance panel). A release build carries no function names: they are read from
 * its text file (the `.wat` asc writes next to the `.wasm`, same base name), where they appear in index order.
 *
 *   tsx bench/profile.ts [--file bench/data/cupti_1000000.rawtrace] [--format chrome|xspace] [--wasm build/rawtrace.wasm]
 *                        [--repeat 3] [--top 25] [--out profile.cpuprofile]
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { parseArgs } from "node:util";
import { Engine } from "../src/core/engine.js";
import { fileSource } from "../src/node/file_source.js";

const { values } = parseArgs({
  options: {
    file: { type: "string", default: "bench/data/cupti_1000000.rawtrace" },
    format: { type: "string", default: "chrome" },
    wasm: { type: "string", default: "build/rawtrace.wasm" },
    repeat: { type: "string", default: "3" },
    top: { type: "string", default: "25" },
    out: { type: "string" },
  },
});

interface Node { id: number; callFrame: { functionName: string; url: string }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

const eng = await Engine.create(new WebAssembly.Module(readFileSync(values.wasm!)));
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 100 });
await session.post("Profiler.start");
for (let i = 0; i < Number(values.repeat); i++) {
  const t0 = performance.now();
  // Time of each pass: from the first progress report of a pass to the first of the next (1 index, 3 NVTX
  // projection, 2 emit; the emit pass ends with the conversion).
  const passAt: Array<[number, number]> = [];
  const r = await eng.convert(fileSource(values.file!), () => {}, {
    format: values.format as "chrome" | "xspace",
    onProgress: (_d, _t, pass) => { if (passAt.at(-1)?.[0] !== pass) passAt.push([pass, performance.now()]); },
  });
  const t1 = performance.now();
  const passes = passAt.map(([p, t], k) => `${["", "index", "emit", "project"][p]} ${((passAt[k + 1]?.[1] ?? t1) - t).toFixed(0)}`);
  console.log(`run ${i + 1}: ${(t1 - t0).toFixed(0)} ms (${passes.join(", ")} ms), ${r.events} events, ${r.bytesOut} bytes out`);
}
const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
session.disconnect();
if (values.out) writeFileSync(values.out, JSON.stringify(profile));

// Function index → name from the .wat: imports first, then functions, in the binary's order.
const wat = values.wasm!.replace(/\.wasm$/, ".wat");
const names: string[] = [];
if (existsSync(wat)) {
  for (const m of readFileSync(wat, "utf8").matchAll(/^ \((?:import "[^"]*" "[^"]*" \()?func \$(\S+)/gm)) names.push(m[1]);
}
const nameOf = (f: string) => f.replace(/^wasm-function\[(\d+)\]$/, (all, i) => names[Number(i)] ?? all);

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let total = 0;
let wasm = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const n = byId.get(profile.samples[i])!;
  const dt = profile.timeDeltas[i] ?? 0;
  const inWasm = n.callFrame.url.startsWith("wasm://");
  const key = `${nameOf(n.callFrame.functionName) || "(anonymous)"}${inWasm ? " [wasm]" : ""}`;
  self.set(key, (self.get(key) ?? 0) + dt);
  total += dt;
  if (inWasm) wasm += dt;
}
console.log(`samples: ${(total / 1000).toFixed(0)} ms, inside WebAssembly ${(wasm / 1000).toFixed(0)} ms`);
console.log("  all%  wasm%  function");
for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
  const w = k.endsWith("[wasm]") ? ((t / wasm) * 100).toFixed(1) : "-";
  console.log(`${((t / total) * 100).toFixed(1).padStart(6)} ${w.padStart(6)}  ${k}`);
}
