// `npm run web`: serves dist/web on localhost only, through the server `rawtrace view` uses
// (src/node/view_server.ts: the right types, a Content-Security-Policy that keeps the page from reaching anything
// but itself, nothing outside dist/web). Without --port (or PORT) it takes 8080, or the next free port.
//   node scripts/serve-web.mjs [--port N] [--dir dist/web]

/** src/node/view_server.ts, loaded through tsx when this runs under plain node. */
async function viewServer() {
  try {
    return await import("../src/node/view_server.ts");
  } catch (e) {
    if (e?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw e;
    const { tsImport } = await import("tsx/esm/api");
    return await tsImport("../src/node/view_server.ts", import.meta.url);
  }
}

const vs = await viewServer();

export const CSP = vs.CSP;

/**
 * Starts the static server on 127.0.0.1; `port` 0 picks a free one, a taken explicit port is an error, the default
 * (left out) falls back to the next free one. Resolves to {server, url}.
 * @param {{dir?: string, port?: number, host?: string}} [opts]
 */
export async function serveWeb({ dir = "dist/web", port, host = "127.0.0.1" } = {}) {
  const s = await vs.startViewerServer({ webDir: dir, port, host });
  return { server: s.server, url: s.url };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (k, d) => {
    const i = process.argv.indexOf(k);
    return i > 0 ? process.argv[i + 1] : d;
  };
  const p = arg("--port", process.env.PORT);
  try {
    const { url } = await serveWeb({ dir: arg("--dir", "dist/web"), port: p === undefined ? undefined : Number(p) });
    console.log(`rawtrace viewer: ${url} (Ctrl+C to stop)`);
  } catch (e) {
    console.error(`serve-web: ${e.message}`);
    process.exit(e.name === "USAGE" ? 2 : 4);
  }
}
