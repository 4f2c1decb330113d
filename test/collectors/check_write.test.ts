/**
 * rt_check_write (collectors/common/rawtrace_collector.c), the XPU and HPU collectors' check of each chunk written: a
 * chunk the writer refuses (too large, no memory to build it) is said as a warning and leaves recording on; the
 * first real write error stops recording and is said once.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/check_write");
const COMMON = join(ROOT, "collectors/common");
const CC = process.env.CC ?? "cc";

const APP = `
#include <errno.h>
#include <stdio.h>
#include "rawtrace_collector.h"
int main(void) {
  atomic_int failed = 0;
  rt_check_write(-EMSGSIZE, &failed, "/out/x.rawtrace", RT_V_WARN);
  rt_check_write(-ENOMEM, &failed, "/out/x.rawtrace", RT_V_WARN);
  printf("after refused: %d\\n", (int)failed);
  rt_check_write(-ENOSPC, &failed, "/out/x.rawtrace", RT_V_WARN);
  rt_check_write(-ENOSPC, &failed, "/out/x.rawtrace", RT_V_WARN);
  printf("after ENOSPC: %d\\n", (int)failed);
  return 0;
}
`;

test("a refused chunk is a warning and recording goes on; the first write error stops it, said once", () => {
  mkdirSync(BUILD, { recursive: true });
  const src = join(BUILD, "check_write_app.c");
  writeFileSync(src, APP);
  const bin = join(BUILD, "check_write_app");
  const srcs = ["rawtrace_collector.c", "rawtrace_writer.c", "rawtrace_checksum.c", "rawtrace_heap.c"].map((f) => join(COMMON, f));
  const b = spawnSync(CC, ["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", `-I${COMMON}`, src, ...srcs, "-o", bin, "-pthread"], { encoding: "utf8" });
  assert.is(b.status, 0, `${b.stdout}${b.stderr}`);
  const r = spawnSync(bin, [], { encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, "after refused: 0\nafter ENOSPC: 1\n");
  const lines = r.stderr.trim().split("\n");
  assert.is(lines.length, 3, r.stderr);
  assert.match(lines[0], /warning: chunk not written: Message too long/);
  assert.match(lines[1], /warning: chunk not written: Cannot allocate memory/);
  assert.match(lines[2], /error: writing \/out\/x\.rawtrace failed \(No space left on device\); recording stops/);
});

test.run();
