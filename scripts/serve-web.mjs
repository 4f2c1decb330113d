// `npm run web`: serves dist/web on localhost only, with the right types (application/wasm for streaming
// compilation) and a Content-Security-Policy that keeps the page from reaching anything but itself.
//   node scripts/serve-web.mjs [--port N] [--dir dist/web]
import { createServer } from "node:http";
import { createReadStream, statSync } from "node:fs";
import { extname, join, normalize, resolve, sep } from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".map": "application/json",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

export const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:; " +
  "connect-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Starts the static server on 127.0.0.1; `port` 0 picks a free one. Resolves to {server, url}.
 * @param {{dir?: string, port?: number, host?: string}} [opts]
 */
export function serveWeb({ dir = "dist/web", port = 8080, host = "127.0.0.1" } = {}) {
  const root = resolve(dir);
  const server = createServer((req, res) => {
    let path;
    try {
      path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (path.endsWith("/")) path += "index.html";
    const file = normalize(join(root, path));
    if (file !== root && !file.startsWith(root + sep)) {
      res.writeHead(403).end();
      return;
    }
    let st;
    try {
      st = statSync(file);
    } catch {
      st = null;
    }
    if (!st || !st.isFile() || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(st ? 405 : 404, { "content-type": "text/plain" }).end(st ? "method not allowed" : "not found");
      return;
    }
    res.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": st.size,
      "cache-control": "no-cache",
      "content-security-policy": CSP,
      "x-content-type-options": "nosniff",
      "cross-origin-opener-policy": "same-origin",
    });
    if (req.method === "HEAD") res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, host, () => {
      const a = server.address();
      ok({ server, url: `http://${host}:${a.port}/` });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (k, d) => {
    const i = process.argv.indexOf(k);
    return i > 0 ? process.argv[i + 1] : d;
  };
  const { url } = await serveWeb({ dir: arg("--dir", "dist/web"), port: Number(arg("--port", process.env.PORT ?? 8080)) });
  console.log(`rawtrace viewer: ${url} (Ctrl+C to stop)`);
}
