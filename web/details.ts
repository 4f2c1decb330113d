/**
 * The details panel of the selected event: every field the timeline tables carry for its kind (grid, block,
 * registers, static and dynamic shared memory and theoretical occupancy of kernels; bytes, memory kinds, devices and
 * bandwidth of copies; context; cbid, external id and return value of API calls; the step number of a step range…),
 * where it ran (process/thread or device/stream), its correlation id, and links to the host call that launched it or
 * to every piece of device work a host call launched (same correlation id), each clickable; then every arg the
 * Chrome JSON writes for it, read from the dump on demand (src/core/details.ts: nothing of them is kept per event).
 * {@link eventFields} and {@link argFields} are what the panel shows, as data (test/web/chrome_parity.test.ts).
 */
import { Flag, Kind, RowClass, TL_NONE } from "../src/core/timeline.js";
import { bytes, dur, int, usExact } from "./format.js";
import { COPY_KINDS, copyRecordsComplete, counterValue, eventName, kindLabel, rowWord, type LoadedFile } from "./model.js";
import { kv, linkButton } from "./dom.js";
import { argText, type EventJson } from "../src/core/details.js";
import type { Sel } from "./view.js";

/** Occupancy word value for "unknown" (assembly/emit/timeline.ts OCC_NONE). */
const OCC_NONE = 0xffff;

/** CUPTI memory kinds (source and destination of a copy). */
const MEMORY_KINDS: Record<number, string> = {
  0: "unknown", 1: "pageable", 2: "pinned", 3: "device", 4: "array", 5: "managed", 6: "device static", 7: "managed static",
};

/** CUPTI synchronization types, as the Chrome JSON's `cuda_sync_kind` names them (decode/cupti_names.ts). */
const CUDA_SYNC_KINDS: Record<number, string> = {
  0: "Unknown Sync", 1: "Event Sync", 2: "Stream Wait Event", 3: "Stream Sync", 4: "Context Sync",
};

/** CUPTI's "no such id" (an unset event id, stream or context). */
const INVALID_U32 = 0xffffffff;

/** Copy directions (CUPTI memcpy kinds) whose source, and whose destination, is host memory. */
const HOST_SOURCE = new Set([1, 3, 9]);
const HOST_DESTINATION = new Set([2, 4, 9]);

/**
 * Memory kind `m` of a copy's side in a dump of `vendor`: CUPTI's names; rocprofiler-sdk's copy records say only
 * host or device (the decoder writes them as 1 and 3), not pageable or pinned.
 */
function memoryKind(m: number, vendor: string): string {
  if ((vendor === "rocm" || vendor === "rocm-roctracer") && (m === 1 || m === 3)) return m === 1 ? "host" : "device";
  return MEMORY_KINDS[m] ?? `kind ${m}`;
}

/** Device work a host call can launch. */
function isDeviceWork(k: number): boolean {
  return k === Kind.KERNEL || k === Kind.MEMCPY || k === Kind.MEMSET || k === Kind.GRAPH;
}

/**
 * Every piece of device work with correlation id `corr` in `f` (the events a launch started), in start order; a
 * scan of the device rows only (host rows are skipped by their row class), at most `max`.
 */
export function launchedBy(f: LoadedFile, corr: number, max = 1000): number[] {
  const ev = f.events;
  return byCorrelation(f, corr, [RowClass.GPU_STREAM], isDeviceWork, max).sort((a, b) => ev.start(a) - ev.start(b));
}

/**
 * The events with correlation id `corr` whose kind `keep` accepts, in row order, at most `max`: a scan of the rows
 * of the classes `rows` only (a row's events are contiguous in the table).
 */
function byCorrelation(f: LoadedFile, corr: number, rows: readonly number[], keep: (kind: number) => boolean, max: number): number[] {
  const out: number[] = [];
  if (corr === 0) return out;
  const ev = f.events;
  for (let r = 0; r < f.meta.header.rows && out.length < max; r++) {
    if (!rows.includes(rowWord(f, r, 0))) continue;
    const first = rowWord(f, r, 6);
    const n = rowWord(f, r, 7);
    for (let i = first; i < first + n && out.length < max; i++) {
      if (ev.correlation(i) === corr && keep(ev.kind(i))) out.push(i);
    }
  }
  return out;
}

/**
 * The CUDA event recording of call `corr` (what a sync waits on): its record on a stream row, else the host call
 * with that correlation id; TL_NONE when neither is in the file.
 */
function recordOf(f: LoadedFile, corr: number): number {
  const api = (k: number) => k === Kind.API_RUNTIME || k === Kind.API_DRIVER;
  const hits = byCorrelation(f, corr, [RowClass.GPU_STREAM, RowClass.HOST_API], (k) => k === Kind.EVENT_RECORD || api(k), Infinity);
  return hits.find((i) => f.events.kind(i) === Kind.EVENT_RECORD) ?? hits.find((i) => api(f.events.kind(i))) ?? TL_NONE;
}

/** Context the panel needs from the page. */
export interface DetailsHost {
  /** Trace start on the view axis (start times are shown relative to it). */
  origin: number;
  /** Several files loaded (the file is named then). */
  manyFiles: boolean;
  /** The file's name as the group headers show it (`name (2)` for the same file opened twice; web/layout.ts). */
  fileTag?(f: LoadedFile): string;
  /** Shows and selects another event. */
  go(s: Sel): void;
  /** Makes a step range's span the range selection. */
  pickStep(s: Sel): void;
  /** How a file's times were moved to align it with the first file's (web/layout.ts shiftNote), or null. */
  aligned?(f: LoadedFile): string | null;
}

/**
 * One line of the panel: label, `data-field` (what tests read) and text; `title` its tooltip. A link selects `go`
 * (or makes the span of step range `step` the range); `list`, a list of such links (what a launch launched).
 */
export interface Field {
  label: string;
  field: string;
  text: string;
  title?: string;
  go?: Sel;
  step?: Sel;
  list?: Array<{ text: string; go: Sel }>;
}

/**
 * The Chrome JSON args of the selected event, as the panel gets them (web/worker.ts details, src/core/details.ts):
 * the event's JSON, "loading" while the dump is read again, or the message of a failure.
 */
/**
 * The Chrome JSON args of the selected event so far: read ({@link EventJson}), being read, failed, or (a file over
 * web/main.ts ARGS_AUTO_BYTES) waiting for the user to ask, with the callback that starts the read and the file's
 * size in bytes.
 */
export type ArgsState = EventJson | "loading" | { error: string } | { ask: () => void; bytes: number };

/**
 * The fields of event `s` the timeline tables give at once (no read of the dump): where it ran, when, and per kind
 * every field its record carries, with what the viewer derives from them (threads, occupancy, bandwidth, the host
 * call that launched it…). Its Chrome JSON args come on demand ({@link argFields}).
 */
export function eventFields(s: Sel, host: Omit<DetailsHost, "go" | "pickStep">): Field[] {
  const out: Field[] = [];
  const kv = (label: string, field: string, text: string, title?: string) => out.push({ label, field, text, title });
  const f = s.file;
  const ev = f.events;
  const i = s.i;
  const k = ev.kind(i);
  const row = ev.row(i);
  const cls = rowWord(f, row, 0);
  kv("Kind", "kind", kindLabel(k, f.info.vendor));
  kv("Row", "row", `${f.rowGroups[row]} · ${f.rowLabels[row]}`);
  if (cls >= RowClass.GPU_ANNOTATIONS) {
    kv("Device", "device", String(rowWord(f, row, 1)));
    if (cls !== RowClass.GPU_CONTEXT_SYNC && cls !== RowClass.GPU_OVERHEAD && cls !== RowClass.GPU_COUNTER) {
      kv("Stream", "stream", String(rowWord(f, row, 2)));
    }
  } else {
    kv("Process", "pid", String(rowWord(f, row, 1)));
    kv("Thread", "tid", String(rowWord(f, row, 2)));
  }
  if (host.manyFiles) kv("File", "file", host.fileTag?.(f) ?? f.name);
  const moved = host.aligned?.(f) ?? null;
  kv("Start", "start", `${usExact(f.offset + ev.start(i) - host.origin)} µs`,
    moved ? "since the start of the trace, this file aligned with the first" : "since the start of the trace");
  if (moved) kv("Aligned", "aligned", moved);
  const exact = `${usExact(ev.dur(i))} µs`;
  if (ev.flags(i) & Flag.INCOMPLETE) {
    kv("Duration", "duration", "unknown (incomplete)", "the vendor record has no end: still running at the final flush");
  } else if (k !== Kind.COUNTER) kv("Duration", "duration", dur(ev.dur(i)) === exact ? exact : `${exact} (${dur(ev.dur(i))})`);
  const x0 = ev.word(i, 9);
  const x1 = ev.word(i, 10);
  const x2 = ev.word(i, 11);
  const x3 = ev.word(i, 12);
  const x4 = ev.word(i, 13);
  // 0 is what records leave that carry no context (ROCm; Gaudi entries without one). An XPU op's record holds the
  // dump's small number for its Level Zero context, not the handle the Chrome JSON writes: its args show that.
  if ((k === Kind.KERNEL || k === Kind.MEMCPY || k === Kind.MEMSET || k === Kind.SYNC || k === Kind.GRAPH) && x3 !== 0 &&
      f.info.vendor !== "xpu") {
    kv("Context", "context", String(x3));
  }
  if (k === Kind.KERNEL) {
    const grid = [x0, x1 & 0xffff, x1 >>> 16];
    const block = [x2 & 0x7ff, (x2 >>> 11) & 0x7ff, (x2 >>> 22) & 0x3ff];
    const threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2];
    const st = ev.word(i, 14);
    const dy = ev.word(i, 15);
    if (threads === 0) {
      // No launch shape in this vendor's kernel records (Gaudi engines, PTI without it): said, not shown as zeros.
      kv("Launch shape", "grid", "not in this dump's kernel records (grid, block, registers, shared memory)");
    } else {
      kv("Grid", "grid", `[${grid.join(", ")}]`);
      kv("Block", "block", `[${block.join(", ")}]`);
      kv("Threads", "threads", int(threads), "grid × block");
      kv("Registers / thread", "registers", String(x4 & 0xffff));
      kv("Shared memory", "shared", `${bytes(st + dy)} (static ${int(st)} B, dynamic ${int(dy)} B)`);
      kv("Static shared", "shared-static", String(st));
      kv("Dynamic shared", "shared-dynamic", String(dy));
    }
    const occ = x4 >>> 16;
    kv("Theoretical occupancy", "occupancy", occ === OCC_NONE ? "unknown (NVIDIA GPUs only, from the device table)" : `${(occ / 100).toFixed(2)} %`,
      "resident warps per SM over the maximum, from registers, shared memory and block size (as XProf)");
  } else if (k === Kind.MEMCPY || k === Kind.MEMSET) {
    const n = x0 + x1 * 2 ** 32;
    // A vendor whose copy records leave these fields out (Gaudi): a 0 there is "not in the record", not a value.
    const complete = copyRecordsComplete(f.info.vendor);
    const known = complete || n > 0;
    const missing = "unknown (not in this dump's copy records)";
    kv("Bytes", "bytes", known ? `${int(n)} (${bytes(n)})` : missing);
    if (k === Kind.MEMCPY) {
      const ck = x2 & 0xff;
      kv("Direction", "direction", COPY_KINDS[ck] ?? (ck === 0 ? "unknown" : `kind ${ck}`));
      kv("Source memory", "src-kind", memoryKind((x2 >>> 8) & 0xff, f.info.vendor));
      kv("Destination memory", "dst-kind", memoryKind((x2 >>> 16) & 0xff, f.info.vendor));
      // The host side of a copy has no device: "host", not the device id the record leaves there.
      const side = (d: number, host: boolean) => (host ? "host" : `device ${d}`);
      kv("Devices", "copy-devices", complete ? `${side(x4, HOST_SOURCE.has(ck))} → ${side(ev.word(i, 14), HOST_DESTINATION.has(ck))}` : missing,
        "source → destination");
      if (!known) kv("Bandwidth", "bandwidth", "unknown (no byte count)");
      else if (ev.dur(i) > 0) kv("Bandwidth", "bandwidth", `${(n / ev.dur(i)).toFixed(3)} GB/s`, "bytes / duration");
    } else kv("Value", "value", complete ? String(x2) : missing);
  } else if (k === Kind.API_RUNTIME || k === Kind.API_DRIVER) {
    kv("cbid", "cbid", String(x0));
    if (ev.flags(i) & Flag.EXTERNAL) kv("External id", "external", String(BigInt(x1) + (BigInt(x3) << 32n)));
    kv("Return value", "return", String(x2));
  } else if (k === Kind.RANGE || k === Kind.INSTANT) {
    if (x1 !== TL_NONE) kv("Domain", "domain", f.names[x1]);
    if (x0 !== 0) kv("Color", "color", `#${(x0 & 0xffffff).toString(16).padStart(6, "0")}`);
    if (ev.flags(i) & Flag.STEP) {
      kv("Training step", "step", String(x2));
      out.push({ label: "Step range", field: "step-range", text: "select the step's span", step: s });
    }
  } else if (k === Kind.GRAPH) {
    kv("Graph id", "graph", String(x0));
    if (x1 !== 0) kv("External id", "external", String(x1));
  } else if (k === Kind.SYNC) {
    const cuda = f.info.vendor === "cuda";
    kv("Sync type", "sync-type", cuda ? `${CUDA_SYNC_KINDS[x0] ?? "Unknown Sync"} (${x0})` : String(x0));
    // Only an event sync or a stream wait names an event; the others leave CUPTI's invalid id there.
    if (x1 !== 0 && x1 !== INVALID_U32 && (!cuda || x0 === 1 || x0 === 2)) kv("Event id", "event-id", String(x1));
    kv("Stream", "sync-stream", x2 === TL_NONE ? "whole context" : String(x2));
    if (ev.word(i, 15) === 1) {
      // An event sync or stream wait: the recording of the event it waits on (Kineto's wait_on_stream and
      // wait_on_cuda_event_record_corr_id), linked to that record on its stream, else to the call that made it.
      const what = `event recorded on stream ${ev.word(i, 14)} by call ${x4}`;
      const j = recordOf(f, x4);
      out.push({
        label: "Waits on", field: "wait-source", text: j === TL_NONE ? what : `${what} (${eventName(f, j)})`,
        title: "the last recording of this CUDA event before the call", go: j === TL_NONE ? undefined : { file: f, i: j },
      });
    }
  } else if (k === Kind.EVENT_RECORD) {
    kv("Event id", "event-id", String(x0));
  } else if (k === Kind.COUNTER) {
    kv("Value", "value", int(counterValue(f, i)), "the counter's value at this sample (it holds until the next)");
  } else if (k === Kind.GPU_RANGE) {
    kv("Projected from", "projected", `NVTX range on device ${x0}, stream ${x1}`);
  }
  const corr = ev.correlation(i);
  if (corr !== 0) kv("Correlation", "correlation", String(corr));
  const p = ev.partner(i);
  const launch = (ev.flags(i) & Flag.FLOW_START) !== 0;
  if (launch) {
    // A launch: every piece of device work with its correlation id (a graph launch starts many).
    const work = launchedBy(f, corr);
    if (!work.length && p !== TL_NONE) work.push(p);
    const list = work.map((j) => ({ text: `${eventName(f, j)} (${dur(ev.dur(j))})`, go: { file: f, i: j } }));
    if (work.length) out.push({ label: work.length === 1 ? "Launches" : `Launches (${work.length})`, field: "partner", text: "", list });
  } else if (p !== TL_NONE) {
    out.push({ label: "Launched by", field: "partner", text: `${eventName(f, p)} (${dur(ev.dur(p))})`, go: { file: f, i: p } });
    kv("Launch → start", "latency", dur(ev.start(i) - ev.start(p)), "queueing delay from the API call to the device work");
  }
  return out;
}

/**
 * The event's Chrome JSON args, every one, in the order the Chrome JSON writes them: the key as its label and
 * `arg:<key>` as its field, the value as written (a string without its quotes). An event with none (an overhead, a
 * range without domain or color, a projected range) says so.
 */
export function argFields(j: EventJson): Field[] {
  if (!j.args.length) return [{ label: "Chrome JSON args", field: "args", text: "none" }];
  return j.args.map(([key, v]) => ({ label: key, field: `arg:${key}`, text: argText(v) }));
}

/** Renders a field list into `dl`. */
function renderFields(dl: HTMLElement, fields: Field[], host: DetailsHost): void {
  for (const x of fields) {
    if (x.list) {
      const list = document.createElement("ol");
      list.className = "launched";
      for (const l of x.list) {
        const li = document.createElement("li");
        li.append(linkButton(l.text, () => host.go(l.go)));
        list.append(li);
      }
      kv(dl, x.label, x.field, list, x.title);
    } else if (x.go) {
      const to = x.go;
      kv(dl, x.label, x.field, linkButton(x.text, () => host.go(to)), x.title);
    } else if (x.step) {
      const step = x.step;
      kv(dl, x.label, x.field, linkButton(x.text, () => host.pickStep(step)), x.title);
    } else kv(dl, x.label, x.field, x.text, x.title);
  }
}

/**
 * Renders the details of `s` (or the empty hint) into `body`: its fields ({@link eventFields}), then its Chrome
 * JSON args (`args`: {@link argFields} once read from the dump, or what keeps them).
 */
export function renderDetails(body: HTMLElement, s: Sel | null, host: DetailsHost, args?: ArgsState): void {
  body.textContent = "";
  body.classList.toggle("muted", !s);
  if (!s) {
    body.textContent = "Click a slice to see its details.";
    return;
  }
  const name = document.createElement("div");
  name.className = "ename";
  name.dataset.field = "name";
  name.textContent = eventName(s.file, s.i);
  body.append(name);
  const dl = document.createElement("dl");
  dl.className = "kv";
  renderFields(dl, eventFields(s, host), host);
  body.append(dl);
  if (args === undefined) return;
  const h = document.createElement("div");
  h.className = "args-head";
  h.textContent = "Chrome JSON args";
  h.title = "every arg the Chrome JSON (rawtrace convert) writes for this event, as it writes them: read from the dump again";
  body.append(h);
  const al = document.createElement("dl");
  al.className = "kv args";
  if (args === "loading") kv(al, "Chrome JSON args", "args", "reading the dump…");
  else if ("error" in args) kv(al, "Chrome JSON args", "args", `not read: ${args.error}`);
  else if ("ask" in args) {
    // A large dump is not read again on every click: one more pass over it costs seconds and a core's memory.
    const b = document.createElement("button");
    b.type = "button";
    b.className = "args-read";
    b.textContent = `read them (the ${bytes(args.bytes)} dump again)`;
    b.addEventListener("click", args.ask);
    kv(al, "Chrome JSON args", "args", b);
  }
  else renderFields(al, argFields(args), host);
  body.append(al);
}
