/**
 * Files named in the page's URL, fetched from this server and handed to the page as Files named after the path's
 * last segment:
 *  - `?file=/files/0/run.rawtrace&file=…`, as `rawtrace view FILE…` opens the page (src/node/view.ts): only
 *    same-origin paths under /files/ (anything else is an error naming it);
 *  - `?open=PATH` (may repeat), a shareable link to a file the server offers: resolved against the page, kept only
 *    when same-origin (another origin is refused without a request, and said; the CSP allows none either).
 */

/**
 * Asks rawtrace's own server (src/node/view_server.ts QUIET_HEADER, STATUS_HEADER) to answer a failure as 204 with
 * the status in a header: Chromium logs every fetch answered with an error status on the console ("Failed to load
 * resource: … 404"), next to the page's own message, and no fetch option silences it (a HEAD first logs the same).
 * A plain static server ignores the header: its 404 is still logged.
 */
const QUIET = { "x-rawtrace-quiet": "1" };
/** The status of a failure answered quietly, e.g. "404 Not Found". */
const STATUS = "x-rawtrace-status";

/**
 * The same-origin URLs `search` (location.search) names, `file=` first, then `open=`; `base` is the page's URL.
 * An `open=` of another origin (or not a URL) is not fetched: `refused` says which and why.
 */
export function urlFiles(search: string, base: string): { urls: URL[]; refused: string[] } {
  const params = new URLSearchParams(search);
  const origin = new URL(base).origin;
  const urls: URL[] = [];
  const refused: string[] = [];
  for (const p of params.getAll("file")) {
    // Each segment encoded again as the server offered it: a name's backslash, `?` or `#` stays part of the name.
    if (!p.startsWith("/files/")) throw new Error(`file=${p}: only /files/… paths of this server are opened`);
    urls.push(new URL(p.split("/").map(encodeURIComponent).join("/"), base));
  }
  for (const p of params.getAll("open")) {
    let u: URL;
    try {
      u = new URL(p, base);
    } catch {
      refused.push(`open=${p}: not a path or URL`);
      continue;
    }
    if (u.origin === origin) urls.push(u);
    else refused.push(`open=${p}: another site (${u.origin}): only files of this server are opened`);
  }
  return { urls, refused };
}

/**
 * Fetches every file the URL names, in order. A file that cannot be fetched is reported through `onError` (with
 * its name and the server's answer) and skipped; the others still open. `onProgress` is told the bytes of each file
 * as they arrive (`total` from Content-Length, 0 when the server gave none): a big dump takes seconds to come, and
 * nothing on screen said so. `signal` (the page's Cancel) stops the downloads; the files fetched before it are kept.
 */
export async function filesFromUrl(
  search: string, base: string, onError: (msg: string) => void,
  onProgress?: (name: string, done: number, total: number) => void, signal?: AbortSignal,
): Promise<File[]> {
  const out: File[] = [];
  let urls: URL[];
  try {
    const named = urlFiles(search, base);
    urls = named.urls;
    if (named.refused.length) onError(named.refused.join("; "));
  } catch (e) {
    onError((e as Error).message);
    return out;
  }
  for (const u of urls) {
    if (signal?.aborted) break;
    const name = decodeURIComponent(u.pathname.slice(u.pathname.lastIndexOf("/") + 1)) || "trace.rawtrace";
    try {
      const res = await fetch(u, { headers: QUIET, signal });
      const failed = res.status === 204 ? res.headers.get(STATUS) : null;
      if (failed) throw new Error(failed);
      if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
      out.push(new File(await bodyOf(res, (done, total) => onProgress?.(name, done, total)), name));
    } catch (e) {
      if (signal?.aborted) break; // cancelled: said by the page, not as a failure of this file
      onError(`${name}: cannot fetch ${u.pathname}: ${(e as Error).message}`);
    }
  }
  return out;
}

/** A response's bytes as they arrive, told to `onProgress` (bytes so far, Content-Length or 0). */
async function bodyOf(res: Response, onProgress: (done: number, total: number) => void): Promise<BlobPart[]> {
  const total = Number(res.headers.get("content-length") ?? 0) || 0;
  if (!res.body) return [await res.blob()];
  const parts: BlobPart[] = [];
  let done = 0;
  const reader = res.body.getReader();
  onProgress(0, total);
  for (;;) {
    const { done: end, value } = await reader.read();
    if (end) break;
    parts.push(value);
    done += value.length;
    onProgress(done, total);
  }
  return parts;
}
