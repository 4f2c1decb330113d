/**
 * The summary panel: `rawtrace stats` of a loaded file (src/core/stats.ts, aggregated by the core in the same pass
 * as the timeline): trace span, GPU busy % per device, top kernels by total time, memory copies per direction.
 */
import { EventKind, byTotal, type TraceStats } from "../src/core/stats.js";
import { $, appendHint, cell, kv, table } from "./dom.js";
import { bytes, dur, int } from "./format.js";
import { shortName, type LoadedFile } from "./model.js";
import { nameHints } from "../src/core/name_hints.js";

/** Renders the summary of `f`; a click on a kernel name calls `onName` (the page searches for it). */
export function renderSummary(f: LoadedFile, s: TraceStats, onName: (name: string) => void): void {
  const body = $("#summary-body");
  body.textContent = "";
  body.classList.remove("muted");
  body.dataset.file = f.name;
  const facts = document.createElement("dl");
  facts.className = "kv";
  kv(facts, "Trace span", "span", dur(s.spanNs));
  facts.lastElementChild!.setAttribute("data-ns", String(s.spanNs));
  kv(facts, "Timeline events", "events", int(f.meta.header.events),
    "events on the timeline, as in the Chrome JSON: NVTX ranges projected onto the GPU and counter samples included (rawtrace stats counts without them)");
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
  const top = byTotal(s, EventKind.KERNEL, 10);
  // Rows whose short names are the same (one elementwise kernel per PyTorch operator) each get a word of their own.
  const hints = nameHints(top.map((k) => k.name), shortName);
  for (const [i, k] of top.entries()) {
    const tr = document.createElement("tr");
    tr.dataset.name = k.name;
    const td = document.createElement("td");
    td.className = "name";
    td.title = k.name;
    td.textContent = shortName(k.name);
    appendHint(td, hints[i]);
    td.addEventListener("click", () => onName(k.name));
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
    // The core's row says whether its records had byte counts (bytes null: a Gaudi copy without `bytes_moved`).
    if (c.bytes !== null) {
      cell(tr, bytes(c.bytes), "num", { bytes: String(c.bytes) });
      cell(tr, dur(c.totalNs), "num", { ns: String(c.totalNs) });
      cell(tr, c.totalNs > 0 ? (c.bytes / c.totalNs).toFixed(2) : "-", "num");
    } else {
      cell(tr, "unknown", "num", undefined, "these copies' records carry no byte count");
      cell(tr, dur(c.totalNs), "num", { ns: String(c.totalNs) });
      cell(tr, "unknown", "num");
    }
    mtb.append(tr);
  }
  const memsets = s.devices.reduce((a, d) => a + d.memsets, 0);
  if (memsets) {
    const tr = document.createElement("tr");
    tr.dataset.direction = "memset";
    cell(tr, "memset");
    cell(tr, int(memsets), "num", { count: String(memsets) });
    const mb = s.devices.reduce((a, d) => a + (d.memsetBytes ?? 0), 0);
    const fillsKnown = s.devices.every((d) => d.memsetBytes !== null);
    if (fillsKnown) cell(tr, bytes(mb), "num", { bytes: String(mb) });
    else cell(tr, "unknown", "num", undefined, "this dump's fill records carry no byte count");
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


