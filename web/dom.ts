/** Small DOM helpers shared by the viewer's panels. */

/** `document.querySelector` typed. */
export const $ = <T extends HTMLElement = HTMLElement>(sel: string) => document.querySelector(sel) as T;

/** Appends a key/value pair to a `<dl>`; the value carries `data-field` (what tests read). */
export function kv(dl: HTMLElement, key: string, field: string, value: string | Node, title?: string): HTMLElement {
  const dt = document.createElement("dt");
  dt.textContent = key;
  const dd = document.createElement("dd");
  dd.dataset.field = field;
  if (typeof value === "string") dd.textContent = value;
  else dd.append(value);
  if (title) dd.title = title;
  dl.append(dt, dd);
  return dd;
}

/** Appends a cell to a table row. */
export function cell(tr: HTMLElement, text: string, cls = "", data?: Record<string, string>, title?: string): HTMLElement {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  if (title) td.title = title;
  if (data) Object.assign(td.dataset, data);
  tr.append(td);
  return td;
}

/** Puts `hint` (src/core/name_hints.ts) under the name in a table cell, on a line of its own; nothing for null. */
export function appendHint(td: HTMLElement, hint: string | null): void {
  if (hint === null) return;
  const sub = document.createElement("span");
  sub.className = "name-hint";
  sub.textContent = hint;
  td.append(sub);
}

/** A `table.stats` with these headings; returns it and its body. */
export function table(heads: string[], numeric: boolean[]): [HTMLTableElement, HTMLElement] {
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

/** A link-styled button. */
export function linkButton(text: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement("button");
  b.className = "link";
  b.type = "button";
  b.textContent = text;
  b.addEventListener("click", onClick);
  return b;
}
