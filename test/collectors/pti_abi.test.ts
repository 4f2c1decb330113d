/**
 * ABI truth for the XPU collector: the record layouts declared in collectors/xpu/pti_abi.h against the real Intel PTI
 * libraries, without an Intel GPU.
 *
 * scripts/pti-libs.sh caches the pinned `intel-pti` wheels (0.12.4 and 0.17.0: v1 records; 1.2.0: `_v2` records) and
 * the compiler runtime their core library needs into .cache/pti/. The PTI core also needs a Level Zero loader; a
 * stand-in `libze_loader.so.1` is built here from the core libraries' own undefined `ze*` symbols (`nm -D`), each a
 * function answering ZE_RESULT_ERROR_UNINITIALIZED, so the real core loads with no driver. test/collectors/pti_abi.c
 * then lets each library's own `ptiViewGetNextRecord` walk buffers written from our structs: for every kind 0..15 it
 * must step exactly our declared size (and not step at all where we declare none), and a buffer holding one record of
 * every declared kind must be walked record by record to END_OF_BUFFER. The measured table is printed per version.
 * Only when the package index cannot be reached (and nothing is cached) are the checks skipped, with the reason.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CACHE = process.env.RAWTRACE_PTI_CACHE ?? join(ROOT, ".cache/pti");
const BUILD = join(ROOT, "build/c/xpu/abi");
const VERSIONS = ["0.12.4", "0.17.0", "1.2.0"] as const;

/** The strides the real libraries step (reference note intel-pti-libraries.md), kind → bytes; absent = unknown kind. */
const EXPECTED: Record<(typeof VERSIONS)[number], Record<number, number>> = {
  "0.12.4": { 1: 168, 3: 48, 5: 56, 6: 48, 7: 24, 8: 136, 9: 136, 10: 168, 11: 72 },
  "0.17.0": { 1: 168, 3: 48, 5: 56, 6: 48, 7: 24, 8: 136, 9: 136, 10: 168, 11: 72, 12: 56 },
  "1.2.0": { 1: 184, 3: 48, 5: 56, 6: 48, 7: 24, 8: 152, 9: 152, 10: 192, 11: 72, 12: 64 },
};
/** API ids stable from 0.11 to 1.x (reference note), group/id → name. */
const STABLE_NAMES: Record<string, string> = {
  "3/17": "urEnqueueKernelLaunch", "3/32": "urEnqueueUSMFill", "3/33": "urEnqueueUSMMemcpy", "3/42": "urEventWait",
  "3/97": "urQueueFinish", "1/41": "zeCommandListAppendMemoryCopy", "1/42": "zeCommandListAppendMemoryFill",
  "1/55": "zeCommandListAppendLaunchKernel", "1/84": "zeEventHostSynchronize",
};
const KIND_NAMES = ["INVALID", "DEVICE_GPU_KERNEL", "DEVICE_CPU_KERNEL", "DRIVER_API", "RESERVED",
  "COLLECTION_OVERHEAD", "RUNTIME_API", "EXTERNAL_CORRELATION", "DEVICE_GPU_MEM_COPY", "DEVICE_GPU_MEM_FILL",
  "DEVICE_GPU_MEM_COPY_P2P", "DEVICE_SYNCHRONIZATION", "COMMUNICATION"];

/** Finds `name` anywhere below `dir` (the 1.x core sits in lib/pti/). */
function findBelow(dir: string, name: string): string | undefined {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isFile() && e.name === name) return p;
    if (e.isDirectory()) {
      const q = findBelow(p, name);
      if (q) return q;
    }
  }
  return undefined;
}

const fetched = spawnSync("bash", [join(ROOT, "scripts/pti-libs.sh"), ...VERSIONS], { encoding: "utf8" });
const skip = fetched.status === 3 ? `package index unreachable: ${fetched.stderr.trim().split("\n").pop()}` : "";
if (fetched.status !== 0 && !skip) {
  throw new Error(`scripts/pti-libs.sh failed (status ${fetched.status}):\n${fetched.stdout}${fetched.stderr}`);
}

interface Probe { kind: number; declared: number; rc1: number; rc2: number; measured: number }
interface Result { head: { version: string; gen: number; core: string }; probes: Probe[];
  walk: { walk: number; bytes: number; ok: boolean; detail: string } }
const results = new Map<string, Result>();

if (skip) {
  // Reported as one named test, so the run says why nothing was checked (the suite counts a file without tests as
  // crashed).
  test(`SKIPPED: real PTI libraries not available (${skip})`, () => {
    console.log(`pti_abi: SKIPPED, ${skip}`);
  });
} else {
  test("build: the stand-in Level Zero loader from the cores' own imports, and the ABI program", () => {
    mkdirSync(join(BUILD, "ze"), { recursive: true });
    const names = new Set<string>();
    for (const v of VERSIONS) {
      const core = findBelow(join(CACHE, v, "lib"), "libpti.so");
      assert.ok(core, `${v}: no libpti.so under ${join(CACHE, v, "lib")}`);
      const out = execFileSync("nm", ["-D", "--undefined-only", core!], { encoding: "utf8" });
      for (const line of out.split("\n")) {
        const sym = line.trim().split(/\s+/).pop()?.replace(/@.*$/, "") ?? "";
        if (/^ze[a-zA-Z0-9_]+$/.test(sym)) names.add(sym);
      }
    }
    // The reference note counts 73 distinct ze*/zes*/zet*/zel* imports over these three cores.
    assert.ok(names.size >= 33, `only ${names.size} Level Zero imports found`);
    const src = [...names].sort().map((n) => `int ${n}(void) { return 0x78000001; } /* ZE_RESULT_ERROR_UNINITIALIZED */`);
    writeFileSync(join(BUILD, "ze/ze_stub.c"), src.join("\n") + "\n");
    execFileSync("cc", ["-shared", "-fPIC", "-Wl,-soname,libze_loader.so.1", join(BUILD, "ze/ze_stub.c"), "-o",
      join(BUILD, "ze/libze_loader.so.1")]);
    execFileSync("cc", ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", `-I${join(ROOT, "collectors/xpu")}`,
      join(ROOT, "test/collectors/pti_abi.c"), "-o", join(BUILD, "pti_abi"), "-ldl"]);
    console.log(`pti_abi: stand-in libze_loader.so.1 exports ${names.size} Level Zero functions`);
  });

  for (const v of VERSIONS) {
    test(`PTI ${v}: the library's own ptiViewGetNextRecord steps exactly our record sizes`, () => {
      const lib = join(CACHE, v, "lib");
      const core = findBelow(lib, "libpti.so")!;
      const LD_LIBRARY_PATH = [lib, join(core, ".."), join(CACHE, "cmplr/lib"), join(BUILD, "ze")].join(":");
      const r = spawnSync(join(BUILD, "pti_abi"), [join(lib, "libpti_view.so"), core],
        { env: { ...process.env, LD_LIBRARY_PATH }, encoding: "utf8", timeout: 60_000 });
      assert.is(r.status, 0, `pti_abi ${v} exited ${r.status}: ${r.stdout}${r.stderr}`);
      const lines = r.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
      const head = lines[0];
      assert.is(head.version, v, "ptiVersion() of the loaded library");
      assert.is(head.core, "ok", `${v}: the core libpti.so does not load (every view call would answer 2, ` +
        `NOT_IMPLEMENTED): ${head.core}`);
      assert.is(head.gen, v.startsWith("0.") ? 1 : 2);
      const probes: Probe[] = lines.filter((l) => "kind" in l);
      assert.is(probes.length, 16);
      for (const p of probes) {
        const name = KIND_NAMES[p.kind] ?? String(p.kind);
        // The first call succeeds whatever the first record's kind (the library checks a kind only when leaving it).
        assert.is(p.rc1, 0, `${v} kind ${p.kind} ${name}: first ptiViewGetNextRecord answered ${p.rc1}`);
        if (p.declared) {
          assert.is(p.rc2, 0, `${v} kind ${p.kind} ${name}: stepping past our ${p.declared}-byte record answered ${p.rc2}`);
          assert.is(p.measured, p.declared, `${v} kind ${p.kind} ${name}: library stride ${p.measured}, ours ${p.declared}`);
        } else {
          assert.is(p.measured, -1, `${v} kind ${p.kind} ${name}: the library steps ${p.measured} bytes for a kind we do not declare`);
          assert.ok(p.rc2 === 3 || p.rc2 === 1, `${v} kind ${p.kind}: unknown kind answered ${p.rc2}`);
        }
        assert.is(p.declared || undefined, EXPECTED[v][p.kind], `${v} kind ${p.kind}: declared size vs the reference table`);
      }
      const walk = lines.find((l) => "walk" in l);
      assert.ok(walk?.ok, `${v}: walk of every declared kind: ${walk?.detail}`);
      assert.is(walk.walk, Object.keys(EXPECTED[v]).length);
      // API names: the ids Kineto-like traces use name the same calls in every version; every named id lies in the
      // range the collector asks (0..4095), far from its end.
      const named = Object.fromEntries(lines.filter((l) => "name" in l).map((l) => [`${l.group}/${l.id}`, l.name]));
      assert.equal(named, STABLE_NAMES, `${v}: ptiViewGetApiIdName`);
      const groups = lines.filter((l) => "names" in l);
      assert.is(groups.length, 2);
      for (const g of groups) {
        assert.ok(g.count > 150, `${v} group ${g.names}: ${g.count} names`);
        assert.ok(g.max_id < 2048, `${v} group ${g.names}: max id ${g.max_id}`);
      }
      console.log(`pti_abi: ${v}: ptiViewGetApiIdName names ${groups.map((g) => `${g.count} ids (max ${g.max_id}) in group ${g.names}`).join(", ")}`);
      results.set(v, { head, probes, walk });
    });
  }

  test("the collector with the real libraries and no driver: the program runs, one line says why", () => {
    execFileSync("make", ["-s", "-C", join(ROOT, "collectors/xpu")], { stdio: "inherit" });
    for (const v of VERSIONS) {
      const lib = join(CACHE, v, "lib");
      const core = findBelow(lib, "libpti.so")!;
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const k of Object.keys(env)) if (/^(RAWTRACE_|ZE_)/.test(k)) delete env[k];
      Object.assign(env, {
        LD_PRELOAD: join(ROOT, "build/c/xpu/librawtrace_xpu.so"), RAWTRACE_PTI_LIB: join(lib, "libpti_view.so"),
        LD_LIBRARY_PATH: [lib, join(core, ".."), join(CACHE, "cmplr/lib"), join(BUILD, "ze")].join(":"),
        RAWTRACE_OUTPUT: join(BUILD, `nodriver-${v}.rawtrace`),
      });
      const r = spawnSync("/bin/echo", ["still runs"], { env, encoding: "utf8", timeout: 60_000 });
      // PTI's collector aborts the process when zeInit fails; the collector must ask Level Zero first.
      assert.is(r.status, 0, `${v}: ${r.signal ?? ""} ${r.stderr}`);
      assert.is(r.stdout, "still runs\n");
      const why = r.stderr.split("\n").filter((l) => l.includes("XPU collector inactive"));
      assert.is(why.length, 1, r.stderr);
      assert.ok(why[0].includes(`PTI ${v}: zeInit answered 0x78000001`), why[0]);
    }
  });

  test("measured stride table per version (printed)", () => {
    assert.is(results.size, VERSIONS.length);
    const cols = [...results.keys()];
    const rows = [`| kind | ${cols.join(" | ")} |`, `|---|${cols.map(() => "---:").join("|")}|`];
    for (let k = 0; k < 16; k++) {
      const cells = cols.map((v) => {
        const p = results.get(v)!.probes[k];
        return p.measured >= 0 ? String(p.measured) : `unknown (${p.rc2})`;
      });
      rows.push(`| ${k} ${KIND_NAMES[k] ?? ""} | ${cells.join(" | ")} |`);
    }
    rows.push(`| walk (records/bytes) | ${cols.map((v) => `${results.get(v)!.walk.walk}/${results.get(v)!.walk.bytes}`).join(" | ")} |`);
    console.log(`pti_abi: record strides stepped by the real libpti_view.so\n${rows.join("\n")}`);
  });
}

test.run();
