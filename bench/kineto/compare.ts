/**
 * Kineto's JSON writer against `rawtrace convert` on the same CUPTI records, side by side on this machine, each on
 * one pinned CPU: for each dump, `--repeat` rounds, each round one fresh process of each, alternating.
 *
 *   npx tsx bench/kineto/compare.ts --file bench/data/real_torch_x100.rawtrace[,more.rawtrace] [--repeat 5]
 *                                   [--pin 1] [--tmp /dev/shm] [--kineto build/kineto/kineto_writer]
 *
 * The Kineto side is build/kineto/kineto_writer (bench/kineto/build.sh): Kineto's own CUPTI wrappers and
 * ChromeTraceLogger fed with the dump's records. It reports Kineto's two steps separately: `process` (what
 * CuptiActivityProfiler does with the records when a profiling session stops: filtering, demangling, the
 * wrappers) and `save` (ActivityTrace::save into a ChromeTraceLogger: what PyTorch's export_chrome_trace runs). The
 * rawtrace side is the CLI as users run it, `convert --jobs 1`, its own `seconds` (both reads of the dump, decoding,
 * writing the JSON) and the whole process's wall clock and CPU time. Both write their JSON to `--tmp` (tmpfs by
 * default). Events are counted alike in both files: every `"ph"` key, and the complete events (`"ph": "X"`) alone.
 * Prints a table and writes bench/results/kineto-<date>.json.
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    file: { type: "string", default: "bench/data/real_torch_x100.rawtrace" },
    repeat: { type: "string", default: "5" },
    pin: { type: "string", default: "1" },
    tmp: { type: "string", default: "/dev/shm" },
    kineto: { type: "string", default: "build/kineto/kineto_writer" },
    cli: { type: "string", default: "dist/node/cli.js" },
  },
});
const repeat = Number(values.repeat);
const pin = ["taskset", "-c", values.pin!];

/** Counts `"ph"` keys and those whose value is "X" in a Chrome JSON file, compact or pretty-printed. */
function countPh(path: string): { ph: number; x: number } {
  const fd = openSync(path, "r");
  const buf = Buffer.alloc(64 << 20);
  let ph = 0, x = 0, carry = 0, pos = 0;
  for (;;) {
    const n = readSync(fd, buf, carry, buf.length - carry, pos);
    if (n === 0) break;
    pos += n;
    const end = carry + n;
    let i = 0;
    // Keys near the end wait for the next read (16 bytes kept) so a key and its value are never split.
    const limit = end - 16;
    while ((i = buf.indexOf('"ph"', i, "latin1")) !== -1 && i < limit) {
      ph++;
      let j = i + 4;
      while (buf[j] === 0x20 || buf[j] === 0x3a) j++;
      if (buf[j] === 0x22 && buf[j + 1] === 0x58) x++;
      i += 4;
    }
    const keep = Math.min(16, end);
    buf.copy(buf, 0, end - keep, end);
    carry = keep;
  }
  // The last 16 bytes of the file hold no event ("]}" and the trailer).
  closeSync(fd);
  return { ph, x };
}

/** Runs a command under /usr/bin/time: its standard output, wall seconds, user + system CPU seconds, peak RSS (MB). */
function timed(cmd: string[]): { out: string; wall: number; cpu: number; rss: number } {
  const tf = join(values.tmp!, `compare-time-${process.pid}`);
  const t0 = performance.now();
  const out = execFileSync("/usr/bin/time", ["-f", "%U %S %M", "-o", tf, ...cmd], { encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "ignore"] });
  const wall = (performance.now() - t0) / 1000;
  const [u, s, kb] = readFileSync(tf, "utf8").trim().split(/\s+/).slice(-3).map(Number);
  rmSync(tf);
  return { out, wall, cpu: u + s, rss: kb / 1024 };
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const lo = (xs: number[]) => Math.min(...xs);
const hi = (xs: number[]) => Math.max(...xs);
const f2 = (x: number) => x.toFixed(3);
const results: unknown[] = [];
console.log(`${new Date().toISOString()}, ${repeat} rounds per dump, pinned to CPU ${values.pin}, load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
for (const file of values.file!.split(",")) {
  const kOut = join(values.tmp!, "kineto-compare-k.json");
  const rOut = join(values.tmp!, "kineto-compare-r.json");
  const k = { process: [] as number[], save: [] as number[], wall: [] as number[], cpu: [] as number[], rss: [] as number[], activities: 0, records: 0 };
  const r = { seconds: [] as number[], wall: [] as number[], cpu: [] as number[], rss: [] as number[], events: 0 };
  let kCount = { ph: 0, x: 0 }, rCount = { ph: 0, x: 0 }, kBytes = 0, rBytes = 0;
  for (let i = 0; i < repeat; i++) {
    const kr = timed([...pin, values.kineto!, file, kOut]);
    const kj = JSON.parse(kr.out.trim().split("\n").pop()!);
    k.process.push(kj.process_wall_s);
    k.save.push(kj.save_wall_s);
    k.wall.push(kr.wall);
    k.cpu.push(kr.cpu);
    k.rss.push(kr.rss);
    k.activities = kj.activities;
    k.records = kj.records;
    if (i === 0) { kCount = countPh(kOut); kBytes = statSync(kOut).size; }
    rmSync(kOut, { force: true });
    const rr = timed([...pin, process.execPath, values.cli!, "convert", file, "-o", rOut, "--jobs", "1", "--force", "--json"]);
    const rj = JSON.parse(rr.out);
    r.seconds.push(rj.files[0].seconds);
    r.wall.push(rr.wall);
    r.cpu.push(rr.cpu);
    r.rss.push(rr.rss);
    r.events = rj.events;
    if (i === 0) { rCount = countPh(rOut); rBytes = statSync(rOut).size; }
    rmSync(rOut, { force: true });
  }
  // What storing each side's JSON in a new file on --tmp costs by itself (dd from /dev/zero, 4 MiB writes, pinned
  // like the rest): the part of both times that is the kernel's, not the writer's.
  const store = (bytes: number) => {
    const xs: number[] = [];
    for (let i = 0; i < repeat; i++) {
      const f = join(values.tmp!, "kineto-compare-dd");
      xs.push(timed([...pin, "dd", "if=/dev/zero", `of=${f}`, "bs=4M", `count=${Math.ceil(bytes / (4 << 20))}`]).wall);
      rmSync(f, { force: true });
    }
    return med(xs);
  };
  const kStore = store(kBytes), rStore = store(rBytes);
  const ks = med(k.save), kp = med(k.process), rs = med(r.seconds);
  console.log(`\n${file}: ${k.records} CUPTI records`);
  console.log(`| | "ph" events | of them X | JSON MB | seconds (median; range) | "ph" events/s | vs Kineto's save |`);
  console.log(`|---|---:|---:|---:|---:|---:|---:|`);
  const row = (name: string, c: { ph: number; x: number }, mb: number, xs: number[], base: number) =>
    console.log(`| ${name} | ${c.ph} | ${c.x} | ${(mb / 1e6).toFixed(1)} | ${f2(med(xs))} (${f2(lo(xs))}–${f2(hi(xs))}) | ${(c.ph / med(xs) / 1e6).toFixed(2)}M | ×${(base / med(xs)).toFixed(2)} |`);
  row("Kineto save (export_chrome_trace)", kCount, kBytes, k.save, ks);
  row("Kineto process + save", kCount, kBytes, k.process.map((p, i) => p + k.save[i]), ks);
  row("Kineto whole process (reads the dump, both)", kCount, kBytes, k.wall, ks);
  row("rawtrace convert, its own seconds", rCount, rBytes, r.seconds, ks);
  row("rawtrace convert, whole process", rCount, rBytes, r.wall, ks);
  console.log(`whole process (median): CPU seconds Kineto ${f2(med(k.cpu))}, rawtrace ${f2(med(r.cpu))}; peak RSS Kineto ${med(k.rss).toFixed(0)} MB, rawtrace ${med(r.rss).toFixed(0)} MB`);
  console.log(`storing the JSON alone (dd to --tmp, median): Kineto's ${(kBytes / 1e6).toFixed(0)} MB ${f2(kStore)} s, rawtrace's ${(rBytes / 1e6).toFixed(0)} MB ${f2(rStore)} s; ` +
    `without it: Kineto's save ${f2(ks - kStore)} s, rawtrace ${f2(rs - rStore)} s, ×${((ks - kStore) / (rs - rStore)).toFixed(2)}`);
  console.log(`rawtrace against Kineto on the same records: ×${(ks / rs).toFixed(2)} by time (save / own seconds), ×${((kp + ks) / rs).toFixed(2)} (process + save / own seconds), ` +
    `×${((rCount.ph / rs) / (kCount.ph / ks)).toFixed(2)} by "ph" events/s, ×${(med(k.wall) / med(r.wall)).toFixed(2)} by whole process`);
  results.push({ file: basename(file), records: k.records, kineto: { ...k, count: kCount, bytes: kBytes, storeSeconds: kStore }, rawtrace: { ...r, count: rCount, bytes: rBytes, storeSeconds: rStore } });
}
mkdirSync("bench/results", { recursive: true });
const path = `bench/results/kineto-${new Date().toISOString().slice(0, 16).replace(/:/g, "")}.json`;
writeFileSync(path, JSON.stringify({ date: new Date().toISOString(), pin: values.pin, repeat, results }, null, 1));
console.log(`\nwrote ${path}`);
