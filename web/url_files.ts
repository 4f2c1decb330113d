/**
 * Files named in the page's URL, fetched from this server and handed to the page as Files named after the path's
 * last segment:
 *  - `?file=/files/0/run.rawtrace&file=…`, as `rawtrace view FILE…` opens the page (src/node/view.ts): only
 *    same-origin paths under /files/ (anything else is an error naming it);
 *  - `?open=PATH` (may repeat), a shareable link to a file the server offers: resolved against the page, kept only
 *    when same-origin (another origin is dropped without a request; the CSP allows none either).
 */

/** The same-origin URLs `search` (location.search) names, `file=` first, then `open=`; `base` is the page's URL. */
export function urlFiles(search: string, base: string): URL[] {
  const params = new URLSearchParams(search);
  const origin = new URL(base).origin;
  const out: URL[] = [];
  for (const p of params.getAll("file")) {
    if (!p.startsWith("/files/") || p.includes("\\")) throw new Error(`file=${p}: only /files/… paths of this server are opened`);
    out.push(new URL(p.split("/").map(encodeURIComponent).join("/"), base));
  }
  for (const p of params.getAll("open")) {
    const u = new URL(p, base);
    if (u.origin === origin) out.push(u);
  }
  return out;
}

/**
 * Fetches every file the URL names, in order. A file that cannot be fetched is reported through `onError` (with
 * its name and the server's answer) and skipped; the others still open.
 */
export async function filesFromUrl(search: string, base: string, onError: (msg: string) => void): Promise<File[]> {
  const out: File[] = [];
  let urls: URL[];
  try {
    urls = urlFiles(search, base);
  } catch (e) {
    onError((e as Error).message);
    return out;
  }
  for (const u of urls) {
    const name = decodeURIComponent(u.pathname.slice(u.pathname.lastIndexOf("/") + 1)) || "trace.rawtrace";
    try {
      const res = await fetch(u);
      if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
      out.push(new File([await res.blob()], name));
    } catch (e) {
      onError(`${name}: cannot fetch ${u.pathname}: ${(e as Error).message}`);
    }
  }
  return out;
}
