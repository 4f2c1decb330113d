/**
 * bench/output_hashes.ts, the byte-identity check of core builds: the release and the debug build of the core must
 * write the same bytes for every sample and fixture in every output format, and the tool says so (status 0).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";

const ROOT = new URL("../../", import.meta.url).pathname;

test("release and debug builds: every output byte-identical, one line per file and format", () => {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", "bench/output_hashes.ts", "--wasm", "build/rawtrace.wasm,build/rawtrace.debug.wasm", "--no-bench"],
    { cwd: ROOT, encoding: "utf8" },
  );
  assert.is(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  const rows = lines.slice(0, -1);
  assert.ok(rows.length >= 15, "samples and fixtures × 3 formats");
  for (const row of rows) assert.match(row, /^ {2}[0-9a-f]{16} {2}[0-9a-f]{16} {2}\S+\.rawtrace (chrome|xspace|timeline)$/);
  assert.ok(rows.some((l) => l.endsWith("samples/h100_torch_train_nvtx.rawtrace chrome")));
  assert.is(lines.at(-1), `all ${rows.length} outputs byte-identical`);
});

test.run();
