/**
 * The collectors' heap use during a signal's exit flush (collectors/common/rawtrace_heap.c): before the freeze the
 * heap's own calls; after it nothing is freed (the heap's in-use bytes unchanged), a heap block grows by copy into
 * mapped memory (the old one untouched), calloc zeroes and checks overflow, small blocks span several 1 MiB slabs
 * without overlap, big blocks get mappings of their own, four threads allocate at once, a signal whose handler
 * allocates never finds its own thread holding the frozen heap's lock (signals are blocked while it is held), and the
 * init of a PID namespace (pid 1: the process goes on after the signal) never freezes. The integration — a SIGTERM
 * landing inside malloc — is in xpu_collector.test.ts. test/collectors/heap_app.c runs the cases.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/heap");
const CC = process.env.CC ?? "cc";

test("rawtrace_heap: the heap's before the freeze, mapped memory and nothing freed after it", () => {
  mkdirSync(BUILD, { recursive: true });
  const bin = join(BUILD, "heap_app");
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors")], { stdio: "inherit" }); // build/c/librawtrace_common.a
  const b = spawnSync(CC, ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", `-I${join(ROOT, "collectors/common")}`,
    join(ROOT, "test/collectors/heap_app.c"), join(ROOT, "collectors/common/rawtrace_heap.c"),
    join(ROOT, "build/c/librawtrace_common.a"), "-o", bin, "-pthread", "-ldl"], { encoding: "utf8" });
  assert.is(b.status, 0, `${b.stdout}${b.stderr}`);
  const r = spawnSync(bin, [], { encoding: "utf8", timeout: 60_000 });
  assert.is(r.status, 0, `${r.stdout}${r.stderr}`);
  const ok = r.stdout.trim().split("\n").filter((l) => l.startsWith("ok "));
  assert.is(ok.length, 13, r.stdout);
});

test("a termination signal's note freezes the heap, except in the init of a PID namespace (pid 1: the process goes on)", () => {
  const bin = join(BUILD, "heap_app");
  assert.match(spawnSync(bin, ["note-signal"], { encoding: "utf8" }).stdout, /^pid \d+ frozen 1$/m);
  // pid 1 of a new PID namespace (a container's program without an init), where user namespaces are allowed.
  const ns = ["--user", "--pid", "--fork", "--map-root-user"];
  if (spawnSync("unshare", [...ns, "true"]).status !== 0) {
    console.log("  (heap.test.ts: unshare cannot make a PID namespace here; the pid-1 case is not run)");
    return;
  }
  const r = spawnSync("unshare", [...ns, bin, "note-signal"], { encoding: "utf8" });
  assert.is(r.stdout.trim(), "pid 1 frozen 0", r.stderr);
});

test.run();
