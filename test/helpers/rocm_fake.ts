/**
 * Dumps from the rocprofiler-sdk test double: builds the ROCm collector, the fake SDK and the test program
 * (`make -C collectors/rocm test-bins`, as test/collectors/rocm_collector.test.ts does) and runs
 * test/collectors/rocm_app.c under the fake in the SDK 0.5 or 1.0 layouts. Returns the dump's bytes and the records
 * the fake printed as delivered (kind, size, payload hex), so a test can derive what the decoder must show.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/rocm");

/** One tracing record the fake delivered. */
export interface FakeRecord {
  kind: number;
  size: number;
  bytes: Buffer;
}

/** A dump of the test program and what the fake delivered. */
export interface FakeRun {
  dump: Uint8Array;
  records: FakeRecord[];
  pid: number;
}

let built = false;

function build(): void {
  if (!built) {
    execFileSync("make", ["-s", "-C", join(ROOT, "collectors/rocm"), "test-bins"], { stdio: "pipe" });
    built = true;
  }
}

function appEnv(sdk: "0.5" | "1.0", steps: number, out: string, env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(RAWTRACE_|FAKE_ROCP_|RT_APP_|ROCP_)/.test(k)) base[k] = v;
  const lib = join(BUILD, "librawtrace_rocm.so");
  return {
    ...base, RT_APP_SDK: join(BUILD, "fake/librocprofiler-sdk.so"), RT_APP_COLLECTOR: lib, ROCP_TOOL_LIBRARIES: lib,
    FAKE_ROCP_SDK: sdk, RT_APP_STEPS: String(steps), RAWTRACE_OUTPUT: out, ...env,
  };
}

function parse(stdout: string, dump: Uint8Array): FakeRun {
  const lines = stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  const records = lines.filter((e) => e.ev === "rec" && e.cat === 1)
    .map((e) => ({ kind: e.kind as number, size: e.size as number, bytes: Buffer.from(e.hex as string, "hex") }));
  return { dump, records, pid: lines[0]?.pid ?? -1 };
}

/**
 * As {@link fakeRocmDump}, but the program flushes (rawtrace_rocm_flush), prints "flushed" and is killed with SIGKILL:
 * the dump has no END chunk, and holds every record delivered before the flush.
 */
export function fakeRocmDumpKilled(sdk: "0.5" | "1.0", steps: number): Promise<FakeRun> {
  build();
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-rocm-fake-"));
  const out = join(dir, "fake.rawtrace");
  return new Promise((resolve, reject) => {
    const child = spawn(join(BUILD, "rocm_app"), ["kill"], { env: appEnv(sdk, steps, out, {}), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => {
      stdout += d;
      if (stdout.includes("\"ev\":\"flushed\"")) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("close", (_status, signal) => {
      clearTimeout(timer);
      try {
        if (signal !== "SIGKILL") throw new Error(`rocm_app ended with ${signal ?? "an exit"}, not SIGKILL`);
        resolve(parse(stdout, new Uint8Array(readFileSync(out))));
      } catch (e) {
        reject(e);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

/** Runs `steps` steps of test/collectors/rocm_app.c on the fake SDK `sdk`; `env` adds FAKE_ROCP_* settings. */
export function fakeRocmDump(sdk: "0.5" | "1.0", steps: number, env: Record<string, string> = {}): FakeRun {
  build();
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-rocm-fake-"));
  try {
    const out = join(dir, "fake.rawtrace");
    const r = spawnSync(join(BUILD, "rocm_app"), ["basic"], { encoding: "utf8", timeout: 60_000, env: appEnv(sdk, steps, out, env) });
    if (r.status !== 0) throw new Error(`rocm_app exit ${r.status} ${r.signal ?? ""}: ${r.stderr}`);
    return parse(r.stdout, new Uint8Array(readFileSync(out)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
