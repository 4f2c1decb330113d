/**
 * The ROCm collector when memory runs out for kernel symbols and ROCTx messages: every one lost is counted in DROPPED
 * (reason 2, as the memory cap), none silently.
 *
 * Runs test/collectors/rocm_app.c on the rocprofiler-sdk test double (test/collectors/fake_rocprofiler.c: 3 kernel
 * symbols, then per step one roctxRangePushA message and, SDK 1.0, one range message) with the fault-injection build
 * of the collector (build/c/rocm/faults/, `make -C collectors/rocm test-bins`), whose RAWTRACE_ROCM_FAULTS makes the
 * allocation at the named sites fail (rt_rocm_fault, collectors/rocm/rocm_internal.h). Before, a failed allocation of
 * the pending list, of the KERNEL_SYMBOLS payload or of the STRINGS list freed the items with no count at all.
 * When only the list's growth past its first 64 entries fails (`pend-more`), what is pending is written early and
 * nothing is lost.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readDumpChunks, type DumpChunk } from "../helpers/dump_chunks.js";
import { ChunkType, DropReason } from "../../src/format/container.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/rocm");
const LIB = join(BUILD, "faults/librawtrace_rocm.so");
const STEPS = 12;
const KERNELS = 3;

let dir = "";

test.before(() => {
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/rocm"), "test-bins"], { stdio: "pipe" });
  dir = mkdtempSync(join(tmpdir(), "rawtrace-rocm-oom-"));
});
test.after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Dump { cs: DumpChunk[]; stats: Record<string, number>; stderr: string }

/**
 * Runs the program's basic scenario with the faults `faults` (a RAWTRACE_ROCM_FAULTS list) on SDK `sdk`, `steps`
 * steps, with `extra` added to the environment.
 */
function run(sdk: "0.5" | "1.0", faults: string, steps = STEPS, extra: NodeJS.ProcessEnv = {}): Dump {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(RAWTRACE_|FAKE_ROCP_|RT_APP_|ROCP_)/.test(k)) delete env[k];
  const out = join(dir, `${sdk}-${faults || "none"}-${steps}.rawtrace`);
  Object.assign(env, {
    RT_APP_SDK: join(BUILD, "fake/librocprofiler-sdk.so"), RT_APP_COLLECTOR: LIB, ROCP_TOOL_LIBRARIES: LIB,
    FAKE_ROCP_SDK: sdk, FAKE_ROCP_QUIET: "1", RT_APP_STEPS: String(steps), RAWTRACE_OUTPUT: out,
    RAWTRACE_ROCM_FAULTS: faults, ...extra,
  });
  const r = spawnSync(join(BUILD, "rocm_app"), ["basic"], { env, encoding: "utf8", timeout: 60_000 });
  assert.is(r.status, 0, `exit ${r.status} ${r.signal}; stderr:\n${r.stderr}`);
  const lines = r.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  const stats = lines.find((e) => e.ev === "stats");
  assert.ok(stats, `no stats line; stderr:\n${r.stderr}`);
  return { cs: readDumpChunks(out), stats, stderr: r.stderr };
}

const count = (cs: DumpChunk[], type: number) =>
  cs.filter((c) => c.type === type).reduce((n, c) => n + c.p.readUInt32LE(0), 0);
const capped = (cs: DumpChunk[]) => cs.filter((c) => c.type === ChunkType.DROPPED && c.p.readUInt32LE(8) === DropReason.MEMORY_CAP)
  .reduce((n, c) => n + Number(c.p.readBigUInt64LE(0)), 0);
/** ROCTx messages the fake makes: a push per step, and on SDK 1.0 a range per step too. */
const messages = (sdk: "0.5" | "1.0") => STEPS * (sdk === "1.0" ? 2 : 1);

for (const sdk of ["0.5", "1.0"] as const) {
  test(`SDK ${sdk}: no fault: every kernel symbol and message written, nothing dropped (the fault build is the collector)`, () => {
    const { cs } = run(sdk, "");
    assert.is(count(cs, ChunkType.KERNEL_SYMBOLS), KERNELS);
    assert.is(count(cs, ChunkType.STRINGS), messages(sdk));
    assert.is(cs.filter((c) => c.type === ChunkType.DROPPED).length, 0);
    assert.is(cs.at(-1)!.type, ChunkType.END);
  });

  for (const [faults, what] of [
    ["ksyms,strings", "the KERNEL_SYMBOLS payload and the STRINGS list cannot be allocated"],
    ["pend", "the pending list cannot grow"],
    ["items", "the callbacks cannot allocate their items"],
  ] as const) {
    test(`SDK ${sdk}: ${what}: each kernel symbol and message lost is counted in DROPPED (memory cap), END's total too`, () => {
      const { cs, stats } = run(sdk, faults);
      assert.is(count(cs, ChunkType.KERNEL_SYMBOLS), 0);
      assert.is(count(cs, ChunkType.STRINGS), 0);
      assert.is(capped(cs), KERNELS + messages(sdk));
      // The items the callbacks did make are the ones lost later (none when they could not make them).
      assert.is(stats.ksyms + stats.messages, faults === "items" ? 0 : KERNELS + messages(sdk));
      const end = cs.at(-1)!;
      assert.is(end.type, ChunkType.END);
      assert.is(Number(end.p.readBigUInt64LE(16)), KERNELS + messages(sdk), "END's dropped total");
      assert.ok(cs.some((c) => c.type === ChunkType.ACTIVITY), "the records still written");
    });
  }
}

/** STRINGS chunks' entries: [correlation id, message] in file order, and each chunk's count. */
function strings(cs: DumpChunk[]): { entries: Array<[bigint, string]>; counts: number[] } {
  const entries: Array<[bigint, string]> = [];
  const counts: number[] = [];
  for (const c of cs.filter((x) => x.type === ChunkType.STRINGS)) {
    const n = c.p.readUInt32LE(0);
    counts.push(n);
    let o = 4;
    for (let i = 0; i < n; i++) {
      const key = c.p.readBigUInt64LE(o);
      const len = c.p.readUInt32LE(o + 8);
      entries.push([key, c.p.toString("utf8", o + 12, o + 12 + len)]);
      o += 12 + len;
    }
    assert.is(o, c.p.length, "STRINGS payload fully read");
  }
  return { entries, counts };
}

// Only kernel dispatches in the buffers (plus the ROCTx callbacks, which are not buffer kinds) and 64 records per
// delivery: about 128 messages wait for each ACTIVITY chunk, so the pending list grows past its first 64 entries.
const MANY = 200;
const busy = { RAWTRACE_ROCM_KINDS: "KERNEL_DISPATCH", FAKE_ROCP_BATCH: "64" };

test("SDK 1.0: the pending list cannot grow past 64: what is pending is written early and nothing is lost", () => {
  const base = run("1.0", "", MANY, busy);
  const held = strings(base.cs);
  assert.ok(Math.max(...held.counts) > 64, `the scenario pends more than 64 messages (chunks: ${held.counts})`);

  const { cs, stats } = run("1.0", "pend-more", MANY, busy);
  const s = strings(cs);
  assert.is(stats.messages, 2 * MANY);
  assert.ok(s.counts.every((n) => n <= 64), `no STRINGS chunk over the list's first 64 entries: ${s.counts}`);
  assert.ok(s.counts.length > held.counts.length, "written in more, smaller chunks");
  // Every message, once, the same as without the fault (keys are the ROCTx calls' correlation ids).
  assert.is(s.entries.length, 2 * MANY);
  assert.equal(new Set(s.entries.map(([k]) => k)).size, 2 * MANY);
  assert.equal([...s.entries].sort(), [...held.entries].sort());
  assert.is(cs.filter((c) => c.type === ChunkType.DROPPED).length, 0);
  const end = cs.at(-1)!;
  assert.is(end.type, ChunkType.END);
  assert.is(Number(end.p.readBigUInt64LE(16)), 0, "END's dropped total");
  // Written early, never late: before each ACTIVITY chunk, at least the messages the run without the fault had
  // written by then (it writes what is pending before each buffer: docs/format.md, STRINGS).
  const before = (d: DumpChunk[]) => {
    const out: number[] = [];
    let n = 0;
    for (const c of d) {
      if (c.type === ChunkType.STRINGS) n += c.p.readUInt32LE(0);
      else if (c.type === ChunkType.ACTIVITY) out.push(n);
    }
    return out;
  };
  const early = before(cs);
  const plain = before(base.cs);
  assert.is(early.length, plain.length, "the same ACTIVITY chunks");
  assert.ok(plain.some((n, i) => i > 0 && n > plain[i - 1]), `messages written between buffers: ${plain}`);
  early.forEach((n, i) => assert.ok(n >= plain[i], `before ACTIVITY chunk ${i}: ${n} messages written, ${plain[i]} without the fault`));
});

test.run();
