// SPDX-License-Identifier: MIT
/**
 * `rawtrace view` at the HTTP level (src/node/view_server.ts, src/node/view.ts): the viewer's files and the named
 * files are served, nothing else (no listing, no way out through `..`, `%2e%2e`, encoded slashes, absolute paths or
 * a symlink), only loopback addresses are bound and answered, a taken default port falls back to a free one and a
 * taken explicit one is a one-line error, the browser is started with the page URL, SIGINT stops it cleanly.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { Agent, createServer, request, type Server } from "node:http";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { QUIET_HEADER, STATUS_HEADER, isLoopback, resolveWebPath, startViewerServer } from "../../src/node/view_server.js";
import { openCommand } from "../../src/node/view.js";
import { urlFiles } from "../../web/url_files.js";

const tmp = mkdtempSync(join(tmpdir(), "rawtrace-view-"));
const web = join(tmp, "web");
mkdirSync(join(web, "sub"), { recursive: true });
writeFileSync(join(web, "index.html"), "<!doctype html><html><body>viewer</body></html>");
writeFileSync(join(web, "main.js"), "console.log('main')");
writeFileSync(join(web, "core-ABC.wasm"), Buffer.from([0, 0x61, 0x73, 0x6d]));
writeFileSync(join(web, "sub", "a.css"), "body{}");
const SECRET = "SECRET-OUTSIDE-THE-VIEWER";
writeFileSync(join(tmp, "secret.txt"), SECRET);
symlinkSync(join(tmp, "secret.txt"), join(web, "link-out.js"));
symlinkSync(tmp, join(web, "dir-out"));
const dumpA = join(tmp, "run a.rawtrace");
const dumpB = join(tmp, "b%41.rawtrace");
writeFileSync(dumpA, Buffer.from("RAWTRACE-A-".repeat(1000)));
writeFileSync(dumpB, Buffer.from("B"));

interface Reply { status: number; headers: Record<string, unknown>; body: Buffer }

/** One request with the raw path (not normalized by a URL parser), an optional Host header and other headers. */
function get(port: number, path: string, o: { host?: string; method?: string; address?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  return new Promise((ok, fail) => {
    const headers = { ...o.headers, ...(o.host ? { host: o.host } : {}) };
    const req = request({ host: o.address ?? "127.0.0.1", port, path, method: o.method ?? "GET", headers }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (b) => parts.push(b));
      res.on("end", () => ok({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
    });
    req.on("error", fail);
    req.end();
  });
}

/** Holds `port` on 127.0.0.1 (0: any) until closed. */
function occupy(port: number): Promise<{ server: Server; port: number } | null> {
  return new Promise((ok) => {
    const s = createServer();
    s.once("error", () => ok(null));
    s.listen(port, "127.0.0.1", () => ok({ server: s, port: (s.address() as { port: number }).port }));
  });
}

const CLI = ["--import", "tsx", "src/cli.ts", "view"];

/** Starts `rawtrace view <args>`; resolves when it printed its URL (or rejects with its output when it exits). */
function view(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string; err: () => string }> {
  const child = spawn(process.execPath, [...CLI, ...args], {
    stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, RAWTRACE_WEB_DIR: web, ...env },
  });
  let out = "";
  let err = "";
  child.stderr!.on("data", (b) => (err += b));
  return new Promise((ok, fail) => {
    child.stdout!.on("data", (b) => {
      out += b;
      const m = /^rawtrace viewer: (\S+)$/m.exec(out);
      if (m) ok({ child, url: m[1], err: () => err });
    });
    child.once("exit", (code) => fail(Object.assign(new Error(`view exited ${code}: ${out}${err}`), { code, out, err })));
  });
}

/** Runs `rawtrace view <args>` to its end (for the errors it must report before serving). */
function viewFails(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return view(args).then(
    ({ child }) => {
      child.kill();
      throw new Error("view served where it must refuse");
    },
    (e: { code: number | null; out: string; err: string }) => e,
  );
}

const exited = (c: ChildProcess) => new Promise<number | null>((ok) => c.once("exit", (code) => ok(code)));

test("isLoopback: 127/8, ::1, localhost and v4-mapped 127/8 only", () => {
  for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", "::ffff:127.0.0.1"]) assert.ok(isLoopback(h), h);
  for (const h of ["0.0.0.0", "::", "10.0.0.1", "192.168.1.2", "example.com", "localhost.evil.com", "128.0.0.1", "::ffff:10.0.0.1", ""]) {
    assert.not.ok(isLoopback(h), h);
  }
});

test("resolveWebPath: dot segments, encoded slashes, NUL and symlinks out are 403; missing and directories 404", () => {
  const root = web;
  assert.is(resolveWebPath(root, "/"), join(root, "index.html"));
  assert.is(resolveWebPath(root, "/sub/a.css"), join(root, "sub", "a.css"));
  for (const p of ["/..", "/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt", "/..%5csecret.txt", "/a%00b", "/link-out.js",
    "/dir-out/secret.txt", "//etc/passwd", "/%2Fetc%2Fpasswd", "/sub/./a.css", "/%E0%A4%A"]) {
    assert.is(resolveWebPath(root, p), 403, p);
  }
  for (const p of ["/nope.js", "/sub", "/sub/", "/files/0/x"]) assert.is(resolveWebPath(root, p), 404, p);
});

test("serves the viewer, the named files byte for byte, and nothing else", async () => {
  const s = await startViewerServer({ webDir: web, files: [dumpA, dumpB], port: 0 });
  try {
    assert.is(s.host, "127.0.0.1");
    assert.is((s.server.address() as { address: string }).address, "127.0.0.1");
    assert.equal(s.filePaths, ["/files/0/run%20a.rawtrace", "/files/1/b%2541.rawtrace"]);
    assert.is(s.pageUrl, `${s.url}?file=/files/0/run%20a.rawtrace&file=/files/1/b%2541.rawtrace`);
    const page = await get(s.port, "/");
    assert.is(page.status, 200);
    assert.is(page.body.toString(), readFileSync(join(web, "index.html"), "utf8"));
    assert.match(String(page.headers["content-security-policy"]), /default-src 'self'/);
    assert.is(page.headers["content-type"], "text/html; charset=utf-8");
    assert.is((await get(s.port, "/core-ABC.wasm")).headers["content-type"], "application/wasm");
    const a = await get(s.port, s.filePaths[0]);
    assert.is(a.status, 200);
    assert.ok(a.body.equals(readFileSync(dumpA)), "named file A, byte for byte");
    assert.is(a.headers["content-length"], String(readFileSync(dumpA).length));
    const b = await get(s.port, s.filePaths[1]);
    assert.ok(b.body.equals(readFileSync(dumpB)), "a name with a literal %41");
    const head = await get(s.port, s.filePaths[0], { method: "HEAD" });
    assert.is(head.status, 200);
    assert.is(head.body.length, 0);
    // What is not the viewer or a named file, by its index and name together.
    for (const p of ["/files/2/run%20a.rawtrace", "/files/1/run%20a.rawtrace", "/files/0/", "/files/", "/files", "/nope.js", "/sub/", "/sub"]) {
      const r = await get(s.port, p);
      assert.is(r.status, 404, p);
    }
    for (const p of ["/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/%2E%2E/secret.txt", "/..%2fsecret.txt", "/..%2F..%2Fsecret.txt",
      "/files/0/..%2f..%2fsecret.txt", "/files/0/../../secret.txt", `/${tmp}/secret.txt`, `/${encodeURIComponent(join(tmp, "secret.txt"))}`,
      "/link-out.js", "/dir-out/secret.txt", "/dir-out/", `http://127.0.0.1/${tmp}/secret.txt`]) {
      const r = await get(s.port, p);
      assert.ok(r.status === 403 || r.status === 404, `${p}: ${r.status}`);
      assert.not.ok(r.body.toString().includes(SECRET), `${p} leaked the file`);
    }
    // An encoded slash in a named file's path is refused as for the viewer's own files (before: 200, the file).
    for (const p of ["/files%2f0%2frun%20a.rawtrace", "/files%2F0/run%20a.rawtrace", "/files/0%5crun%20a.rawtrace"]) {
      assert.is((await get(s.port, p)).status, 403, p);
    }
    assert.is((await get(s.port, "/", { method: "POST" })).status, 405);
    assert.is((await get(s.port, "/", { method: "PUT" })).status, 405);
    // DNS rebinding: a page of another site that resolves its name to 127.0.0.1 sends its own Host.
    assert.is((await get(s.port, "/", { host: `evil.example:${s.port}` })).status, 421);
    assert.is((await get(s.port, s.filePaths[0], { host: "evil.example" })).status, 421);
    assert.is((await get(s.port, "/", { host: `localhost:${s.port}` })).status, 200);
    // Not reachable on the machine's other addresses.
    const other = Object.values(networkInterfaces()).flat().find((x) => x && x.family === "IPv4" && !x.internal);
    if (other) {
      const e = await get(s.port, "/", { address: other.address }).then(() => null, (x: NodeJS.ErrnoException) => x);
      assert.ok(e && e.code === "ECONNREFUSED", `reachable on ${other.address}`);
    }
  } finally {
    await s.close();
  }
});

test("a named file that grows while it is sent (a collector still writing it): exactly the bytes Content-Length promised, and the kept-alive connection's next response parses (before: the extra bytes broke it)", async () => {
  const grow = join(tmp, "growing.rawtrace");
  writeFileSync(grow, Buffer.alloc(16 << 20, 7));
  const s = await startViewerServer({ webDir: web, files: [grow], port: 0 });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const first = await new Promise<{ promised: number; got: number }>((ok, fail) => {
      const req = request({ host: "127.0.0.1", port: s.port, path: s.filePaths[0], agent }, (res) => {
        let got = 0;
        let chunks = 0;
        res.on("data", (d: Buffer) => {
          got += d.length;
          if (++chunks === 2) appendFileSync(grow, Buffer.alloc(1 << 20, 9)); // while the rest is still unsent
        });
        res.on("end", () => ok({ promised: Number(res.headers["content-length"]), got }));
        res.on("error", fail);
      });
      req.on("error", fail);
      req.end();
    });
    assert.equal(first, { promised: 16 << 20, got: 16 << 20 });
    const second = await new Promise<number>((ok, fail) => {
      request({ host: "127.0.0.1", port: s.port, path: "/", agent }, (res) => {
        res.resume();
        res.on("end", () => ok(res.statusCode ?? 0));
      }).on("error", fail).end();
    });
    assert.is(second, 200);
  } finally {
    agent.destroy();
    await s.close();
  }
});

test("a named file that shrinks while it is sent: the connection is dropped, the client sees a failed answer (before: it waited for bytes that never came)", async () => {
  const shrink = join(tmp, "shrinking.rawtrace");
  writeFileSync(shrink, Buffer.alloc(16 << 20, 7));
  const s = await startViewerServer({ webDir: web, files: [shrink], port: 0 });
  // The server's own idle timeout (5 s) would close the connection in the end: the answer must fail before it.
  s.server.keepAliveTimeout = 600_000;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const got = await new Promise<string>((ok) => {
      const req = request({ host: "127.0.0.1", port: s.port, path: s.filePaths[0], agent, timeout: 60_000 }, (res) => {
        let chunks = 0;
        res.on("data", () => {
          if (++chunks === 2) truncateSync(shrink, 1 << 20); // while the rest is still unsent
        });
        res.on("end", () => ok("ended"));
        res.on("aborted", () => ok("aborted"));
      });
      req.on("timeout", () => {
        ok("still waiting after 60 s");
        req.destroy();
      });
      req.on("error", () => ok("aborted"));
      req.end();
    });
    assert.is(got, "aborted");
  } finally {
    agent.destroy();
    await s.close();
  }
});

test("a named file whose name holds a backslash: served at the path the server offers, which the page's ?file= maps to (before: 403, and the page refused the name)", async () => {
  const odd = join(tmp, "run\\1.rawtrace");
  writeFileSync(odd, "odd");
  const s = await startViewerServer({ webDir: web, files: [odd], port: 0 });
  try {
    assert.is(s.filePaths[0], "/files/0/run%5C1.rawtrace");
    const r = await get(s.port, s.filePaths[0]);
    assert.is(r.status, 200);
    assert.is(r.body.toString(), "odd");
    const { urls } = urlFiles(new URL(s.pageUrl).search, s.pageUrl);
    assert.equal(urls.map((u) => u.pathname), [s.filePaths[0]], "the page asks for it by the same path");
    // A backslash that would stand for a slash is still refused.
    assert.is((await get(s.port, "/files%5C0/run%5C1.rawtrace")).status, 403);
  } finally {
    await s.close();
  }
});

test("asked quietly (the viewer's header), a failure is 204 with its status in a header; a file is served as usual", async () => {
  const s = await startViewerServer({ webDir: web, files: [dumpA], port: 0 });
  try {
    const quiet = { headers: { [QUIET_HEADER]: "1" } };
    // Chromium logs a fetch answered 404 on the page's console; 204 it does not.
    for (const [p, status] of [["/files/0/nope.rawtrace", "404 Not Found"], ["/nope.js", "404 Not Found"], ["/..%2fsecret.txt", "403 Forbidden"]]) {
      const r = await get(s.port, p, quiet);
      assert.is(r.status, 204, p);
      assert.is(r.headers[STATUS_HEADER], status, p);
      assert.is(r.body.length, 0, p);
      assert.is(r.headers["cache-control"], "no-store", p);
      assert.is((await get(s.port, p)).status, Number(status.slice(0, 3)), `${p} without the header`);
    }
    const a = await get(s.port, s.filePaths[0], quiet);
    assert.is(a.status, 200);
    assert.is(a.headers[STATUS_HEADER], undefined);
    assert.ok(a.body.equals(readFileSync(dumpA)));
  } finally {
    await s.close();
  }
});

test("a taken port: the default falls back to a free one, an explicit one is an IO error naming it", async () => {
  const held = (await occupy(0))!;
  try {
    const s = await startViewerServer({ webDir: web, port: held.port, fallback: true });
    try {
      assert.is.not(s.port, held.port);
      assert.is((await get(s.port, "/")).status, 200);
    } finally {
      await s.close();
    }
    try {
      await startViewerServer({ webDir: web, port: held.port });
      assert.unreachable("an explicit taken port must fail");
    } catch (e) {
      assert.is((e as Error).name, "IO");
      assert.match((e as Error).message, `port ${held.port} on 127.0.0.1 is in use`);
    }
  } finally {
    held.server.close();
  }
});

test("refuses a host that is not loopback, a missing viewer and a missing file, before listening", async () => {
  for (const host of ["0.0.0.0", "::", "192.168.0.1", "example.com"]) {
    try {
      await startViewerServer({ webDir: web, port: 0, host });
      assert.unreachable(host);
    } catch (e) {
      assert.is((e as Error).name, "USAGE", host);
    }
  }
  await startViewerServer({ webDir: join(tmp, "nope"), port: 0 }).then(() => assert.unreachable(), (e: Error) => {
    assert.is(e.name, "IO");
    assert.match(e.message, "the viewer is not built");
  });
  await startViewerServer({ webDir: web, port: 0, files: [join(tmp, "missing.rawtrace")] }).then(() => assert.unreachable(), (e: Error) => {
    assert.is(e.name, "IO");
    assert.match(e.message, "missing.rawtrace");
  });
  await startViewerServer({ webDir: web, port: 0, files: [tmp] }).then(() => assert.unreachable(), (e: Error) => {
    assert.match(e.message, "not a regular file");
  });
});

test("::1 when this machine has IPv6 loopback", async () => {
  const v6 = await new Promise<boolean>((ok) => {
    const s = createServer();
    s.once("error", () => ok(false));
    s.listen(0, "::1", () => s.close(() => ok(true)));
  });
  if (!v6) return console.log("  no IPv6 loopback here: ::1 not checked");
  const s = await startViewerServer({ webDir: web, port: 0, host: "::1" });
  try {
    assert.is(s.url, `http://[::1]:${s.port}/`);
    assert.is((await get(s.port, "/", { address: "::1", host: `[::1]:${s.port}` })).status, 200);
  } finally {
    await s.close();
  }
});

test("openCommand: xdg-open, open, start", () => {
  assert.equal(openCommand("http://127.0.0.1:1/", "linux"), ["xdg-open", ["http://127.0.0.1:1/"]]);
  assert.equal(openCommand("http://127.0.0.1:1/", "darwin"), ["open", ["http://127.0.0.1:1/"]]);
  assert.equal(openCommand("http://127.0.0.1:1/?file=/files/0/a&file=/files/1/b", "win32"),
    ["cmd", ["/c", "start", "", "http://127.0.0.1:1/?file=/files/0/a^&file=/files/1/b"]]);
});

test("rawtrace view: default port taken → the next free one, a message, no stack trace; SIGINT stops it (exit 0)", async () => {
  const held = await occupy(8080); // null: someone else holds 8080, which is as good
  try {
    const { child, url, err } = await view([dumpA, "--no-open"]);
    const port = Number(new URL(url).port);
    assert.is.not(port, 8080);
    assert.is(url, `http://127.0.0.1:${port}/?file=/files/0/run%20a.rawtrace`);
    const r = await get(port, "/files/0/run%20a.rawtrace");
    assert.ok(r.body.equals(readFileSync(dumpA)));
    const code = exited(child);
    child.kill("SIGINT");
    assert.is(await code, 0);
    assert.match(err(), "port 8080 is taken");
    assert.match(err(), "viewer stopped");
    assert.not.match(err(), /\n\s+at /, "no stack trace");
    const gone = await get(port, "/").then(() => null, (x: NodeJS.ErrnoException) => x.code);
    assert.is(gone, "ECONNREFUSED");
  } finally {
    held?.server.close();
  }
});

test("rawtrace view --port N taken: exit 4 with one line; bad --port and --host are usage errors (exit 2)", async () => {
  const held = (await occupy(0))!;
  try {
    const r = await viewFails([dumpA, "--no-open", "--port", String(held.port)]);
    assert.is(r.code, 4);
    assert.is(r.err.trim(), `rawtrace: port ${held.port} on 127.0.0.1 is in use (leave out --port and a free port is picked)`);
  } finally {
    held.server.close();
  }
  for (const args of [["--port", "http"], ["--port", "70000"], ["--port", "0x50"], ["--port", "1e1"], ["--port", " 99"], ["--host", "0.0.0.0"], ["--host", "10.1.2.3"]]) {
    const r = await viewFails([dumpA, "--no-open", ...args]);
    assert.is(r.code, 2, args.join(" "));
    assert.match(r.err, /^rawtrace: usage: /);
  }
  const none = await viewFails(["--no-open"]);
  assert.is(none.code, 2);
  const missing = await viewFails([join(tmp, "missing.rawtrace"), "--no-open"]);
  assert.is(missing.code, 4);
  assert.match(missing.err, "missing.rawtrace");
});

test("rawtrace view without --no-open starts the platform's opener with the page URL", async () => {
  const bin = join(tmp, "bin");
  mkdirSync(bin, { recursive: true });
  const got = join(tmp, "opened.txt");
  writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$@" > '${got}'\n`);
  chmodSync(join(bin, "xdg-open"), 0o755);
  const { child, url } = await view([dumpA, dumpB, "--port", "0"], { PATH: `${bin}:${process.env.PATH}` });
  try {
    for (let i = 0; i < 1200; i++) { // up to 60 s: the opener's start on a loaded machine, no timing window
      try {
        if (readFileSync(got, "utf8")) break;
      } catch {
        // not yet
      }
      await new Promise((ok) => setTimeout(ok, 50));
    }
    assert.is(readFileSync(got, "utf8"), `${url}\n`);
    assert.match(url, /\?file=\/files\/0\/run%20a\.rawtrace&file=\/files\/1\/b%2541\.rawtrace$/);
  } finally {
    const code = exited(child);
    child.kill("SIGINT");
    assert.is(await code, 0);
  }
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
