/**
 * src/node/wasm_flags.ts: the process runs without V8's wasm code GC, whose task posted from a background compile
 * thread to a worker isolate being torn down made Node 20 die of SIGSEGV after a complete output (a pool closing
 * while the tier-up of its worker's last conversion still compiled: 1 in several hundred small `merge` runs). The race
 * itself cannot be hit on demand; what is checked is that the path is gone: under `--stress-wasm-code-gc` (a code GC
 * at every chance) and `--trace-wasm-code-gc`, a conversion on workers and a merge print no wasm code GC at all
 * (78 lines before, for the conversion).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "../../bench/generate.js";
import { CLI } from "../helpers/cli.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-wasm-flags-"));
const dump = join(tmp, "g.rawtrace");
const other = join(tmp, "h.rawtrace");
generate(200_000, dump);
generate(100_000, other);

const traced = (...args: string[]) => {
  const r = spawnSync(process.execPath, ["--stress-wasm-code-gc", "--trace-wasm-code-gc", CLI, ...args], { encoding: "utf8", timeout: 120_000 });
  assert.is(r.status, 0, r.stderr);
  return `${r.stdout}${r.stderr}`.split("\n").filter((l) => l.includes("[wasm-gc]"));
};

test("no wasm code GC in a conversion on a worker and the main thread's writer, nor in a merge of two ranks on two workers", () => {
  assert.equal(traced("convert", dump, "-o", join(tmp, "g.json"), "--jobs", "2"), []);
  assert.equal(traced("merge", dump, other, "--format", "xspace", "-o", join(tmp, "merged")), []);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));
test.run();
