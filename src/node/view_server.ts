/**
 * The viewer's local HTTP server, shared by `rawtrace view` (src/node/view.ts) and `npm run web`
 * (scripts/serve-web.mjs): serves the built viewer (dist/web) and, read-only, the files named on the command line,
 * on a loopback address only. What it serves and nothing else:
 *
 * - `/` and the files of the viewer directory (request-time checks: no dot segment, no encoded slash or NUL, the
 *   real path, symlinks resolved, inside the directory's real path, a regular file; no directory listing);
 * - `/files/<i>/<name>`: the i-th named file, looked up (percent-decoded) in a table built at start: no path from
 *   the request ever reaches the file system for these.
 *
 * Every response carries a Content-Security-Policy that lets the page reach nothing but this server, and a request
 * whose Host header is not a loopback name is refused (421), so a web page cannot reach the server through DNS
 * rebinding. Only GET and HEAD. A request with {@link QUIET_HEADER} gets a failure as 204 with the status in
 * {@link STATUS_HEADER} (what the viewer page asks for, so that Chromium's console does not log it).
 */
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { closeSync, createReadStream, fstatSync, openSync, realpathSync, statSync, type Stats } from "node:fs";
import { basename, extname, join, sep } from "node:path";
import { isIP } from "node:net";
import { RawtraceError } from "../core/codes.js";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".map": "application/json",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** The page's Content-Security-Policy: nothing but this origin (and inline data/blob images). */
export const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:; " +
  "connect-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Request header (value "1") by which the viewer page (web/url_files.ts, which spells the two names again: it
 * imports nothing of Node) asks for a failure as 204 No Content with the status in {@link STATUS_HEADER}: Chromium
 * logs every fetch answered with an error status on the page's console ("Failed to load resource: … 404"), next to
 * the page's own message, and nothing the page does silences that line.
 */
export const QUIET_HEADER = "x-rawtrace-quiet";

/** The status a failure asked for with {@link QUIET_HEADER} would have had, e.g. "404 Not Found". */
export const STATUS_HEADER = "x-rawtrace-status";

/** The port `rawtrace view` and `npm run web` use unless told otherwise. */
export const DEFAULT_PORT = 8080;

/** Ports tried after a taken default before the OS is asked for any free one. */
const FALLBACK_TRIES = 10;

/** True for an address or name that only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped !== null && mapped[1].startsWith("127.");
}

/** Options of {@link startViewerServer}. */
export interface ViewerServerOptions {
  /** The built viewer (dist/web). */
  webDir: string;
  /** Files served read-only under `/files/<i>/<name>` (their order). */
  files?: string[];
  /** Port (default {@link DEFAULT_PORT}); 0: any free port. */
  port?: number;
  /**
   * When `port` is taken: true tries the next {@link FALLBACK_TRIES} ports, then any free one; false fails with an
   * IO error naming the port (default: true when `port` was left out).
   */
  fallback?: boolean;
  /** Loopback address to bind (default 127.0.0.1; `localhost` binds 127.0.0.1). Anything else is a USAGE error. */
  host?: string;
  /**
   * The core's `.wasm` (dist/node/rawtrace.wasm), served for the viewer's `/rawtrace-<hash>.wasm` when `webDir` does
   * not hold it: the npm package ships the core once (the viewer's copy is the same bytes, built from the same
   * build/rawtrace.wasm), not twice.
   */
  coreWasm?: string;
}

/** A running viewer server. */
export interface ViewerServer {
  server: Server;
  /** Base URL, e.g. `http://127.0.0.1:8080/`. */
  url: string;
  /** The port bound. */
  port: number;
  /** The address bound. */
  host: string;
  /** URL path of each named file (`/files/<i>/<name>`, percent-encoded), in order. */
  filePaths: string[];
  /**
   * The page that opens every named file: `<url>?file=<path>&file=…` (the base URL when none); the page fetches
   * each path (web/main.ts).
   */
  pageUrl: string;
  /** Stops listening and ends open connections. */
  close(): Promise<void>;
}

interface Named {
  path: string;
  name: string;
}

function headers(type: string, size: number): Record<string, string | number> {
  return {
    "content-type": type,
    "content-length": size,
    "cache-control": "no-cache",
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "cross-origin-opener-policy": "same-origin",
    "referrer-policy": "no-referrer",
  };
}

function fail(req: IncomingMessage, res: ServerResponse, status: number, text: string): void {
  // no-store: a file may be there on the next try, and a failure kept from a plain request is not asked quietly.
  const common = { "cache-control": "no-store", "content-security-policy": CSP, "x-content-type-options": "nosniff" };
  if (req.headers[QUIET_HEADER] === "1") {
    res.writeHead(204, { ...common, [STATUS_HEADER]: `${status} ${STATUS_CODES[status] ?? ""}`.trim() });
    res.end();
    return;
  }
  res.writeHead(status, { ...common, "content-type": "text/plain; charset=utf-8" });
  res.end(text);
}

function send(req: IncomingMessage, res: ServerResponse, file: string, type: string): void {
  // Opened before the status line: a file that cannot be read (its mode changed since the server started) is an
  // answer with a status, not a connection dropped after a 200.
  let fd: number;
  let size: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return fail(req, res, 403, "cannot read the file");
  }
  try {
    size = fstatSync(fd).size; // the file opened, which may have changed since `st`
  } catch {
    closeSync(fd);
    return fail(req, res, 403, "cannot read the file");
  }
  res.writeHead(200, headers(type, size));
  if (req.method === "HEAD" || size === 0) {
    closeSync(fd);
    res.end();
    return;
  }
  // Exactly the bytes Content-Length promised: a dump a collector still appends to grew meanwhile, and the bytes past
  // it went onto the kept-alive connection, where the next response then failed to parse.
  const s = createReadStream(file, { fd, start: 0, end: size - 1 });
  s.on("error", () => res.destroy());
  // A file that shrank meanwhile ends short of Content-Length: the connection is dropped, so that the client sees
  // a failed answer (before: it waited on the kept-alive connection for bytes that never came).
  s.on("end", () => (s.bytesRead === size ? res.end() : res.destroy()));
  s.pipe(res, { end: false });
}

/**
 * The viewer file a request path names, or an HTTP status: 403 for a path that tries to leave the directory (dot
 * segment, encoded slash or backslash, NUL, a symlink pointing out), 404 when there is no such regular file.
 */
export function resolveWebPath(root: string, pathname: string): string | 403 | 404 {
  const raw = pathname.endsWith("/") ? pathname + "index.html" : pathname;
  const segs = raw.split("/").slice(1);
  const parts: string[] = [];
  for (const s of segs) {
    let d: string;
    try {
      d = decodeURIComponent(s);
    } catch {
      return 403;
    }
    if (d === "" || d === "." || d === ".." || /[/\\\0]/.test(d)) return 403;
    parts.push(d);
  }
  let real: string;
  try {
    real = realpathSync(join(root, ...parts));
  } catch {
    return 404;
  }
  if (!real.startsWith(root + sep)) return 403;
  try {
    if (!statSync(real).isFile()) return 404;
  } catch {
    return 404;
  }
  return real;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((ok, no) => {
    const onError = (e: Error) => {
      server.off("listening", onListening);
      no(e);
    };
    const onListening = () => {
      server.off("error", onError);
      ok((server.address() as { port: number }).port);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen({ port, host, exclusive: true });
  });
}

/**
 * Starts the viewer server (see the module comment). Throws USAGE for a host that is not loopback, IO when the
 * viewer is not built or a named file is not a readable regular file, or when an explicit port is taken.
 */
export async function startViewerServer(o: ViewerServerOptions): Promise<ViewerServer> {
  let host = o.host ?? "127.0.0.1";
  if (!isLoopback(host)) {
    throw new RawtraceError("USAGE", `--host ${host}: the viewer binds to this machine only (127.0.0.1, ::1 or localhost)`);
  }
  if (host.toLowerCase() === "localhost") host = "127.0.0.1";
  host = host.replace(/^\[|\]$/g, "");
  let root: string;
  try {
    root = realpathSync(o.webDir);
    if (!statSync(join(root, "index.html")).isFile()) throw new Error("no index.html");
  } catch {
    throw new RawtraceError("IO", `the viewer is not built: ${join(o.webDir, "index.html")} is missing (run npm run build)`, o.webDir);
  }
  const named = new Map<string, Named>();
  const filePaths: string[] = [];
  (o.files ?? []).forEach((f, i) => {
    let st: Stats;
    try {
      st = statSync(f);
    } catch (e) {
      throw new RawtraceError("IO", `${f}: cannot read: ${(e as Error).message}`, f);
    }
    if (!st.isFile()) throw new RawtraceError("IO", `${f}: not a regular file`, f);
    try {
      closeSync(openSync(f, "r")); // readable now, not only there: said before serving, not as a dropped request
    } catch (e) {
      throw new RawtraceError("IO", `${f}: cannot read: ${(e as Error).message}`, f);
    }
    const name = basename(f);
    named.set(`/files/${i}/${name}`, { path: realpathSync(f), name });
    filePaths.push(`/files/${i}/${encodeURIComponent(name)}`);
  });

  const server = createServer((req, res) => {
    const hostHeader = req.headers.host ?? "";
    const hostName = hostHeader.startsWith("[") ? hostHeader.slice(0, hostHeader.indexOf("]") + 1) : hostHeader.split(":")[0];
    if (!isLoopback(hostName)) return fail(req, res, 421, "this server answers only to localhost names");
    if (req.method !== "GET" && req.method !== "HEAD") return fail(req, res, 405, "method not allowed");
    let pathname: string;
    try {
      pathname = new URL(req.url ?? "/", "http://localhost").pathname;
    } catch {
      return fail(req, res, 400, "bad request");
    }
    // An encoded slash or NUL is refused here as for the viewer's own files (docs/viewer.md). An encoded backslash
    // names a named file only exactly (a name may hold one: `run\1.rawtrace` is offered as `run%5C1.rawtrace`);
    // for the viewer's own files resolveWebPath refuses it.
    if (/%(2f|00)/i.test(pathname)) return fail(req, res, 403, "forbidden");
    let decoded: string | null;
    try {
      decoded = decodeURIComponent(pathname);
    } catch {
      decoded = null;
    }
    const file = decoded === null ? undefined : named.get(decoded);
    if (file) {
      let st: Stats;
      try {
        st = statSync(file.path);
      } catch {
        return fail(req, res, 404, "not found");
      }
      if (!st.isFile()) return fail(req, res, 404, "not found");
      return send(req, res, file.path, "application/octet-stream");
    }
    const r = resolveWebPath(root, pathname);
    if (r === 404 && o.coreWasm && /^\/rawtrace-[A-Z0-9]+\.wasm$/.test(pathname)) {
      try {
        statSync(o.coreWasm);
      } catch {
        return fail(req, res, 404, "not found");
      }
      return send(req, res, o.coreWasm, TYPES[".wasm"]);
    }
    if (r === 403) return fail(req, res, 403, "forbidden");
    if (r === 404) return fail(req, res, 404, "not found");
    send(req, res, r, TYPES[extname(r)] ?? "application/octet-stream");
  });

  const first = o.port ?? DEFAULT_PORT;
  const fallback = o.fallback ?? o.port === undefined;
  let port = -1;
  const tries = fallback && first !== 0 ? [...Array(FALLBACK_TRIES).keys()].map((k) => first + k).filter((p) => p < 65536).concat(0) : [first];
  for (const p of tries) {
    try {
      port = await listen(server, p, host);
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE" && p !== tries[tries.length - 1]) continue;
      if (code === "EADDRINUSE") {
        throw new RawtraceError("IO", `port ${p} on ${host} is in use${fallback ? "" : " (leave out --port and a free port is picked)"}`);
      }
      throw new RawtraceError("IO", `cannot listen on ${host}:${p}: ${(e as Error).message}`);
    }
  }
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/`;
  const pageUrl = filePaths.length ? `${url}?${filePaths.map((p) => `file=${p}`).join("&")}` : url;
  return {
    server, url, port, host, filePaths, pageUrl,
    close: () => new Promise<void>((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    }),
  };
}
