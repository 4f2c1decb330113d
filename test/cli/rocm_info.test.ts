/**
 * `rawtrace info` and `rawtrace stats` on the ROCm sample (samples/mi250_minitoy_rocprof.rawtrace) through the built
 * command line: the vendor with the rocprofiler-sdk version, every GPU agent with its gfx target, CUs, wavefront and
 * memory, and the records per kind by the SDK's own kind names.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { CHUNK_HEADER_SIZE, ChunkType, PREAMBLE_SIZE } from "../../src/format/container.js";
import { chunkSpans } from "../helpers/dump_chunks.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SAMPLE = join(ROOT, "samples/mi250_minitoy_rocprof.rawtrace");
const cli = (args: string[]) => spawnSync(process.execPath, [join(ROOT, "dist/node/cli.js"), ...args], { encoding: "utf8", timeout: 120000 });

test("info: vendor rocm with the SDK version, four MI250 GPU agents, records by kind name", () => {
  const r = cli(["info", SAMPLE]);
  assert.is(r.status, 0, r.stderr);
  const lines = r.stdout.split("\n");
  assert.ok(lines.includes("  vendor        rocm (rocprofiler-sdk 1.0.0, version 10000)"), r.stdout);
  for (let i = 0; i < 4; i++) {
    assert.ok(lines.includes(`  device ${i}      AMD Radeon Graphics (gfx90a, 104 CUs, wavefront 64, 63.98 GiB)`), r.stdout);
  }
  assert.match(r.stdout, /^ {4}HIP_RUNTIME_API +21$/m);
  assert.match(r.stdout, /^ {4}KERNEL_DISPATCH +14$/m);
  assert.match(r.stdout, /^ {4}MEMORY_COPY +2$/m);
});

test("info --json: vendorVersionText and each device's arch", () => {
  const r = cli(["info", "--json", SAMPLE]);
  assert.is(r.status, 0, r.stderr);
  const i = JSON.parse(r.stdout).files[0];
  assert.is(i.vendor, "rocm");
  assert.is(i.vendorVersionText, "1.0.0");
  assert.equal(i.devices.map((d: { arch: string }) => d.arch), ["gfx90a", "gfx90a", "gfx90a", "gfx90a"]);
});

test("info of a dump whose HEADER is lost or damaged: the pid its records give, said as such (programPid); '?' when nothing tells (before: 'pid 0'); the damaged HEADER's own, said to be that", () => {
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-info-pid-"));
  try {
    const intact = readFileSync(SAMPLE);
    const pid = intact.readUInt32LE(PREAMBLE_SIZE + CHUNK_HEADER_SIZE + 20);
    const spans = chunkSpans(intact);
    const without = (types: number[]) => Buffer.concat([intact.subarray(0, PREAMBLE_SIZE), ...spans.filter((c) => !types.includes(c.type)).map((c) => intact.subarray(c.off, c.end))]);
    const damaged = Buffer.from(intact);
    damaged[PREAMBLE_SIZE + CHUNK_HEADER_SIZE + 20] ^= 1;
    const cases: Array<[string, Buffer, string, number]> = [
      ["intact", intact, `pid ${pid} on `, pid],
      ["no HEADER", without([ChunkType.HEADER]), `pid ${pid} (from its records: no HEADER) on ?: ?`, pid],
      ["damaged pid", damaged, `pid ${pid} (from its records; the damaged HEADER says ${pid ^ 1}) on `, pid],
      ["no HEADER, no THREAD_NAMES", without([ChunkType.HEADER, ChunkType.THREAD_NAMES]), "pid ? on ?: ?", 0],
      // Nothing but the damaged HEADER gives a pid: the conversion uses it, and info says where it comes from.
      ["damaged pid, no THREAD_NAMES", Buffer.concat([damaged.subarray(0, PREAMBLE_SIZE), ...spans.filter((c) => c.type !== ChunkType.THREAD_NAMES).map((c) => damaged.subarray(c.off, c.end))]),
        `pid ${pid ^ 1} (the damaged HEADER's: no record gives another; it may be wrong) on `, pid ^ 1],
    ];
    for (const [what, bytes, line, programPid] of cases) {
      const f = join(dir, `${what.replace(/\W+/g, "_")}.rawtrace`);
      writeFileSync(f, bytes);
      const r = cli(["info", f]);
      assert.ok(r.stdout.includes(`  process       ${line}`), `${what}: ${r.stdout}`);
      assert.is(JSON.parse(cli(["info", "--json", f]).stdout).files[0].programPid, programPid, what);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("stats: the vendor line and the GPU agents above the GPU busy table", () => {
  const r = cli(["stats", SAMPLE]);
  assert.is(r.status, 0, r.stderr);
  const lines = r.stdout.split("\n");
  assert.is(lines[1], "  vendor        rocm (rocprofiler-sdk 1.0.0, version 10000)");
  assert.is(lines[2], "  device 0      AMD Radeon Graphics (gfx90a, 104 CUs, wavefront 64, 63.98 GiB)");
  assert.match(r.stdout, /GPU 2 +\S+ +\S+ +14 /);
});

test.run();
