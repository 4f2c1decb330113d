/**
 * The viewer page: open or drop .rawtrace files, convert them in a Web Worker (web/worker.ts, the same WebAssembly
 * core as the CLI), draw the timeline (web/view.ts), show details of the selection (web/details.ts), the aggregate
 * of a range selection and the training steps (web/range_panel.ts), search every event (web/search.ts), a summary
 * (web/summary.ts) and downloads; the view lives in the URL hash (web/hash.ts). Everything stays in the page: no
 * request leaves localhost.
 */
import * as Comlink from "comlink";
import { Kind, TimelineEvents } from "../src/core/timeline.js";
import type { TraceStats } from "../src/core/stats.js";
import type { JobCallbacks, WorkerApi } from "./worker.js";
import { counterValue, eventName, makeLoadedFile, rowWord, type LoadedFile } from "./model.js";
import { TimelineView, type Sel } from "./view.js";
import { TimelineKeys } from "./keys.js";
import { dur, int } from "./format.js";
import { $, linkButton } from "./dom.js";
import { renderDetails, type ArgsState } from "./details.js";
import { RangePanel, renderSteps } from "./range_panel.js";
import { firstMatches, nameTest, searchEvents, stepMatch, type SearchResult } from "./search.js";
import { renderSummary } from "./summary.js";
import { fileId, formatHash, hashFiles, parseHash, type HashState } from "./hash.js";
import { filesFromUrl } from "./url_files.js";
import { fileTag, shiftNote } from "./layout.js";
import { damageLines } from "../src/core/loss_lines.js";

let worker: Worker;
let api: Comlink.Remote<WorkerApi>;
function startWorker(): void {
  worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "rawtrace-core" });
  api = Comlink.wrap<WorkerApi>(worker);
}
startWorker();

/**
 * Replaces the worker once no job runs. A core instance's linear memory never shrinks and an idle worker's heap is
 * hardly ever collected, so the worker that converted a 1 GB dump would keep about a gigabyte after the load
 * (measured: the browser's memory did not drop in the 5 s after it); ending the worker gives it back at once.
 */
function recycleWorker(): void {
  if (busy > 0) return;
  api[Comlink.releaseProxy]();
  worker.terminate();
  startWorker();
}
/** The File of each loaded file (exports read it again, in whichever worker is current). */
const fileHandles = new Map<number, File>();
const view = new TimelineView($<HTMLCanvasElement>("#canvas"));
// `?align=absolute` in the page's address: every file on absolute time, a file of another run too (web/layout.ts).
view.align = new URLSearchParams(location.search).get("align") !== "absolute";
const keys = new TimelineKeys(view);
const files: LoadedFile[] = [];
const stats = new Map<number, TraceStats>();
let nextId = 1;
let busy = 0;

// ---- Progress, errors ----------------------------------------------------------------------------------------------

const LOAD_PASSES: Record<number, string> = {
  1: "indexing", 2: "building timeline", 3: "projecting NVTX ranges", 4: "laying out the timeline",
};
const EXPORT_PASSES: Record<number, string> = { 1: "indexing", 2: "writing", 3: "projecting NVTX ranges" };
/** Jobs numbered as their callbacks are made; the worker runs them one after another, in that order. */
let job = 0;
/** The newest job that reported progress: the one the worker runs (an older one's late message is dropped). */
let reporting = 0;
/** Jobs up to this one had ended when the page last went idle: their late progress is dropped. */
let ended = 0;

function progress(label: string, done: number, total: number): void {
  const p = $("#progress");
  p.hidden = false;
  // total 0: a step without a byte count (the core laying out the timeline): a full bar, no percentage.
  const frac = total > 0 ? Math.min(1, done / total) : 1;
  ($(".progress .fill") as HTMLElement).style.width = `${(frac * 100).toFixed(1)}%`;
  $(".progress .text").textContent = total > 0 ? `${label} ${(frac * 100).toFixed(0)}%` : `${label}…`;
}

function progressDone(): void {
  if (busy === 0) {
    ended = job;
    $("#progress").hidden = true;
  }
}

let errorTimer = 0;
/** Messages on screen, newest first: files opened together each keep theirs instead of replacing the last. */
let shown: string[] = [];
function showError(msg: string): void {
  const e = $("#error");
  shown = [msg, ...(e.hidden ? [] : shown)].slice(0, 6);
  e.textContent = shown.join("\n");
  // Lines as written (the damage's lines are indented under the one naming the file), wrapped where too long.
  e.style.whiteSpace = "pre-wrap";
  e.hidden = false;
  // A newer message gets its own 12 s: the timer of the one it replaced must not hide it early.
  clearTimeout(errorTimer);
  errorTimer = window.setTimeout(() => {
    e.hidden = true;
    shown = [];
  }, 12000);
}

function isCancel(e: unknown): boolean {
  return (e as Error)?.name === "CANCELLED";
}

/**
 * Callbacks for one worker job. Its progress is shown while it is the job running: a job queued behind it (a file
 * opened while another loads) reports nothing until it runs (before: its callbacks being the newest, the running
 * load's progress was dropped and the bar froze for the rest of that load); progress that arrives after the job ended
 * (another channel), or after a newer job reported, is dropped.
 */
function callbacks(label: string, passes: Record<number, string>, extra: Partial<JobCallbacks> = {}): JobCallbacks {
  const mine = ++job;
  return Comlink.proxy({
    progress(done: number, total: number, pass: number) {
      if (mine <= ended || mine < reporting || busy === 0) return;
      reporting = mine;
      progress(`${label}: ${passes[pass] ?? "pass " + pass}`, done, total);
    },
    ...extra,
  });
}

/** Cancels so far: a Cancel during files opened together stops the ones not opened yet too. */
let cancels = 0;
$("#cancel").addEventListener("click", () => {
  cancels++;
  void api.cancel();
});

// ---- Loading -------------------------------------------------------------------------------------------------------

/** Batches of files being opened together; the hash the page opened with waits for the end of them. */
let opening = 0;

/**
 * Opens the files `list` gives (a choice or a drop of several, the files a link names) one after another. The
 * hash the page opened with applies once all of them are in: it may point into any of them, whatever their order.
 */
async function openTogether(list: () => Promise<File[]>): Promise<void> {
  opening++;
  // Files on their way (downloading, loading): the hint says so instead of asking for files (web/style.css).
  document.body.dataset.opening = "1";
  try {
    const got = await list();
    // Counted from here: a Cancel during a link's downloads stops those, and the files fetched before it still open.
    const asOf = cancels;
    for (const f of got) {
      if (cancels !== asOf) break;
      await loadOne(f);
    }
  } finally {
    if (--opening === 0) delete document.body.dataset.opening;
  }
  if (!opening && pending && files.length) {
    applyPending();
    writeHash();
  }
}

function openFiles(list: File[]): Promise<void> {
  return openTogether(async () => list);
}

/**
 * How the worker keeps a file for its later passes: `?keep=packed`, `?keep=raw` or `?keep=mixed` in the page's address, else
 * chosen by the worker from the number of cores (web/worker.ts KeepMode).
 */
const keepMode = ((m) => (m === "packed" || m === "raw" || m === "mixed" ? m : "auto"))(new URLSearchParams(location.search).get("keep"));

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
    const asOf = cancels;
    const res = await api.load(id, file, cb, stepsPattern, keepMode);
    // Cancel pressed as the worker handed the file over: it is not opened.
    if (cancels !== asOf) throw Object.assign(new Error("cancelled"), { name: "CANCELLED" });
    fileHandles.set(id, file);
    const lf = makeLoadedFile(id, file.name, res.info, res.meta, events, res.ms, res.coreBytes);
    files.push(lf);
    view.setFiles(files);
    rangePanel.setFiles(files);
    renderSteps(files, pickStep);
    refreshFiles();
    document.body.dataset.state = "ready";
    document.body.dataset.loadMs = String(Math.round(res.ms));
    document.body.dataset.coreBytes = String(res.coreBytes);
    document.body.dataset.passMs = JSON.stringify(res.passMs);
    document.body.dataset.fileReads = String(res.fileReads);
    document.body.dataset.keptBytes = String(res.keptBytes);
    // In the CLI's words (src/core/loss_lines.ts, shared with it): how much was lost and where, each byte range
    // skipped, then each warning with the offset of its first case and what it means.
    const said = damageLines(file.name, res.info.warnings, res.info.loss, res.info.bytes, "");
    if (said.length) showError(said.join("\n"));
    // The summary (rawtrace stats) was aggregated by the core in the same pass.
    if (res.stats) {
      stats.set(id, res.stats);
      showSummary();
      document.body.dataset.summary = "ready";
    } else document.body.dataset.summary = "none";
    afterLoad();
  } catch (e) {
    if (!isCancel(e)) {
      // The core's errors already name the file (and the offset): prefix the name only where one does not.
      const msg = (e as Error).message;
      // A .gz file's core names the dump inside (the name without .gz): said with the file's own name, as the CLI.
      const inner = file.name.replace(/\.gz$/i, "");
      showError(msg.startsWith(`${file.name}:`) ? msg
        : inner !== file.name && msg.startsWith(`${inner}:`) ? `${file.name}:${msg.slice(inner.length + 1)}`
        : `${file.name}: ${msg}`);
    }
    if (!files.length) document.body.dataset.state = "empty";
    else document.body.dataset.state = "ready";
  } finally {
    busy--;
    progressDone();
    recycleWorker();
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

// ---- File lists, row list ------------------------------------------------------------------------------------------

/** Refreshes the file chips, the file selectors (showing the newest file) and the row list. */
function refreshFiles(): void {
  const chips = $("#file-list");
  chips.textContent = "";
  for (const f of files) {
    const c = document.createElement("span");
    c.className = "chip";
    c.textContent = `${fileTag(files, f)} · ${int(f.meta.header.events)} events`;
    c.title = c.textContent; // the whole name where a long one is cut short
    // A file of another run, moved to start with the first one: said on its chip (the time it was moved by).
    const note = shiftNote(files, view.placements, f);
    if (note) {
      c.textContent += " · aligned";
      c.title = `${note} (its time range overlaps no other file's); ?align=absolute keeps recorded times`;
      c.dataset.aligned = note;
    }
    chips.append(c);
  }
  for (const sel of [$<HTMLSelectElement>("#export-file"), $<HTMLSelectElement>("#summary-file")]) {
    sel.textContent = "";
    for (const f of files) sel.append(new Option(fileTag(files, f), String(f.id)));
    sel.value = String(files[files.length - 1].id);
    sel.hidden = files.length < 2;
  }
  for (const b of ["#search", "#search-regex", "#fit", "#dl-json", "#dl-xspace"]) ($(b) as HTMLInputElement).disabled = false;
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

// ---- Details, tooltip ----------------------------------------------------------------------------------------------

/** Shows and selects an event (links in the panels). */
function go(s: Sel): void {
  view.reveal(s);
  view.select(s);
}

/**
 * The selected event's Chrome JSON args, read from its file again (web/worker.ts details) in a worker of its own:
 * a load or download in the main worker does not hold it up, and the next selection ends it at once. `args` is what
 * the panel shows for `sel` so far.
 */
let argsWorker: Worker | null = null;
let argsOf: { sel: Sel; args: ArgsState } | null = null;

function sameSel(a: Sel | null, b: Sel | null): boolean {
  return !!a && !!b && a.file === b.file && a.i === b.i;
}

function renderSelected(s: Sel | null, args?: ArgsState): void {
  renderDetails($("#details-body"), s, {
    origin: view.traceOrigin, manyFiles: files.length > 1, go, pickStep, aligned: (f) => shiftNote(files, view.placements, f),
    fileTag: (f) => fileTag(files, f),
  }, args);
}

view.onselect = (s) => {
  // The same event again (a file joined: the panel is drawn again): its args as they are, not read once more.
  if (s && argsOf && sameSel(argsOf.sel, s)) {
    renderSelected(s, argsOf.args);
    return;
  }
  argsWorker?.terminate();
  argsWorker = null;
  argsOf = null;
  const file = s && fileHandles.get(s.file.id);
  if (!s || !file) {
    delete document.body.dataset.args;
    renderSelected(s);
    return;
  }
  if (argsMode === "ask" || (argsMode === "auto" && file.size > ARGS_AUTO_BYTES)) {
    const args: ArgsState = { ask: () => readArgs(s, file), bytes: file.size };
    argsOf = { sel: s, args };
    document.body.dataset.args = "ask";
    renderSelected(s, args);
    return;
  }
  readArgs(s, file);
};

/**
 * Dumps up to this size (bytes) have the selected event's args read at once (the samples: a few ms; a 42 MiB dump
 * 82 ms in Node); a larger one waits for the panel's button: one more pass over a 1.1 GB dump took 2.8 s and a core
 * of 512 MiB in Node (the bench's 1.4e7 records), on top of the page's own memory.
 */
const ARGS_AUTO_BYTES = 64 << 20;
/** `?args=ask` asks for every file, `?args=read` reads at once for every file; by default ({@link ARGS_AUTO_BYTES}). */
const argsMode = ((m) => (m === "ask" || m === "read" ? m : "auto"))(new URLSearchParams(location.search).get("args"));

/** Reads the Chrome JSON args of `s` from `file` in a worker of its own (the next selection ends it). */
function readArgs(s: Sel, file: File): void {
  argsOf = { sel: s, args: "loading" };
  document.body.dataset.args = "loading";
  renderSelected(s, "loading");
  const w = new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "rawtrace-details" });
  argsWorker = w;
  const ev = s.file.events;
  const row = ev.row(s.i);
  const target = {
    start: ev.start(s.i), kind: ev.kind(s.i), rowClass: rowWord(s.file, row, 0), a: rowWord(s.file, row, 1), b: rowWord(s.file, row, 2),
    index: s.i,
  };
  const remote = Comlink.wrap<WorkerApi>(w);
  remote.details(file, [target], stepsPattern, keepMode)
    .then((m): ArgsState => m.get(s.i) ?? { error: "the event is not in the file read again" })
    .catch((e: unknown): ArgsState => ({ error: (e as Error).message }))
    .then((args) => {
      if (argsWorker !== w) return; // another selection since
      remote[Comlink.releaseProxy]();
      w.terminate();
      argsWorker = null;
      argsOf = { sel: s, args };
      document.body.dataset.args = typeof args === "object" && "error" in args ? "error" : "ready";
      renderSelected(view.selected, sameSel(view.selected, s) ? args : undefined);
    });
}

const tip = $("#tooltip");
view.onhover = (s, x, y) => {
  if (!s) {
    tip.hidden = true;
    return;
  }
  tip.textContent = s.file.events.kind(s.i) === Kind.COUNTER
    ? `${eventName(s.file, s.i)} = ${int(counterValue(s.file, s.i))}`
    : `${eventName(s.file, s.i)} — ${dur(s.file.events.dur(s.i))}`;
  tip.hidden = false;
  // Kept inside the timeline: flipped to the other side of the pointer where it would cross an edge.
  const box = $("#timeline").getBoundingClientRect();
  const w = tip.offsetWidth;
  const h = tip.offsetHeight;
  let left = x + 12;
  if (left + w > box.width - 4) left = Math.max(4, x - 12 - w);
  let top = y + 14;
  if (top + h > box.height - 4) top = Math.max(4, y - 10 - h);
  tip.style.left = `${left}px`;
  tip.style.top = `${top}px`;
};

// ---- Keys: the timeline's commands work wherever the focus is, except in text fields -----------------------------

function typing(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  if (!el || !el.tagName) return false;
  if (el.tagName === "INPUT") return !/^(file|checkbox|radio|button|submit|reset|range|color)$/.test((el as HTMLInputElement).type);
  return el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable;
}

window.addEventListener("keydown", (e) => {
  if (!files.length || typing(e.target)) return;
  if (e.key === "/" ) {
    // "/" jumps to the search box, as in many viewers.
    e.preventDefault();
    search.focus();
    return;
  }
  tip.hidden = true;
  keys.handle(e);
});

// ---- Range selection, steps ----------------------------------------------------------------------------------------

const rangePanel = new RangePanel();
view.onrange = (r) => {
  rangePanel.origin = view.traceOrigin;
  rangePanel.show(r);
};

/** Selects a step: its span becomes the range (all tracks) and the step range the selected event. */
function pickStep(s: Sel): void {
  const a = s.file.offset + s.file.events.start(s.i);
  const b = a + s.file.events.dur(s.i);
  view.select(s);
  view.setRange({ t0: a, t1: b, rows: null });
  const pad = (b - a) * 0.02;
  view.setWindow(a - pad, b + pad);
}

// ---- Search --------------------------------------------------------------------------------------------------------

const search = $<HTMLInputElement>("#search");
const regexBox = $<HTMLInputElement>("#search-regex");
let searchTimer = 0;
let result: SearchResult | null = null;
/** Query and mode `result` answers. */
let resultFor = "";
/** The box holds a bad expression (named in the count; `result` is still the last good search's). */
let searchBad = false;
const MAX_LISTED = 200;

function runSearch(): void {
  const q = search.value.trim();
  const box = $("#search-results");
  const ol = box.querySelector("ol")!;
  // A bad expression is named and changes nothing else: the last search's list and highlights stay as they were.
  let test: ((name: string) => boolean) | null = null;
  if (q) {
    try {
      test = nameTest(q, regexBox.checked);
    } catch (e) {
      search.classList.add("bad");
      searchBad = true;
      $("#search-count").textContent = `bad expression: ${(e as Error).message}`;
      return;
    }
  }
  searchBad = false;
  ol.textContent = "";
  result = null;
  search.classList.remove("bad");
  if (!test) {
    view.matches = null;
    box.hidden = true;
    $("#search-count").textContent = "";
    delete document.body.dataset.searchMatches;
    view.invalidate();
    writeHash();
    return;
  }
  const t0 = performance.now();
  result = searchEvents(files, test);
  document.body.dataset.searchMs = (performance.now() - t0).toFixed(2);
  resultFor = `${regexBox.checked}:${q}`;
  view.matches = result.masks;
  view.invalidate();
  const total = result.total;
  $("#search-count").textContent = `${int(total)} match${total === 1 ? "" : "es"}`;
  document.body.dataset.searchMatches = String(total);
  box.hidden = false;
  // The first matches in time order: the order Enter steps through them and the "k of N" counts in.
  const first = firstMatches(files, result, MAX_LISTED);
  for (const h of first) {
    const li = document.createElement("li");
    const ev = h.file.events;
    li.append(linkButton(`${eventName(h.file, h.i)} · ${h.file.rowLabels[ev.row(h.i)]} · ${dur(ev.dur(h.i))}`, () => go(h)));
    ol.append(li);
  }
  const listed = first.length;
  if (total > listed) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = `… ${int(total - listed)} more (Enter / Shift+Enter step through all of them in time order)`;
    ol.append(li);
  }
  writeHash();
}

search.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = window.setTimeout(runSearch, 150);
});
regexBox.addEventListener("change", runSearch);
search.addEventListener("keydown", (e) => {
  if (e.key === "Escape") {
    // Leaves the box with the query kept (a search field's default would clear it), so "/" + Enter goes on.
    e.preventDefault();
    search.blur();
    return;
  }
  if (e.key !== "Enter") return;
  e.preventDefault();
  clearTimeout(searchTimer);
  // The query may have changed since the last (debounced) search: Enter answers what the box says now.
  if (!result || searchBad || resultFor !== `${regexBox.checked}:${search.value.trim()}`) runSearch();
  if (!result || searchBad) return; // a bad expression: nothing to step through
  const cur = view.selected && result.masks.get(view.selected.file)?.[view.selected.file.events.name(view.selected.i)] === 1 ? view.selected : null;
  const t0 = performance.now();
  const next = stepMatch(files, result, cur, e.shiftKey ? -1 : 1);
  // Exposed for bench/web_load.ts.
  document.body.dataset.stepMs = (performance.now() - t0).toFixed(2);
  if (!next) return;
  $("#search-count").textContent = `${int(next.rank)} of ${int(result.total)} match${result.total === 1 ? "" : "es"}`;
  document.body.dataset.searchRank = String(next.rank);
  go(next.hit);
});

// ---- Summary -------------------------------------------------------------------------------------------------------

function showSummary(): void {
  const sel = $<HTMLSelectElement>("#summary-file");
  const f = files.find((x) => String(x.id) === sel.value) ?? files[files.length - 1];
  const s = f ? stats.get(f.id) : undefined;
  if (!f || !s) return;
  renderSummary(f, s, (name) => {
    search.value = name;
    regexBox.checked = false;
    runSearch();
  });
}

$("#summary-file").addEventListener("change", showSummary);

// ---- URL hash: file, window, range, selection, measure, marks, search ------------------------------------------------

/** The hash read when the page opened, applied once the file it names is loaded. */
let pending: HashState | null = parseHash(location.hash);
let hashTimer = 0;
/**
 * Step pattern from the hash (`steps=REGEX`), passed to the core. One that is not a regular expression is said once
 * and left out (the default, ProfilerStep#N, applies), instead of failing every file opened.
 */
const stepsPattern: string | undefined = ((steps) => {
  if (steps === undefined) return undefined;
  try {
    new RegExp(steps, "u");
    return steps;
  } catch (e) {
    showError(`#steps=${steps} in the address is not a regular expression (${(e as Error).message}): training steps are the default ProfilerStep#N ranges`);
    return undefined;
  }
})(pending?.steps);

function rel(t: number): number {
  return t - view.traceOrigin;
}

/** Writes the view into the hash (debounced; replaceState: no history entry per pan). */
function writeHash(): void {
  if (!files.length || pending) return;
  clearTimeout(hashTimer);
  // For tests and tools: a hash write is due (the address does not show the newest view yet).
  document.body.dataset.hashPending = "1";
  hashTimer = window.setTimeout(() => {
    // Every file by name and identity, in the order opened: the references below number them so (web/hash.ts).
    const st: HashState = { files: files.map((f) => f.name), ids: files.map((f) => fileId(f.info)), view: view.window };
    const r = view.range;
    if (r) {
      st.range = [rel(r.t0), rel(r.t1)];
      if (r.rows) st.rows = r.rows.map((x) => ({ file: files.indexOf(x.file), index: x.row }));
    }
    if (view.selected) st.ev = { file: files.indexOf(view.selected.file), index: view.selected.i };
    if (view.measure) st.measure = [rel(view.measure.a), rel(view.measure.b)];
    if (view.marks.length) st.marks = view.marks.map(rel);
    if (search.value.trim()) st.q = search.value.trim();
    if (regexBox.checked) st.regex = true;
    if (stepsPattern) st.steps = stepsPattern;
    const h = formatHash(st);
    if (h !== location.hash) history.replaceState(null, "", h || location.pathname);
    document.body.dataset.hash = h;
    delete document.body.dataset.hashPending;
  }, 120);
}

view.onchange = writeHash;

/**
 * Applies a hash state to the loaded files (after the files it names are in). `replace`: the hash is the whole view
 * (one pasted or followed later): what it leaves out — search, marks, range, measure, selection, window — is
 * cleared (the window fitted), not kept from the view before. The hash the page opened with does not replace:
 * marks or a range made while its files were loading stay unless it has its own.
 */
function applyHash(st: HashState, replace = false): void {
  const o = view.traceOrigin;
  // The hash's file numbers → the open files of the same name and identity (else copy), in whatever order opened.
  const at = hashFiles(st, files, (f) => fileId(f.info));
  if (st.q || (replace && (search.value.trim() || regexBox.checked))) {
    search.value = st.q ?? "";
    regexBox.checked = !!st.regex;
    runSearch();
  }
  if (st.marks || replace) view.setMarks((st.marks ?? []).map((t) => t + o));
  if (st.range) {
    const rows = st.rows?.map((x) => ({ file: at[x.file], row: x.index }))
      .filter((x): x is { file: LoadedFile; row: number } => x.file !== undefined && x.row < x.file.meta.header.rows);
    view.setRange({ t0: st.range[0] + o, t1: st.range[1] + o, rows: rows?.length ? rows : null });
  } else if (replace && view.range) view.setRange(null);
  if (st.measure) view.setMeasure({ a: st.measure[0] + o, b: st.measure[1] + o, y: 12 });
  else if (replace && view.measure) view.setMeasure(null);
  const ev = st.ev && at[st.ev.file];
  if (ev && st.ev!.index < ev.events.length) view.select({ file: ev, i: st.ev!.index });
  else if (replace && view.selected) view.select(null);
  if (st.view) view.setWindow(st.view[0] + o, st.view[1] + o);
  else if (replace) view.fit();
}

/**
 * Applies the hash the page opened with, once: when a file it names is open (by name: a view of other files is
 * dropped, and the hash then follows the files opened). References into files that are not open are left out.
 */
function applyPending(): void {
  const st = pending;
  if (!st) return;
  pending = null;
  if (!st.files || st.files.some((n) => files.some((f) => f.name === n))) {
    placeAsLinked(st);
    applyHash(st);
  }
}

/**
 * Puts the open files in the order the link lists them and places them again so, as where the link was made:
 * another run is aligned to the start of the first file placed (web/layout.ts), the link's times count from the
 * start of the trace so aligned, and the hash written from now on lists the files in that order (a reload of it
 * places them the same way). Files the link does not name follow, in the order opened. Nothing moves when they
 * were opened in the link's order.
 */
function placeAsLinked(st: HashState): void {
  const at = hashFiles(st, files, (f) => fileId(f.info));
  const order = [...new Set(at.filter((f): f is LoadedFile => f !== undefined))];
  for (const f of files) if (!order.includes(f)) order.push(f);
  if (order.every((f, i) => f === files[i])) return;
  files.splice(0, files.length, ...order);
  view.placeAgain();
  rangePanel.setFiles(files);
  rangePanel.origin = view.traceOrigin;
  renderSteps(files, pickStep);
  refreshFiles();
}

/**
 * Called after each load: runs the search and the range again over every file (the pending hash is applied by
 * openTogether, after the files opened together).
 */
function afterLoad(): void {
  // A file that joins answers the search and the range already on screen: both are computed again over every file;
  // the trace start may be earlier now (times in the panels count from it), and the details name the file.
  if (search.value.trim()) runSearch();
  rangePanel.origin = view.traceOrigin;
  if (view.range) rangePanel.show(view.range);
  if (view.selected) view.onselect(view.selected);
  writeHash();
}

window.addEventListener("hashchange", () => {
  const st = parseHash(location.hash);
  // A new hash is the whole view: it replaces the one on screen (what it leaves out is cleared).
  if (files.length && formatHash(st) !== document.body.dataset.hash) applyHash(st, true);
});

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
    // The page's step pattern (#steps=) applies as `convert --steps` does: the download holds the steps listed.
    const blob = await api.exportFile(fileHandles.get(id)!, format, callbacks(`${f.name} → ${label}`, EXPORT_PASSES), stepsPattern);
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
    recycleWorker();
  }
}

$("#dl-json").addEventListener("click", () => void download("chrome"));
$("#dl-xspace").addEventListener("click", () => void download("xspace"));

// ---- Files the URL names: ?file=/files/<i>/<name> (`rawtrace view FILE…`), ?open=PATH (a shared link) -----------

document.body.dataset.boot = "ok";
// Opened together: the saved view (window, selection, search) applies once every file of the link is there.
// Downloads show their progress and stop at Cancel (before: nothing on screen until every file had arrived).
const fetching = new AbortController();
$("#cancel").addEventListener("click", () => fetching.abort());
void openTogether(async () => {
  try {
    return await filesFromUrl(location.search, location.href, showError, (name, done, total) => progress(`${name}: fetching`, done, total), fetching.signal);
  } finally {
    progressDone();
  }
});
