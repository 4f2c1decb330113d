// SPDX-License-Identifier: MIT
/**
 * `npm run web -- --port N` (docs/viewer.md): scripts/serve-web.mjs run as the npm script runs it, on the port asked
 * for, on 127.0.0.1 only, every response with the Content-Security-Policy, nothing outside dist/web served.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { networkInterfaces } from "node:os";

const PKG = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };

/** A port that was free a moment ago (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => ok(p));
    });
  });
}

/** GET (raw path, not normalized) → status, headers, body. */
function get(host: string, port: number, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((ok, fail) => {
    const req = request({ host, port, path, method: "GET" }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (b) => parts.push(b));
      res.on("end", () => ok({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString("utf8") }));
    });
    req.on("error", fail);
    req.end();
  });
}

/** Starts the server the way `npm run web -- <args>` ends: `node scripts/serve-web.mjs <args>`; resolves its URL line. */
function serve(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "PORT"));
  const child = spawn(process.execPath, ["scripts/serve-web.mjs", ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  return new Promise((ok, fail) => {
    let out = "";
    let err = "";
    child.stdout!.on("data", (b) => {
      out += b;
      const m = /rawtrace viewer: (http:\/\/\S+) /.exec(out);
      if (m) ok({ child, url: m[1] });
    });
    child.stderr!.on("data", (b) => (err += b));
    child.once("exit", (code) => fail(new Error(`serve-web.mjs exited ${code}: ${out}${err}`)));
  });
}

test("npm run web passes `-- --port N` to serve-web.mjs: the last command of the script", () => {
  // npm appends the arguments after `--` to the script's command line, so they reach its last command.
  assert.match(PKG.scripts.web, /&& node scripts\/serve-web\.mjs$/);
});

test("--port N: serves dist/web on 127.0.0.1:N with the CSP; paths outside dist/web are refused", async () => {
  assert.ok(existsSync("dist/web/index.html"), "dist/web not built (bash scripts/setup.sh)");
  const port = await freePort();
  const { child, url } = await serve(["--port", String(port)]);
  try {
    assert.is(url, `http://127.0.0.1:${port}/`);
    const page = await get("127.0.0.1", port, "/");
    assert.is(page.status, 200);
    assert.match(page.body, /<html/i);
    assert.match(String(page.headers["content-security-policy"]), /default-src 'self'/);
    assert.is(page.body, readFileSync("dist/web/index.html", "utf8"), "the built page");
    assert.is((await get("127.0.0.1", port, "/../package.json")).status, 404, "dot segments resolve inside dist/web");
    assert.is((await get("127.0.0.1", port, "/..%2fpackage.json")).status, 403, "an encoded slash cannot climb out");
    assert.is((await get("127.0.0.1", port, "/nope.js")).status, 404);
    // Localhost only: not reachable on the machine's other addresses.
    const other = Object.values(networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal);
    if (other) {
      const e = await get(other.address, port, "/").then(() => null, (x: NodeJS.ErrnoException) => x);
      assert.ok(e && e.code === "ECONNREFUSED", `reachable on ${other.address}`);
    }
  } finally {
    child.kill();
  }
});

test("without --port: 8080, the port the README and docs/viewer.md give", async () => {
  const busy = await new Promise<boolean>((ok) => {
    const s = createServer();
    s.once("error", () => ok(true));
    s.listen(8080, "127.0.0.1", () => s.close(() => ok(false)));
  });
  if (busy) {
    console.log("  port 8080 is taken on this machine: the default is not checked here");
    return;
  }
  const { child, url } = await serve([]);
  try {
    assert.is(url, "http://127.0.0.1:8080/");
    assert.is((await get("127.0.0.1", 8080, "/")).status, 200);
  } finally {
    child.kill();
  }
});

test.run();
