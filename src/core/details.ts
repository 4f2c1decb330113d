/**
 * The viewer's details of single events, derived on demand from the dump (assembly/emit/timeline_details.ts): a
 * timeline pass over the file again that writes, for the events asked about, their Chrome JSON text — the bytes
 * `rawtrace convert` writes for them — instead of the tables. So the details panel shows every arg the Chrome JSON
 * has (queued time, graph node, channel, External id of device work, a Gaudi op's recipe, node and flops, an XPU
 * op's queue and context handles…) while the timeline keeps nothing of them per event. Host-neutral (the browser
 * worker, Node tests).
 */
import type { ByteSource, ConvertOptions, DetailsTarget, Engine } from "./engine.js";

export type { DetailsTarget };

/** One event's Chrome JSON, as the conversion of the same file writes it. */
export interface EventJson {
  /** The event's line of the Chrome JSON's traceEvents (without the comma between events). */
  text: string;
  /** Its name, decoded. */
  name: string;
  /** Its args in the order written: key, and the value's JSON text (numbers exactly as written, past 2^53 too). */
  args: Array<[string, string]>;
  /** The lines written with it: its ac2g flow event, the ProfilerStep#N marker of a step range named otherwise. */
  with: string[];
}

/** Block tags of the details stream (assembly/emit/timeline_details.ts). */
const T_EVENT = 1;
const T_INDEX = 2;
const dec = new TextDecoder("utf-8", { fatal: false });

/**
 * The Chrome JSON of the timeline events `targets` names (each with `index`, its place in the timeline tables), or of
 * every event (`"all"`), by output index. `opts` must be what the load used (its `steps` above all: they decide
 * which ranges are steps, so the events and their order).
 */
export async function eventDetails(
  engine: Engine, src: ByteSource, targets: Array<DetailsTarget & { index: number }> | "all",
  opts: Pick<ConvertOptions, "steps" | "traceName" | "onProgress" | "allApi"> = {},
): Promise<Map<number, EventJson>> {
  // The output is small (a few events; every event's text only for "all"): kept in one growing buffer.
  let buf = new Uint8Array(1 << 16);
  let n = 0;
  await engine.convert(src, (b) => {
    if (n + b.length > buf.length) {
      const grown = new Uint8Array(Math.max(buf.length * 2, n + b.length));
      grown.set(buf.subarray(0, n));
      buf = grown;
    }
    buf.set(b, n);
    n += b.length;
  }, { ...opts, format: "timeline", details: targets === "all" ? "all" : targets });
  const all = parseDetails(buf.subarray(0, n));
  if (targets === "all") return all;
  const out = new Map<number, EventJson>();
  for (const t of targets) {
    const j = all.get(t.index);
    if (j) out.set(t.index, j);
  }
  return out;
}

/** Reads the details stream: each event's Chrome JSON by its output index. */
export function parseDetails(b: Uint8Array): Map<number, EventJson> {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const byArrival = new Map<number, EventJson>();
  const out = new Map<number, EventJson>();
  let o = 0;
  while (o + 16 <= b.length) {
    const tag = dv.getUint32(o, true);
    if (tag === T_EVENT) {
      const arrival = dv.getUint32(o + 4, true);
      const n = dv.getUint32(o + 8, true);
      byArrival.set(arrival, eventJson(dec.decode(b.subarray(o + 16, o + 16 + n))));
      o += 16 + ((n + 7) & ~7);
    } else if (tag === T_INDEX) {
      const n = dv.getUint32(o + 4, true);
      for (let k = 0; k < n; k++) {
        const j = byArrival.get(dv.getUint32(o + 16 + k * 8, true));
        if (j) out.set(dv.getUint32(o + 20 + k * 8, true), j);
      }
      o += 16 + n * 8;
    } else throw new Error(`details stream: unknown block ${tag} at ${o}`);
  }
  return out;
}

/** The event of what chromeEvent wrote for it (`,\n{…}` lines): the last line that is not a flow event. */
function eventJson(written: string): EventJson {
  const lines = written.split("\n").map((l) => l.replace(/,$/, "")).filter((l) => l.length > 0);
  const flow = (l: string) => l.startsWith('{"ph":"s"') || l.startsWith('{"ph":"f"');
  let k = lines.length - 1;
  while (k > 0 && flow(lines[k])) k--;
  const text = lines[k];
  const fields = new Map(members(text));
  const name = fields.get("name");
  const args = fields.get("args");
  return {
    text,
    name: name === undefined ? "" : (JSON.parse(name) as string),
    args: args === undefined ? [] : members(args),
    with: lines.filter((_, i) => i !== k),
  };
}

/** The members of JSON object text `s`: each key and the JSON text of its value, in order. */
export function members(s: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let i = s.indexOf("{") + 1;
  const ws = () => {
    while (i < s.length && /\s/.test(s[i])) i++;
  };
  for (;;) {
    ws();
    if (i >= s.length || s[i] === "}") return out;
    if (s[i] === ",") {
      i++;
      continue;
    }
    const k0 = i;
    i = stringEnd(s, i);
    const key = JSON.parse(s.slice(k0, i)) as string;
    ws();
    i++; // ':'
    ws();
    const v0 = i;
    i = valueEnd(s, i);
    out.push([key, s.slice(v0, i)]);
  }
}

/** The index after the JSON string starting at `i` (its quote). */
function stringEnd(s: string, i: number): number {
  for (i++; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === '"') return i + 1;
  }
  return i;
}

/** The index after the JSON value starting at `i`. */
function valueEnd(s: string, i: number): number {
  if (s[i] === '"') return stringEnd(s, i);
  let depth = 0;
  for (; i < s.length; i++) {
    const c = s[i];
    if (c === '"') i = stringEnd(s, i) - 1;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (depth === 0) return i;
      depth--;
    } else if (c === "," && depth === 0) return i;
  }
  return i;
}

/** How the viewer shows an arg's value: a string as its text (no quotes), anything else as the JSON writes it. */
export function argText(json: string): string {
  return json.startsWith('"') ? (JSON.parse(json) as string) : json;
}
