/**
 * The view as a URL hash, so a link reopens the same view of the same files: the files' names, visible window,
 * range selection (and its rows), selected event, measure, marks, search and step pattern. Times are integer ns
 * since the trace start (the earliest event of the files open, as web/layout.ts places them); rows and events are
 * `fileNumber:index`, the file's number being its place in the hash's list of files.
 *
 *   #file=run.rawtrace&file=rank1.rawtrace&file=run.rawtrace&view=0,5000000&range=1000,2000&rows=2:3.2:4&ev=1:1234
 *
 * `file=` repeats, once per open file in the order opened; the n-th `file=` of one name is the n-th copy of that
 * name (the file the viewer calls `name (n)`). `fid=` lists each file's identity ({@link fileId}: its size and the
 * process that wrote it), dot-separated in the same order, so that two different files of one name
 * (`rank0/trace.rawtrace`, `rank1/trace.rawtrace`) are told apart whatever order they are opened in. A reference
 * finds its file by name and identity, then (a file whose identity changed, a hash without `fid=`) by name and
 * copy, not by place, so the link restores the view with the same files opened in any order. The first format of
 * the hash named only the first file and numbered the files in the order opened: a reference past the list of
 * names can only come from it, and is read that way ({@link hashFiles}).
 */

/** Reference to a row or an event of the hash's n-th file. */
export interface Ref {
  file: number;
  index: number;
}

/** What the hash carries. Absent fields are undefined. */
export interface HashState {
  /** The open files' names, in the order opened (the first format: the first file's only). */
  files?: string[];
  /** Each of {@link HashState.files}' identity ({@link fileId}), in the same order; absent in older hashes. */
  ids?: string[];
  view?: [number, number];
  range?: [number, number];
  rows?: Ref[];
  ev?: Ref;
  measure?: [number, number];
  marks?: number[];
  q?: string;
  regex?: boolean;
  steps?: string;
}

function nums(s: string | null, n: number): number[] | undefined {
  if (s === null) return undefined;
  const v = s.split(",").map(Number);
  if (v.some((x) => !Number.isFinite(x)) || (n > 0 && v.length !== n)) return undefined;
  return v;
}

function ref(s: string): Ref | undefined {
  const m = /^(\d+):(\d+)$/.exec(s);
  return m ? { file: Number(m[1]), index: Number(m[2]) } : undefined;
}

/** Parses a location hash ("#…" or ""); malformed fields are dropped, never thrown. */
export function parseHash(hash: string): HashState {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  const st: HashState = {};
  const files = p.getAll("file").filter((x) => x);
  if (files.length) st.files = files;
  const ids = p.get("fid")?.split(".");
  if (ids && ids.length === files.length && ids.every((x) => /^[0-9a-f]{8}$/.test(x))) st.ids = ids;
  st.view = nums(p.get("view"), 2) as [number, number] | undefined;
  st.range = nums(p.get("range"), 2) as [number, number] | undefined;
  const rows = p.get("rows");
  if (rows) {
    const r = rows.split(".").map(ref);
    if (r.every((x) => x)) st.rows = r as Ref[];
  }
  const ev = p.get("ev");
  if (ev) st.ev = ref(ev);
  st.measure = nums(p.get("measure"), 2) as [number, number] | undefined;
  const marks = p.get("marks");
  if (marks) st.marks = nums(marks, 0);
  const q = p.get("q");
  if (q) st.q = q;
  if (p.get("re") === "1") st.regex = true;
  const steps = p.get("steps");
  if (steps) st.steps = steps;
  for (const k of Object.keys(st) as Array<keyof HashState>) if (st[k] === undefined) delete st[k];
  return st;
}

/** Writes a state as a hash ("" for an empty one). */
export function formatHash(st: HashState): string {
  const p = new URLSearchParams();
  const r = (x: number) => String(Math.round(x));
  for (const f of st.files ?? []) p.append("file", f);
  if (st.ids?.length && st.ids.length === st.files?.length) p.set("fid", st.ids.join("."));
  if (st.view) p.set("view", st.view.map(r).join(","));
  if (st.range) p.set("range", st.range.map(r).join(","));
  if (st.rows?.length) p.set("rows", st.rows.map((x) => `${x.file}:${x.index}`).join("."));
  if (st.ev) p.set("ev", `${st.ev.file}:${st.ev.index}`);
  if (st.measure) p.set("measure", st.measure.map(r).join(","));
  if (st.marks?.length) p.set("marks", st.marks.map(r).join(","));
  if (st.q) p.set("q", st.q);
  if (st.regex) p.set("re", "1");
  if (st.steps) p.set("steps", st.steps);
  const s = p.toString();
  return s ? `#${s}` : "";
}

/**
 * A file's identity in the hash: 8 hex digits (FNV-1a, 32 bits) of its size in bytes and the host, process id and
 * collector start of the dump. Two copies of one file share it; two ranks' dumps of one name do not.
 */
export function fileId(info: { bytes: number; hostname: string; pid: number; collectorStartNs: bigint }): string {
  const s = `${info.bytes}|${info.hostname}|${info.pid}|${info.collectorStartNs}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/**
 * The open file each of the hash's file numbers names (undefined where none is open), `open` being the files in
 * the order opened and `idOf` their {@link fileId}s: first the file of the same name and identity (the n-th of the
 * hash's entries with that name and identity is the n-th such open file), then, for entries left (no `fid=` in the
 * hash, or a file whose size changed), the first open file of the same name not taken, in the hash's order — the
 * same name and copy number when nothing matched by identity. A hash of the first format (a reference past its
 * list of names) numbered the files in the order opened: then `open` as it is.
 */
export function hashFiles<T extends { name: string }>(
  st: HashState, open: readonly T[], idOf?: (f: T) => string,
): Array<T | undefined> {
  const names = st.files ?? [];
  const refs = [...(st.rows ?? []), ...(st.ev ? [st.ev] : [])];
  if (refs.some((r) => r.file >= names.length)) return open.slice();
  const out: Array<T | undefined> = names.map(() => undefined);
  const taken = new Set<T>();
  const ids = st.ids;
  if (ids && idOf) {
    const openIds = open.map(idOf);
    names.forEach((name, k) => {
      const f = open.find((g, j) => !taken.has(g) && g.name === name && openIds[j] === ids[k]);
      if (f) {
        out[k] = f;
        taken.add(f);
      }
    });
  }
  names.forEach((name, k) => {
    if (out[k]) return;
    const f = open.find((g) => !taken.has(g) && g.name === name);
    if (f) {
      out[k] = f;
      taken.add(f);
    }
  });
  return out;
}
