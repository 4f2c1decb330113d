/**
 * The viewer page: open or drop .rawtrace files, convert them in a Web Worker (web/worker.ts, the same WebAssembly
 * core as the CLI), draw the timeline (web/view.ts), show details of the selection, search by name, a summary
 * (src/core/stats.ts) and downloads. Everything stays in the page: no request leaves localhost.
 */
import * as Comlink from "comlink";
import { Flag, Kind, TL_NONE, TimelineEvents } from "../src/core/timeline.js";
import { EventKind, byTotal, type TraceStats } from "../src/core/stats.js";
import type { JobCallbacks, WorkerApi } from "./worker.js";
import { COPY_KINDS, KIND_NAMES, eventName, makeLoadedFile, rowWord, shortName, type LoadedFile } from "./model.js";
import { TimelineView, type Sel } from "./view.js";
import { bytes, dur, int, usExact } from "./format.js";
import { filesFromUrl } from "./url_files.js";

const $ = <T extends HTMLElement = HTMLElement>(sel: string) => document.querySelector(sel) as T;

const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "rawtrace-core" });
const api = Comlink.wrap<WorkerApi>(worker);
const view = new TimelineView($<HTMLCanvasElement>("#canvas"));
const files: LoadedFile[] = [];
const stats = new Map<number, TraceStats>();
let nextId = 1;
let busy = 0;

// ---- Progress, errors ----------------------------------------------------------------------------------------------

const LOAD_PASSES: Record<number, string> = { 1: "indexing", 2: "building timeline", 3: "projecting NVTX ranges" };
const EXPORT_PASSES: Record<number, string> = { 1: "indexing", 2: "writing", 3: "projecting NVTX ranges" };
let job = 0;

function progress(label: string, done: number, total: number): void {
  const p = $("#progress");
  p.hidden = false;
  const frac = total > 0 ? Math.min(1, done / total) : 0;
  ($(".progress .fill") as HTMLElement).style.width = `${(frac * 100).toFixed(1)}%`;
  $(".progress .text").textContent = `${label} ${(frac * 100).toFixed(0)}%`;
}

function progressDone(): void {
  if (busy === 0) {
    job++;
    $("#progress").hidden = true;
  }
}

function showError(msg: string): void {
  const e = $("#error");
  e.textContent = msg;
  e.hidden = false;
  setTimeout(() => (e.hidden = true), 12000);
}

function isCancel(e: unknown): boolean {
  return (e as Error)?.name === "CANCELLED";
}

/** Callbacks for one worker job; progress that arrives after the job ended (another channel) is dropped. */
function callbacks(label: string, passes: Record<number, string>, extra: Partial<JobCallbacks> = {}): JobCallbacks {
  const mine = ++job;
  return Comlink.proxy({
    progress(done: number, total: number, pass: number) {
      if (mine === job && busy > 0) progress(`${label}: ${passes[pass] ?? "pass " + pass}`, done, total);
    },
    ...extra,
  });
}

$("#cancel").addEventListener("click", () => {
  void api.cancel();
});

// ---- Loading -------------------------------------------------------------------------------------------------------

async function openFiles(list: File[]): Promise<void> {
  for (const f of list) await loadOne(f);
}

async function loadOne(file: File): Promise<void> {
  const id = nextId++;
  const events = new TimelineEvents();
  busy++;
  document.body.dataset.state = files.length ? "ready" : "loading";
  try {
    const cb = callbacks(file.name, LOAD_PASSES, {
      chunk(chunk: ArrayBuffer) {
        events.add(chunk);
      },
    });
    const res = await api.load(id, file, cb);
    const lf = makeLoadedFile(id, file.name, res.info, res.meta, events, res.ms, res.coreBytes);
    files.push(lf);
    view.setFiles(files);
    refreshFiles();
    document.body.dataset.state = "ready";
    document.body.dataset.loadMs = String(Math.round(res.ms));
    document.body.dataset.coreBytes = String(res.coreBytes);
    document.body.dataset.passMs = JSON.stringify(res.passMs);
    if (res.info.warnings.length) {
      showError(`${file.name}: ${res.info.warnings.map((w) => `${w.code} ×${w.count}`).join(", ")}`);
    }
    // The summary (rawtrace stats) was aggregated by the core in the same pass.
    if (res.stats) {
      stats.set(id, res.stats);
      renderSummary();
      document.body.dataset.summary = "ready";
    } else document.body.dataset.summary = "none";
  } catch (e) {
    if (!isCancel(e)) showError(`${file.name}: ${(e as Error).message}`);
    if (!files.length) document.body.dataset.state = "empty";
    else document.body.dataset.state = "ready";
  } finally {
    busy--;
    progressDone();
  }
}

const input = $<HTMLInputElement>("#file");
input.addEventListener("change", () => {
  const list = [...(input.files ?? [])];
  input.value = "";
  void openFiles(list);
});

let dragDepth = 0;
window.addEventListener("dragenter", (e) => {
  e.preventDefault();
  dragDepth++;
  document.body.classList.add("dragging");
});
window.addEventListener("dragleave", () => {
  if (--dragDepth <= 0) {
    dragDepth = 0;
    document.body.classList.remove("dragging");
  }
});
window.addEventListener("dragover", (e) => e.preventDefault());
window.addEventListener("drop", (e) => {
  e.preventDefault();
  dragDepth = 0;
  document.body.classList.remove("dragging");
  const list = [...(e.dataTransfer?.files ?? [])];
  if (list.length) void openFiles(list);
});
// `rawtrace view FILE…` opens the page with ?file=/files/<i>/<name> (web/url_files.ts).
void filesFromUrl(location.search).then(openFiles, (e: Error) => showError(e.message));

// ---- File lists, row list ------------------------------------------------------------------------------------------

/** Refreshes the file chips, the file selectors (showing the newest file) and the row list. */
function refreshFiles(): void {
  const chips = $("#file-list");
  chips.textContent = "";
  for (const f of files) {
    const c = document.createElement("span");
    c.className = "chip";
    c.textContent = `${f.name} · ${int(f.meta.header.events)} events`;
    chips.append(c);
  }
  for (const sel of [$<HTMLSelectElement>("#export-file"), $<HTMLSelectElement>("#summary-file")]) {
    sel.textContent = "";
    for (const f of files) sel.append(new Option(f.name, String(f.id)));
    sel.value = String(files[files.length - 1].id);
    sel.hidden = files.length < 2;
  }
  for (const b of ["#search", "#fit", "#dl-json", "#dl-xspace"]) ($(b) as HTMLInputElement).disabled = false;
  // An accessible list of the rows (the canvas has none), also what tests read.
  const list = $("#row-list");
  list.textContent = "";
  for (const f of files) {
    for (let r = 0; r < f.meta.header.rows; r++) {
      const li = document.createElement("li");
      li.dataset.file = f.name;
      li.dataset.class = String(rowWord(f, r, 0));
      li.dataset.a = String(rowWord(f, r, 1));
      li.dataset.b = String(rowWord(f, r, 2));
      li.dataset.lanes = String(rowWord(f, r, 5));
      li.dataset.events = String(rowWord(f, r, 7));
      li.textContent = `${f.rowGroups[r]} · ${f.rowLabels[r]}: ${rowWord(f, r, 7)} events`;
      list.append(li);
    }
  }
}

$("#fit").addEventListener("click", () => view.fit());

// ---- Details -------------------------------------------------------------------------------------------------------

function relStart(s: Sel): number {
  return s.file.offset + s.file.events.start(s.i) - view.traceOrigin;
}

function kv(dl: HTMLElement, key: string, field: string, value: string | Node, title?: string): void {
  const dt = document.createElement("dt");
  dt.textContent = key;
  const dd = document.createElement("dd");
  dd.dataset.field = field;
  if (typeof value === "string") dd.textContent = value;
  else dd.append(value);
  if (title) dd.title = title;
  dl.append(dt, dd);
}

function selLink(s: Sel, text: string): HTMLButtonElement {
  const b = document.createElement("button");
  b.className = "link";
  b.type = "button";
  b.textContent = text;
  b.addEventListener("click", () => {
    view.reveal(s);
    view.select(s);
  });
  return b;
}

function renderDetails(s: Sel | null): void {
  const body = $("#details-body");
  body.textContent = "";
  body.classList.toggle("muted", !s);
  if (!s) {
    body.textContent = "Click a slice to see its details.";
    return;
  }
  const f = s.file;
  const ev = f.events;
  const i = s.i;
  const k = ev.kind(i);
  const name = document.createElement("div");
  name.className = "ename";
  name.dataset.field = "name";
  name.textContent = eventName(f, i);
  body.append(name);
  const dl = document.createElement("dl");
  dl.className = "kv";
  const row = ev.row(i);
  kv(dl, "Kind", "kind", KIND_NAMES[k] ?? `kind ${k}`);
  kv(dl, "Row", "row", `${f.rowGroups[row]} · ${f.rowLabels[row]}`);
  if (files.length > 1) kv(dl, "File", "file", f.name);
  kv(dl, "Start", "start", `${usExact(relStart(s))} µs`, "since the start of the trace");
  const exact = `${usExact(ev.dur(i))} µs`;
  if (ev.flags(i) & Flag.INCOMPLETE) {
    kv(dl, "Duration", "duration", "unknown (incomplete)", "the vendor record has no end: still running at the final flush");
  } else kv(dl, "Duration", "duration", dur(ev.dur(i)) === exact ? exact : `${exact} (${dur(ev.dur(i))})`);
  const x0 = ev.word(i, 9);
  const x1 = ev.word(i, 10);
  const x2 = ev.word(i, 11);
  if (k === Kind.KERNEL) {
    kv(dl, "Grid", "grid", `[${x0}, ${x1 & 0xffff}, ${x1 >>> 16}]`);
    kv(dl, "Block", "block", `[${x2 & 0x7ff}, ${(x2 >>> 11) & 0x7ff}, ${(x2 >>> 22) & 0x3ff}]`);
  } else if (k === Kind.MEMCPY || k === Kind.MEMSET) {
    const n = x0 + x1 * 2 ** 32;
    kv(dl, "Bytes", "bytes", `${int(n)} (${bytes(n)})`);
    if (k === Kind.MEMCPY) {
      kv(dl, "Direction", "direction", COPY_KINDS[x2 & 0xff] ?? `kind ${x2 & 0xff}`);
      if (ev.dur(i) > 0) kv(dl, "Bandwidth", "bandwidth", `${(n / ev.dur(i)).toFixed(3)} GB/s`);
    } else kv(dl, "Value", "value", String(x2));
  } else if (k === Kind.API_RUNTIME || k === Kind.API_DRIVER) {
    kv(dl, "cbid", "cbid", String(x0));
    if (ev.flags(i) & Flag.EXTERNAL) kv(dl, "External id", "external", String(x1));
  } else if (k === Kind.RANGE || k === Kind.INSTANT) {
    if (x1 !== TL_NONE) kv(dl, "Domain", "domain", f.names[x1]);
  } else if (k === Kind.GRAPH) {
    kv(dl, "Graph id", "graph", String(x0));
  }
  const corr = ev.correlation(i);
  if (corr !== 0) kv(dl, "Correlation", "correlation", String(corr));
  const p = ev.partner(i);
  if (p !== TL_NONE) {
    const other = { file: f, i: p };
    const launch = (ev.flags(i) & Flag.FLOW_START) !== 0;
    kv(dl, launch ? "Launches" : "Launched by", "partner", selLink(other, `${eventName(f, p)} (${dur(ev.dur(p))})`));
    if (!launch) kv(dl, "Launch → start", "latency", dur(ev.start(i) - ev.start(p)), "queueing delay from the API call to the device work");
  }
  body.append(dl);
}

view.onselect = (s) => renderDetails(s);

const tip = $("#tooltip");
view.onhover = (s, x, y) => {
  if (!s) {
    tip.hidden = true;
    return;
  }
  tip.textContent = `${eventName(s.file, s.i)} — ${dur(s.file.events.dur(s.i))}`;
  tip.hidden = false;
  const box = $("#timeline").getBoundingClientRect();
  tip.style.left = `${Math.min(x + 12, box.width - 260)}px`;
  tip.style.top = `${Math.min(y + 14, box.height - 30)}px`;
};

// ---- Search --------------------------------------------------------------------------------------------------------

const search = $<HTMLInputElement>("#search");
let searchTimer = 0;
let hits: Sel[] = [];
let hitAt = -1;
const MAX_LISTED = 200;

function runSearch(): void {
  const q = search.value.trim().toLowerCase();
  const box = $("#search-results");
  const ol = box.querySelector("ol")!;
  ol.textContent = "";
  hits = [];
  hitAt = -1;
  if (!q) {
    view.matches = null;
    box.hidden = true;
    $("#search-count").textContent = "";
    view.invalidate();
    return;
  }
  const masks = new Map<LoadedFile, Uint8Array>();
  let total = 0;
  for (const f of files) {
    const mask = new Uint8Array(f.names.length);
    let any = false;
    for (let n = 0; n < f.names.length; n++) {
      if (f.names[n].toLowerCase().includes(q)) {
        mask[n] = 1;
        any = true;
      }
    }
    masks.set(f, mask);
    if (!any) continue;
    const ev = f.events;
    for (let i = 0; i < ev.length; i++) {
      const n = ev.name(i);
      if (n !== TL_NONE && mask[n] === 1) {
        total++;
        if (hits.length < MAX_LISTED) hits.push({ file: f, i });
      }
    }
  }
  view.matches = masks;
  view.invalidate();
  $("#search-count").textContent = `${int(total)} match${total === 1 ? "" : "es"}`;
  document.body.dataset.searchMatches = String(total);
  box.hidden = false;
  for (const h of hits) {
    const li = document.createElement("li");
    const ev = h.file.events;
    li.append(selLink(h, `${eventName(h.file, h.i)} · ${h.file.rowLabels[ev.row(h.i)]} · ${dur(ev.dur(h.i))}`));
    ol.append(li);
  }
  if (total > hits.length) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = `… ${int(total - hits.length)} more (Enter steps through the first ${MAX_LISTED})`;
    ol.append(li);
  }
}

search.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = window.setTimeout(runSearch, 150);
});
search.addEventListener("keydown", (e) => {
  if (e.key !== "Enter") return;
  clearTimeout(searchTimer);
  if (!hits.length) runSearch();
  if (!hits.length) return;
  hitAt = (hitAt + (e.shiftKey ? hits.length - 1 : 1)) % hits.length;
  view.reveal(hits[hitAt]);
  view.select(hits[hitAt]);
});

// ---- Summary -------------------------------------------------------------------------------------------------------

function cell(tr: HTMLElement, text: string, cls = "", data?: Record<string, string>, title?: string): void {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  if (title) td.title = title;
  if (data) Object.assign(td.dataset, data);
  tr.append(td);
}

function table(heads: string[], numeric: boolean[]): [HTMLTableElement, HTMLElement] {
  const t = document.createElement("table");
  t.className = "stats";
  const tr = document.createElement("tr");
  heads.forEach((h, i) => {
    const th = document.createElement("th");
    th.textContent = h;
    if (numeric[i]) th.className = "num";
    tr.append(th);
  });
  const thead = document.createElement("thead");
  thead.append(tr);
  const tbody = document.createElement("tbody");
  t.append(thead, tbody);
  return [t, tbody];
}

function renderSummary(): void {
  const sel = $<HTMLSelectElement>("#summary-file");
  const f = files.find((x) => String(x.id) === sel.value) ?? files[files.length - 1];
  const body = $("#summary-body");
  const s = f ? stats.get(f.id) : undefined;
  if (!f || !s) return;
  body.textContent = "";
  body.classList.remove("muted");
  body.dataset.file = f.name;
  const facts = document.createElement("dl");
  facts.className = "kv";
  kv(facts, "Trace span", "span", dur(s.spanNs));
  facts.lastElementChild!.setAttribute("data-ns", String(s.spanNs));
  kv(facts, "Events", "events", int(f.meta.header.events));
  kv(facts, "Loaded in", "load", `${(f.loadMs / 1000).toFixed(2)} s (core memory ${bytes(f.coreBytes)})`);
  body.append(facts);

  let h = document.createElement("h3");
  h.textContent = "GPU busy (kernels, memcpy, memset)";
  body.append(h);
  const [dt, dtb] = table(["GPU", "busy", "kernels", "kernel time"], [false, false, true, true]);
  dt.id = "summary-devices";
  for (const d of s.devices) {
    const tr = document.createElement("tr");
    tr.dataset.device = String(d.id);
    cell(tr, String(d.id));
    const td = document.createElement("td");
    td.className = "busy";
    td.dataset.busyNs = String(d.busyNs);
    td.dataset.busyPercent = String(d.busyPercent);
    const bg = document.createElement("div");
    bg.className = "bar-bg";
    const fg = document.createElement("div");
    fg.className = "bar-fg";
    fg.style.width = `${Math.min(100, d.busyPercent).toFixed(1)}%`;
    bg.append(fg);
    const label = document.createElement("span");
    label.textContent = `${d.busyPercent.toFixed(1)}%`;
    td.append(bg, label);
    tr.append(td);
    cell(tr, int(d.kernels), "num", { count: String(d.kernels) });
    cell(tr, dur(d.kernelNs), "num", { ns: String(d.kernelNs) });
    dtb.append(tr);
  }
  body.append(dt);

  h = document.createElement("h3");
  h.textContent = "Top kernels by total time";
  body.append(h);
  const kernelNs = s.devices.reduce((a, d) => a + d.kernelNs, 0);
  const [kt, ktb] = table(["kernel", "calls", "total", "%"], [false, true, true, true]);
  kt.id = "summary-kernels";
  for (const k of byTotal(s, EventKind.KERNEL, 10)) {
    const tr = document.createElement("tr");
    tr.dataset.name = k.name;
    const td = document.createElement("td");
    td.className = "name";
    td.title = k.name;
    td.textContent = shortName(k.name);
    td.addEventListener("click", () => {
      search.value = k.name;
      runSearch();
    });
    tr.append(td);
    cell(tr, int(k.count), "num", { count: String(k.count) });
    cell(tr, dur(k.totalNs), "num", { ns: String(k.totalNs) }, `mean ${dur(k.meanNs)}, max ${dur(k.maxNs)}`);
    cell(tr, kernelNs > 0 ? `${((k.totalNs / kernelNs) * 100).toFixed(1)}` : "-", "num");
    ktb.append(tr);
  }
  body.append(kt);

  h = document.createElement("h3");
  h.textContent = "Memory copies";
  body.append(h);
  const [mt, mtb] = table(["direction", "count", "bytes", "time", "GB/s"], [false, true, true, true, true]);
  mt.id = "summary-memcpy";
  for (const c of s.copies) {
    const tr = document.createElement("tr");
    tr.dataset.direction = c.direction;
    cell(tr, c.direction);
    cell(tr, int(c.count), "num", { count: String(c.count) });
    cell(tr, bytes(c.bytes), "num", { bytes: String(c.bytes) });
    cell(tr, dur(c.totalNs), "num", { ns: String(c.totalNs) });
    cell(tr, c.bandwidthGBs.toFixed(2), "num");
    mtb.append(tr);
  }
  const memsets = s.devices.reduce((a, d) => a + d.memsets, 0);
  if (memsets) {
    const tr = document.createElement("tr");
    tr.dataset.direction = "memset";
    cell(tr, "memset");
    cell(tr, int(memsets), "num", { count: String(memsets) });
    const mb = s.devices.reduce((a, d) => a + d.memsetBytes, 0);
    cell(tr, bytes(mb), "num", { bytes: String(mb) });
    const mn = s.devices.reduce((a, d) => a + d.memsetNs, 0);
    cell(tr, dur(mn), "num", { ns: String(mn) });
    cell(tr, "", "num");
    mtb.append(tr);
  }
  if (!s.copies.length && !memsets) {
    const tr = document.createElement("tr");
    cell(tr, "none");
    mtb.append(tr);
  }
  body.append(mt);
}

$("#summary-file").addEventListener("change", renderSummary);

// ---- Downloads -----------------------------------------------------------------------------------------------------

function baseName(name: string): string {
  return name.replace(/\.gz$/i, "").replace(/\.rawtrace$/i, "");
}

async function download(format: "chrome" | "xspace"): Promise<void> {
  const id = Number($<HTMLSelectElement>("#export-file").value);
  const f = files.find((x) => x.id === id);
  if (!f) return;
  busy++;
  try {
    const label = format === "chrome" ? "Chrome JSON" : "XSpace";
    const blob = await api.exportFile(id, format, callbacks(`${f.name} → ${label}`, EXPORT_PASSES));
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `${baseName(f.name)}${format === "chrome" ? ".json.gz" : ".xplane.pb"}`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  } catch (e) {
    if (!isCancel(e)) showError(`${f.name}: ${(e as Error).message}`);
  } finally {
    busy--;
    progressDone();
  }
}

$("#dl-json").addEventListener("click", () => void download("chrome"));
$("#dl-xspace").addEventListener("click", () => void download("xspace"));

document.body.dataset.boot = "ok";
