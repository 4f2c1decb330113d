/**
 * `rawtrace view FILE… [--port N] [--host H] [--no-open]`: starts the viewer server (src/node/view_server.ts) on a
 * loopback address with the named files, prints the page's URL (which opens them) and opens it in the default
 * browser (`xdg-open` on Linux, `open` on macOS, `start` on Windows) unless `--no-open`. Runs until SIGINT or
 * SIGTERM, then closes the server and exits 0.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RawtraceError } from "../core/codes.js";
import { expandInputs } from "./inputs.js";
import { DEFAULT_PORT, startViewerServer, type ViewerServer } from "./view_server.js";
import { wasmPath } from "./wasm.js";

/** Options of `rawtrace view` as parsed by src/cli.ts. */
export interface ViewValues {
  port?: string;
  host?: string;
  "no-open"?: boolean;
}

/**
 * The built viewer of this package: `dist/web` next to the package.json named rawtrace above this module
 * (dist/node/cli.js or src/node/view.ts), or the folder RAWTRACE_WEB_DIR names.
 */
export function viewerDir(): string {
  if (process.env.RAWTRACE_WEB_DIR) return process.env.RAWTRACE_WEB_DIR;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    const p = join(dir, "package.json");
    if (!existsSync(p)) continue;
    const pkg = JSON.parse(readFileSync(p, "utf8")) as { name?: string };
    if (pkg.name === "rawtrace") return join(dir, "dist", "web");
  }
  throw new RawtraceError("IO", `package.json of rawtrace not found above ${fileURLToPath(import.meta.url)}: cannot find the viewer`);
}

/** The command that opens `url` in the default browser on this platform. */
export function openCommand(url: string, platform: NodeJS.Platform = process.platform): [string, string[]] {
  if (platform === "darwin") return ["open", [url]];
  // cmd reads & as a command separator: the URL's & (between file= parameters) are escaped for it.
  if (platform === "win32") return ["cmd", ["/c", "start", "", url.replace(/&/g, "^&")]];
  return ["xdg-open", [url]];
}

/** Opens `url` in the default browser; resolves to an error message when that could not be started, else null. */
function openBrowser(url: string): Promise<string | null> {
  const [cmd, args] = openCommand(url);
  return new Promise((ok) => {
    const child = spawn(cmd, args, { stdio: "ignore", detached: true });
    child.once("error", (e) => ok(`could not start ${cmd} (${(e as Error).message})`));
    child.once("spawn", () => {
      child.unref();
      ok(null);
    });
  });
}

function parsePort(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  // Digits only: Number() also reads '0x50', '1e1' and ' 99'.
  if (!/^\d+$/.test(v) || !Number.isInteger(n) || n < 0 || n > 65535) {
    throw new RawtraceError("USAGE", `--port must be a whole number from 0 to 65535, not '${v}'`);
  }
  return n;
}

/** `rawtrace view FILE…`: see the module comment. Resolves (exit code 0) after SIGINT or SIGTERM. */
export async function runView(args: string[], v: ViewValues): Promise<number> {
  if (args.length === 0) throw new RawtraceError("USAGE", "view needs .rawtrace files, directories or globs");
  const port = parsePort(v.port);
  // Directories and globs as every command takes them (src/node/inputs.ts), each file served once.
  const { files, unmatched, aliases } = expandInputs(args);
  for (const a of aliases) console.error(`rawtrace: ${a.path} is the same file as ${a.of}; view serves it once`);
  for (const p of unmatched) console.error(`rawtrace: ${p}: no .rawtrace file matches`);
  if (files.length === 0) throw new RawtraceError("IO", unmatched.map((p) => `${p}: no .rawtrace file matches`).join("; "));
  const srv: ViewerServer = await startViewerServer({ webDir: viewerDir(), files, port, host: v.host, coreWasm: wasmPath() });
  console.log(`rawtrace viewer: ${srv.pageUrl}`);
  if (v.port === undefined && srv.port !== DEFAULT_PORT) console.error(`rawtrace: port ${DEFAULT_PORT} is taken; serving on ${srv.port}`);
  if (!v["no-open"]) {
    const err = await openBrowser(srv.pageUrl);
    if (err) console.error(`rawtrace: ${err}: open the URL above in a browser`);
  }
  console.error("serving the viewer and the named files on this machine only (Ctrl+C to stop)");
  await new Promise<void>((ok) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      ok();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await srv.close();
  console.error("rawtrace: viewer stopped");
  return 0;
}
