/**
 * Files named in the page's URL: `?file=/files/0/run.rawtrace&file=…`, as `rawtrace view FILE…` opens the page
 * (src/node/view.ts). Each is fetched from this server (same-origin paths under /files/ only; the CSP allows no
 * other) and handed to the page as a File named after the path's last segment.
 */

/** The same-origin paths `search` (location.search) names with `file=`; anything else is refused. */
export function urlFilePaths(search: string): string[] {
  const paths = new URLSearchParams(search).getAll("file");
  for (const p of paths) {
    if (!p.startsWith("/files/") || p.includes("\\")) throw new Error(`file=${p}: only /files/… paths of this server are opened`);
  }
  return paths;
}

/** Fetches every file the URL names, in order (rejects naming the path that failed). */
export async function filesFromUrl(search: string): Promise<File[]> {
  const out: File[] = [];
  for (const p of urlFilePaths(search)) {
    const name = p.slice(p.lastIndexOf("/") + 1);
    const res = await fetch(p.split("/").map(encodeURIComponent).join("/"));
    if (!res.ok) throw new Error(`${name}: the server answered ${res.status} ${res.statusText}`);
    out.push(new File([await res.blob()], name));
  }
  return out;
}
