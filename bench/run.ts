/**
 * `npm run bench`: generates the benchmark dumps (bench/generate.ts) and measures, side by side in one run, the
 * floor (read + copy, no decoding), rawtrace's Chrome JSON (plain and gzip: `chrome-gz` at the default level,
 * `chrome-gz0` with rawtrace's encoder, `chrome-gz1`/`-gz3`/`-gz6` at zlib levels 1, 3, 6, through the shipped
 * parallel block gzip; `chrome-file` the same shipped path writing plain JSON to a file; a second table gives the
 * gzip tasks' speed as % of plain Chrome JSON — the `chrome` row, which discards its output, and `chrome-file` —
 * and their size against level 6)
 * and the plain TypeScript peer. Each measurement runs in its own process (peak RSS is its own); each is repeated
 * and the median taken. Prints the table and writes bench/results/<date>.json. The repeats alternate between the
 * tasks.
 *
 *   tsx bench/run.ts [--sizes 1e5,1e6,1.4e7] [--repeat 3] [--tasks floor,chrome,chrome-gz,xspace,peer,hta,xprof]
 *   tsx bench/run.ts --sizes 1e6 --tasks chrome,chrome-file,chrome-gz0,chrome-gz1,chrome-gz6   (gzip side by side)
 *                    [--vendor cuda|rocm]
 *
 * `--vendor rocm` measures the ROCm mix instead (bench/generate_rocm.ts: rocprofiler-sdk 1.0 records, the same
 * training-loop shape) and writes bench/results/<date>-rocm.json; the peer reads CUPTI only and is skipped.
 * `--tile <real CUDA dump>` measures a dump of real shape instead: the sizes are copies of that dump
 * (bench/tile_dump.ts; e.g. `--tile test/fixtures/real/h100/torch.rawtrace --sizes 100,1000`), the table's first
 * column counts copies, results go to bench/results/<date>-<dump name>.json; the peer and the Python clients are
 * skipped.
 *
 * The peer holds the whole dump in memory and the Python clients are slow: they run up to --peer-max and
 * --clients-max records.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { cpus, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { ensureDump } from "./generate.js";
import { generateRocm } from "./generate_rocm.js";
import { tileDump } from "./tile_dump.js";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1e5,1e6,1.4e7" },
    repeat: { type: "string", default: "3" },
    tasks: { type: "string", default: "floor,chrome,chrome-gz,xspace,peer,hta,xprof" },
    "peer-max": { type: "string", default: "2e6" },
    "clients-max": { type: "string", default: "1e5" },
    vendor: { type: "string", default: "cuda" },
    tile: { type: "string" },
  },
});
const sizes = values.sizes!.split(",").map(Number);
const repeat = Number(values.repeat);
const rocm = values.vendor === "rocm";
if (!rocm && values.vendor !== "cuda") throw new Error(`--vendor must be cuda or rocm, got ${values.vendor}`);
const tile = values.tile;
const tileName = tile ? basename(tile).replace(/\.rawtrace$/, "") : "";
const tasks = values.tasks!.split(",").filter((t) => !((rocm || tile) && t === "peer") && !(tile && (t === "hta" || t === "xprof")));
mkdirSync("bench/data", { recursive: true });
mkdirSync("bench/results", { recursive: true });

interface Row { task: string; seconds: number; cpuSeconds: number; bytesIn: number; bytesOut: number; events: number; maxRssMB: number }
const results: Array<Row & { records: number }> = [];
for (const n of sizes) {
  const file = tile ? `bench/data/real_${tileName}_x${n}.rawtrace` : `bench/data/${rocm ? "rocprof" : "cupti"}_${n}.rawtrace`;
  if (tile) {
    if (!existsSync(file)) tileDump(tile, n, file);
  } else ensureDump(n, file, rocm ? generateRocm : undefined);
  const mb = statSync(file).size / 1e6;
  // Repeats alternate between the tasks (round after round), so that a change of load on a shared machine
  // falls on every task alike and the ratios stay comparable.
  const mine = tasks.filter((task) => !(task === "peer" && n > Number(values["peer-max"])) && // the peer holds the whole dump in memory
    !((task === "hta" || task === "xprof") && n > Number(values["clients-max"])));
  const runs = new Map<string, Row[]>(mine.map((t) => [t, []]));
  for (let i = 0; i < repeat; i++) {
    for (const task of mine) {
      if ((task === "hta" || task === "xprof") && i > 0) continue; // the Python clients: one run
      const out = execFileSync(process.execPath, ["--import", "tsx", "bench/task.ts", task, file], { encoding: "utf8", maxBuffer: 1 << 20 });
      runs.get(task)!.push(JSON.parse(out.trim().split("\n").pop()!));
    }
  }
  for (const task of mine) {
    const rs = runs.get(task)!.sort((a, b) => a.seconds - b.seconds);
    const med = rs[Math.floor(rs.length / 2)];
    results.push({ ...med, maxRssMB: Math.max(...rs.map((r) => r.maxRssMB)), records: n });
    console.error(`${n} ${task}: ${(mb / med.seconds).toFixed(0)} MB/s in`);
  }
}

const pad = (s: string | number, w: number) => String(s).padStart(w);
const lines = [
  `| ${tile ? `copies of ${tileName}` : "records"} | input MB | task | s | input MB/s | events/s | output MB/s | peak RSS MB | vs floor | vs peer |`,
  `|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|`,
];
for (const r of results) {
  const floor = results.find((x) => x.records === r.records && x.task === "floor");
  const peer = results.find((x) => x.records === r.records && x.task === "peer");
  const mbs = r.bytesIn / 1e6 / r.seconds;
  lines.push(
    `| ${tile ? r.records : r.records.toExponential(1)} | ${(r.bytesIn / 1e6).toFixed(0)} | ${r.task} | ${r.seconds.toFixed(2)} | ${mbs.toFixed(0)} | ` +
      `${r.events ? (r.events / r.seconds / 1e6).toFixed(2) + "M" : "-"} | ${(r.bytesOut / 1e6 / r.seconds).toFixed(0)} | ` +
      `${r.maxRssMB.toFixed(0)} | ${floor && r.task !== "floor" ? ((floor.seconds / r.seconds) * 100).toFixed(0) + "%" : "-"} | ` +
      `${peer && r.task !== "peer" && r.task !== "floor" ? (peer.seconds / r.seconds).toFixed(1) + "×" : "-"} |`,
  );
}
// gzip against plain Chrome JSON (target 3 of issue 17): speed as % of the chrome row's, size against level 6.
const gzLines: string[] = [];
for (const r of results) {
  if (!r.task.startsWith("chrome-gz")) continue;
  const plain = results.find((x) => x.records === r.records && x.task === "chrome");
  const six = results.find((x) => x.records === r.records && x.task === "chrome-gz6");
  const file = results.find((x) => x.records === r.records && x.task === "chrome-file");
  // What two free cores would give: the conversion thread's time (the plain run's CPU) or half the CPU of the whole
  // gzip run (conversion + compression), whichever is longer. A shared machine cannot show it as wall clock.
  const twoCores = plain ? plain.cpuSeconds / Math.max(plain.cpuSeconds, r.cpuSeconds / 2) : 0;
  gzLines.push(`| ${r.records.toExponential(1)} | ${r.task} | ${r.seconds.toFixed(2)} | ${r.cpuSeconds.toFixed(2)} | ` +
    `${(r.events / r.seconds / 1e6).toFixed(2)}M | ` +
    `${plain ? ((plain.seconds / r.seconds) * 100).toFixed(0) + "%" : "-"} | ${plain ? (twoCores * 100).toFixed(0) + "%" : "-"} | ` +
    `${file ? ((file.seconds / r.seconds) * 100).toFixed(0) + "%" : "-"} | ${r.bytesOut} | ` +
    `${six ? (r.bytesOut / six.bytesOut).toFixed(3) + "×" : "-"} |`);
}
if (gzLines.length) {
  lines.push("", "| records | gzip task | s | CPU s | events/s | speed vs chrome | on 2 free cores | vs chrome-file | gzip bytes | size vs level 6 |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|", ...gzLines);
}
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
console.log(`machine: ${machine}\n${lines.join("\n")}`);
const date = new Date().toISOString().slice(0, 10);
writeFileSync(`bench/results/${date}${rocm ? "-rocm" : tile ? `-${tileName}` : ""}.json`,
  JSON.stringify({ date, machine, repeat, vendor: values.vendor, tile, results }, null, 2));
void pad;
