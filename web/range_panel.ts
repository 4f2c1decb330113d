/**
 * The range panel: the aggregate of the selected time range (web/aggregate.ts) per name — count, total, average,
 * min, max, % of the range — over all tracks, the tracks a shift-drag covered, or one of them; sortable by any
 * column (click its heading; again to reverse), copyable as TSV. And the steps panel: the training steps the core
 * recognised (NVTX ranges named like `ProfilerStep#N`, or the `steps` pattern), each a button that selects its span.
 */
import { Flag, RowClass } from "../src/core/timeline.js";
import { AGG_COLUMNS, aggregate, sortLines, toTsv, type AggColumn, type AggLine, type Aggregate, type RowRef } from "./aggregate.js";
import { $, appendHint, cell, linkButton, table } from "./dom.js";
import { dur, int } from "./format.js";
import { eventName, rowWord, shortName, type LoadedFile } from "./model.js";
import { nameHints } from "../src/core/name_hints.js";
import { fileTag } from "./layout.js";
import type { Range, Sel } from "./view.js";

/** Lines drawn in the table (all of them go to the TSV). */
const MAX_SHOWN = 300;

const HEADS: Record<AggColumn, string> = {
  name: "name", count: "count", total: "total", avg: "avg", min: "min", max: "max", percent: "% of range",
};

export class RangePanel {
  private files: LoadedFile[] = [];
  private range: Range | null = null;
  private agg: Aggregate | null = null;
  private sortCol: AggColumn = "total";
  private ascending = false;
  /** Axis origin, for the range's start. */
  origin = 0;

  constructor() {
    $("#range-track").addEventListener("change", () => this.compute());
    $("#range-copy").addEventListener("click", () => void this.copy());
  }

  setFiles(files: LoadedFile[]): void {
    this.files = files;
  }

  /** Shows the aggregate of `r` (null hides the panel). */
  show(r: Range | null): void {
    this.range = r;
    const sec = $("#range");
    sec.hidden = !r;
    if (!r) {
      this.agg = null;
      delete document.body.dataset.rangeEvents;
      return;
    }
    const sel = $<HTMLSelectElement>("#range-track");
    const before = sel.value;
    sel.textContent = "";
    sel.append(new Option(r.rows ? `selected tracks (${r.rows.length})` : "all tracks", "all"));
    const rows: RowRef[] = r.rows ?? this.files.flatMap((file) => Array.from({ length: file.meta.header.rows }, (_, row) => ({ file, row })));
    for (const x of rows) {
      const fi = this.files.indexOf(x.file);
      // The file as the group headers name it: the same file opened twice is `name (2)`.
      const label = `${this.files.length > 1 ? `${fileTag(this.files, x.file)} · ` : ""}${x.file.rowGroups[x.row]} · ${x.file.rowLabels[x.row]}`;
      sel.append(new Option(label, `${fi}:${x.row}`));
    }
    if ([...sel.options].some((o) => o.value === before)) sel.value = before;
    this.compute();
  }

  /** Recomputes the aggregate for the current range and track choice. */
  private compute(): void {
    const r = this.range;
    if (!r) return;
    const v = $<HTMLSelectElement>("#range-track").value;
    let rows: RowRef[] | null = r.rows;
    if (v && v !== "all") {
      const [fi, row] = v.split(":").map(Number);
      rows = [{ file: this.files[fi], row }];
    }
    const t = performance.now();
    this.agg = aggregate(this.files, r.t0, r.t1, rows);
    // Exposed for bench/web_load.ts.
    document.body.dataset.aggMs = (performance.now() - t).toFixed(2);
    document.body.dataset.rangeEvents = String(this.agg.events);
    $("#range-info").textContent =
      `${dur(r.t1 - r.t0)} from ${dur(r.t0 - this.origin)} · ${int(this.agg.events)} events · ${this.agg.lines.length} names`;
    $("#range-info").dataset.ns = String(Math.round(r.t1 - r.t0));
    this.render();
  }

  private render(): void {
    const agg = this.agg;
    if (!agg) return;
    const lines = sortLines(agg.lines, this.sortCol, this.ascending);
    const numeric = AGG_COLUMNS.map((c) => c !== "name");
    const [t, body] = table(AGG_COLUMNS.map((c) => HEADS[c]), numeric);
    t.id = "range-table";
    t.querySelectorAll("th").forEach((th, k) => {
      const col = AGG_COLUMNS[k];
      th.dataset.col = col;
      th.tabIndex = 0;
      th.classList.add("sortable");
      if (col === this.sortCol) th.dataset.sort = this.ascending ? "asc" : "desc";
      const go = () => {
        if (this.sortCol === col) this.ascending = !this.ascending;
        else {
          this.sortCol = col;
          this.ascending = col === "name";
        }
        this.render();
      };
      th.addEventListener("click", go);
      th.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          go();
        }
      });
    });
    const shown = lines.slice(0, MAX_SHOWN);
    const hints = nameHints(shown.map((x) => x.name), shortName); // names that read alike told apart (src/core/name_hints.ts)
    shown.forEach((x, i) => body.append(this.line(x, hints[i])));
    if (lines.length > MAX_SHOWN) {
      const tr = document.createElement("tr");
      cell(tr, `… ${lines.length - MAX_SHOWN} more names (all of them in the TSV)`, "muted");
      body.append(tr);
    }
    const box = $("#range-body");
    box.textContent = "";
    box.append(t);
  }

  private line(x: AggLine, hint: string | null): HTMLElement {
    const tr = document.createElement("tr");
    tr.dataset.name = x.name;
    appendHint(cell(tr, shortName(x.name), "name", undefined, x.name), hint);
    cell(tr, int(x.count), "num", { count: String(x.count) });
    cell(tr, dur(x.total), "num", { ns: String(x.total) });
    cell(tr, dur(x.avg), "num", { ns: String(x.avg) });
    cell(tr, dur(x.min), "num", { ns: String(x.min) });
    cell(tr, dur(x.max), "num", { ns: String(x.max) });
    cell(tr, x.percent.toFixed(2), "num", { percent: String(x.percent) });
    return tr;
  }

  /** The table (every line, in the shown order) as TSV. */
  tsv(): string {
    return this.agg ? toTsv(sortLines(this.agg.lines, this.sortCol, this.ascending)) : "";
  }

  private async copy(): Promise<void> {
    const text = this.tsv();
    const btn = $("#range-copy");
    try {
      await navigator.clipboard.writeText(text);
      btn.textContent = "Copied";
    } catch {
      // No clipboard permission (e.g. an insecure origin): select the text in a box to copy by hand.
      const ta = document.createElement("textarea");
      ta.value = text;
      ta.className = "tsv";
      ta.readOnly = true;
      $("#range-body").prepend(ta);
      ta.select();
      btn.textContent = "Select + copy";
    }
    setTimeout(() => (btn.textContent = "Copy TSV"), 1500);
  }
}

/** Step ranges of `f` (events flagged STEP on host NVTX rows), in start order. */
export function stepsOf(f: LoadedFile): number[] {
  const out: number[] = [];
  const ev = f.events;
  for (let r = 0; r < f.meta.header.rows; r++) {
    if (rowWord(f, r, 0) !== RowClass.HOST_RANGES) continue;
    const first = rowWord(f, r, 6);
    const n = rowWord(f, r, 7);
    for (let i = first; i < first + n; i++) if (ev.flags(i) & Flag.STEP) out.push(i);
  }
  return out.sort((a, b) => ev.start(a) - ev.start(b));
}

/** Fills the steps panel; a click on a step calls `pick`. */
export function renderSteps(files: LoadedFile[], pick: (s: Sel) => void): void {
  const ol = $("#steps ol");
  ol.textContent = "";
  let total = 0;
  for (const f of files) {
    for (const i of stepsOf(f)) {
      const li = document.createElement("li");
      li.dataset.step = String(f.events.word(i, 11));
      const label = `${files.length > 1 ? `${fileTag(files, f)} · ` : ""}step ${f.events.word(i, 11)} · ${eventName(f, i)} · ${dur(f.events.dur(i))}`;
      li.append(linkButton(label, () => pick({ file: f, i })));
      ol.append(li);
      total++;
    }
  }
  $("#steps").hidden = total === 0;
  document.body.dataset.steps = String(total);
}
