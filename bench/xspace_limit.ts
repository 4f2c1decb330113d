// SPDX-License-Identifier: MIT
/**
 * The ≥ 2 GiB XSpace case (issue 17, target 4): a generated bench dump whose XSpace would exceed protobuf's message
 * limit (2^31 − 1 bytes), converted by the bundled CLI as a user runs it, under `/usr/bin/time -v`. Checks that the
 * conversion stops with XSPACE_TOO_LARGE and a message naming the file and the size, exits 1 and leaves no output
 * file; prints its wall time and peak RSS (the largest flat-memory data point). Too large for CI (a ≈ 5 GB dump,
 * minutes of CPU); run by hand:
 *
 *   npx tsx bench/xspace_limit.ts [--records 64000000] [--dir /tmp/rawtrace-limit] [--keep]
 *
 * The bench mix writes ≈ 35–37 bytes of XSpace per record, so 64M records (5.0 GB) give ≈ 2.3 GB. The dump is made
 * with bench/generate.ts unless one is there already, and deleted at the end unless `--keep`. Needs `npm run build`
 * (dist/node/cli.js) and GNU time at /usr/bin/time.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    records: { type: "string", default: "64000000" },
    dir: { type: "string", default: "/tmp/rawtrace-limit" },
    keep: { type: "boolean", default: false },
  },
});
const records = Number(values.records);
if (!Number.isInteger(records) || records < 1) throw new Error(`--records ${values.records}: expected a positive integer`);
const cli = "dist/node/cli.js";
if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build`);
if (!existsSync("/usr/bin/time")) throw new Error("/usr/bin/time (GNU time) is missing");
mkdirSync(values.dir!, { recursive: true });
const dump = join(values.dir!, `cupti_${records}.rawtrace`);
const out = join(values.dir!, "limit.xplane.pb");
rmSync(out, { force: true });

if (!existsSync(dump)) {
  console.error(`generating ${dump} (${records} records)`);
  const g = spawnSync(process.execPath, ["--import", "tsx", "bench/generate.ts", String(records), dump], { stdio: "inherit" });
  if (g.status !== 0) throw new Error(`bench/generate.ts failed (${g.status})`);
}
const inBytes = statSync(dump).size;

try {
  const r = spawnSync("/usr/bin/time", ["-v", process.execPath, cli, "convert", dump, "--format", "xspace", "-o", out], {
    encoding: "utf8",
    maxBuffer: 1 << 24,
  });
  const stderr = r.stderr;
  const rssKB = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? NaN);
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)/.exec(stderr)?.[1] ?? "?";
  const cpu = Number(/User time \(seconds\): ([\d.]+)/.exec(stderr)?.[1] ?? NaN) +
    Number(/System time \(seconds\): ([\d.]+)/.exec(stderr)?.[1] ?? NaN);
  const message = stderr.split("\n").find((l) => l.includes("XSPACE_TOO_LARGE") || l.includes("2 GiB")) ?? "";
  const size = Number(/would be (\d+) bytes/.exec(stderr)?.[1] ?? NaN);
  const result = {
    records,
    inputMB: Math.round(inBytes / 1e6),
    exitCode: r.status,
    tooLarge: /XSPACE_TOO_LARGE|over protobuf's 2 GiB message limit/.test(stderr),
    xspaceBytes: size,
    outputWritten: existsSync(out),
    wall,
    cpuSeconds: Math.round(cpu * 10) / 10,
    peakRssMB: Math.round(rssKB / 1024),
    message: message.trim(),
  };
  console.log(JSON.stringify(result, null, 2));
  const ok = result.exitCode === 1 && result.tooLarge && size > 0x7fffffff && !result.outputWritten;
  if (!ok) {
    console.error(stderr.slice(-4000));
    console.error("FAILED: expected exit 1, XSPACE_TOO_LARGE with a size over 2^31 - 1 and no output file");
    process.exitCode = 1;
  }
} finally {
  rmSync(out, { force: true });
  if (!values.keep) rmSync(dump, { force: true });
}
