/**
 * The view as a URL hash, so a link reopens the same view of the same file: file name, visible window, range
 * selection (and its rows), selected event, measure, marks, search and step pattern. Times are integer ns since
 * the trace start (the earliest event of the files open, as web/layout.ts places them); rows and events are
 * `fileIndex:index` into the files in the order they were opened.
 *
 *   #file=run.rawtrace&view=0,5000000&range=1000,2000&rows=0:3.0:4&ev=0:1234&measure=10,20&marks=5,6&q=gemm&re=1
 */

/** Reference to a row or an event of the n-th opened file. */
export interface Ref {
  file: number;
  index: number;
}

/** What the hash carries. Absent fields are undefined. */
export interface HashState {
  file?: string;
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
  const file = p.get("file");
  if (file) st.file = file;
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
  if (st.file) p.set("file", st.file);
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
