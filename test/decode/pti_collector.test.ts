/**
 * The PTI decoder on what the real XPU collector writes: collectors/xpu preloaded into test/collectors/xpu_app.c with
 * the PTI test double (test/collectors/fake_pti.c: v1 records as 0.17.0, `_v2` records as 1.2.0) and the Level Zero
 * double (two devices). Every record the fake emitted must come out, with the tables the collector measured and
 * wrote: strides from KIND_SIZES, names from API_NAMES and STRINGS (kernel names demangled), devices from DEVICES by
 * UUID, framework ids from EXTERNAL_CORRELATION, and no warning.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { toChrome, events } from "../helpers/convert.js";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/xpu");
const STEPS = 40;
let dir = "";

function record(ver: string, extra: Record<string, string> = {}): Uint8Array {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(RAWTRACE_|FAKE_|RT_APP_|ZE_)/.test(k)) delete env[k];
  const out = join(dir, `${ver}${extra.FAKE_ZE_SUBDEVICES ? "-tiles" : ""}.rawtrace`);
  Object.assign(env, {
    LD_PRELOAD: join(BUILD, "librawtrace_xpu.so"), LD_LIBRARY_PATH: join(BUILD, "fake"),
    RAWTRACE_PTI_LIB: join(BUILD, "fake/libpti_view.so"), FAKE_PTI_VERSION: ver, RAWTRACE_OUTPUT: out,
    RAWTRACE_BUFFER_SIZE: "64k", RT_APP_STEPS: String(STEPS), ...extra,
  });
  const r = spawnSync(join(BUILD, "xpu_app"), ["run"], { env, encoding: "utf8", timeout: 60_000 });
  assert.is(r.status, 0, r.stderr);
  return new Uint8Array(readFileSync(out));
}

test.before(() => {
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/xpu"), "test-bins"], { stdio: "inherit" });
  dir = mkdtempSync(join(tmpdir(), "rawtrace-pti-collector-"));
});
test.after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

for (const ver of ["0.17.0", "1.2.0"]) {
  test(`collector + fake PTI ${ver}: every record decoded, on its device, named, correlated; no warning`, async () => {
    const { trace, result } = await toChrome(record(ver));
    assert.equal(result.info.warnings.map((w) => `${w.code} ${w.count}`), []);
    assert.is(result.info.vendor, "xpu");
    assert.equal(trace.deviceProperties.map((d: { name: string }) => d.name), ["Fake Intel GPU 0", "Fake Intel GPU 1"]);
    const k = events(trace, "kernel");
    assert.is(k.length, STEPS);
    k.forEach((e, i) => {
      // The fake's names are not valid Itanium mangling (the nested name lacks its closing E; c++filt leaves them
      // as they are too): shown raw.
      assert.is(e.name, `_ZN4fake6kernelILi${i % 7}EEvv`);
      assert.is(e.pid, i % 2);
      assert.is(e.dur, 3);
      assert.is(e.args["External id"], 1000 + i);
      // The fake names a source file for every other kernel (line 0).
      assert.is(e.args.source_file_name, i % 2 ? `/src/fake_${i % 3}.cpp` : undefined);
    });
    const c = events(trace, "gpu_memcpy");
    assert.is(c.length, STEPS);
    // The fake sets the memcpy type (H2D) but leaves the memory kinds 0 (MEMORY): Kineto's name shows both.
    assert.ok(c.every((e) => e.name === "Memcpy H2D (MEMORY(Unknown) -> MEMORY(Unknown))" &&
      e.args["l0 call"] === "zeCommandListAppendMemoryCopy(H2D)"), c[0].name);
    assert.equal(c.slice(0, 3).map((e) => e.args.bytes), [4096, 8192, 12288]);
    const f = events(trace, "gpu_memset");
    assert.is(f.length, STEPS);
    assert.ok(f.every((e) => e.name === "Memset (0 -> MEMORY(Unknown))" && e.args.bytes === 256));
    const rt = events(trace, "xpu_runtime");
    assert.is(rt.length, STEPS);
    assert.ok(rt.every((e) => e.name === "urEnqueueKernelLaunch"));
    // One flow out of each launch call, into its kernel, copy and fill (one correlation id per round).
    assert.is(events(trace, "ac2g", "s").length, STEPS);
    assert.is(events(trace, "ac2g", "f").length, 3 * STEPS);
    const comm = events(trace, "collective_comm");
    assert.is(comm.length, STEPS);
    assert.equal(comm.slice(0, 2).map((e) => e.name), ["xccl::oneccl_allreduce_0", "xccl::oneccl_allreduce_1"]);
  });
}

for (const ver of ["0.17.0", "1.2.0"]) {
  test(`collector + fake PTI ${ver}, COMPOSITE (2 tiles per card): tile kernels on their card, tile shown`, async () => {
    const bytes = record(ver, { FAKE_ZE_SUBDEVICES: "2" });
    const { trace, result } = await toChrome(bytes);
    assert.equal(result.info.warnings.map((w) => `${w.code} ${w.count}`), []);
    assert.is(trace.deviceProperties.length, 2, "tiles are no devices of their own");
    const k = events(trace, "kernel");
    assert.is(k.length, STEPS);
    // The fake runs round i's kernel on tile (i / 2) % 2 of card i % 2, SYCL queue 100 + 10 card + tile.
    k.forEach((e, i) => {
      const card = i % 2, tile = Math.floor(i / 2) % 2;
      assert.equal([e.pid, e.tid, e.args.tile], [card, 100 + 10 * card + tile, tile], `kernel ${i}`);
    });
    // Copies and fills stay on the card itself: no tile arg.
    assert.ok(events(trace, "gpu_memcpy").every((e) => e.args.tile === undefined));
    const rows = trace.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name" && e.tid >= 100 && e.tid < 200)
      .map((e) => `${e.pid}/${e.args.name}`).sort();
    assert.equal(rows, ["0/stream 100 (tile 0)", "0/stream 101 (tile 1)", "1/stream 110 (tile 0)", "1/stream 111 (tile 1)"]);
    // XSpace: the cards' planes only, a line per (tile, queue) holding that tile's kernels.
    const engine = await createEngine();
    const parts: Buffer[] = [];
    await engine.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
    const s = fromBinary(XSpaceSchema, Buffer.concat(parts));
    assert.equal(s.planes.filter((p) => p.name.startsWith("/device:GPU:")).map((p) => p.name).sort(),
      ["/device:GPU:0", "/device:GPU:1"]);
    for (const card of [0, 1]) {
      const pl = s.planes.find((p) => p.name === `/device:GPU:${card}`)!;
      for (const tile of [0, 1]) {
        const ln = pl.lines.find((l) => l.displayName.startsWith(`tile ${tile} (Stream #${100 + 10 * card + tile}(`));
        assert.ok(ln, `card ${card} tile ${tile}: ${pl.lines.map((l) => l.displayName || l.name)}`);
        assert.is(ln!.events.length, STEPS / 4);
      }
    }
  });
}

test.run();
