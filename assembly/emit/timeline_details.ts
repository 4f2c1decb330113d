/**
 * The viewer's details of single events, derived on demand from the dump: a timeline pass (emit/timeline.ts) whose
 * tables nobody reads (its output is dropped: emit/out.ts DROP) and that, for the events it is asked about, writes
 * their Chrome JSON text — chromeEvent's own bytes, as `rawtrace convert` writes them — so the details panel shows
 * every arg of the Chrome JSON without the timeline keeping any of it per event (web/details.ts, docs/viewer.md).
 *
 * The page names an event by what its record says: its start (ns since the tables' base, the record's f64), kind and
 * row (class, a, b); the pass runs the same decoders in the same order as the load did, so the same event gets the
 * same start and row. Events that share all of these (a dump that repeats an event) are told apart by their place in
 * the timeline: at the end of the pass each captured event's output index is known (emit/timeline_order.ts), the
 * index the page has.
 *
 * Output (little-endian, 8-byte aligned), instead of the timeline stream:
 *   EVENT (tag 1): u32 1, u32 arrival index, u32 length, u32 0, then `length` bytes of Chrome JSON — the event as
 *     `,\n{…}`, with what chromeEvent writes with it (its ac2g flow event; a step's ProfilerStep#N marker before it)
 *     — padded with zeros to a multiple of 8
 *   INDEX (tag 2), once at the end: u32 2, u32 n, u32 0, u32 0, then n × {u32 arrival index, u32 output index} of
 *     the events captured, in capture order
 */
import { Ev } from "../model/event";
import * as O from "./out";
import * as S from "../model/session";
import { chromeBegin, chromeEvent } from "./chrome_json";
import { outputIndexOf } from "./timeline_order";
import { regrow } from "../util/regrow";

/** On for this pass: set by {@link detailsAll} or {@link detailsTarget} (after rt_reset, before pass 2). */
export let detailsOn = false;
/** Every event (tests: the Chrome JSON of each timeline event). */
let all = false;
/** Targets: {f64 start, u32 kind, u32 class, u32 a, u32 b} each. */
const TARGET: usize = 24;
let targets: usize = 0;
let targetCount: u32 = 0;
let targetCap: u32 = 0;
/** A block's 16-byte head, and a record of the INDEX block, written from here (static: no allocation per event). */
const HEAD = memory.data(16, 8);
/** Arrival indices of the events captured (u32 each). */
let caught: usize = 0;
let caughtCount: u32 = 0;
let caughtCap: u32 = 0;

/** Off, no targets (a new file: the heap was rewound). */
export function detailsReset(): void {
  detailsOn = false;
  all = false;
  targets = 0;
  targetCount = 0;
  targetCap = 0;
  caught = 0;
  caughtCount = 0;
  caughtCap = 0;
}

/** The next timeline pass writes the Chrome JSON of every event. */
export function detailsAll(): void {
  detailsOn = true;
  all = true;
}

/** The next timeline pass writes the Chrome JSON of the events starting at `start` with this kind and row. */
export function detailsTarget(start: f64, kind: u32, cls: u32, a: u32, b: u32): void {
  detailsOn = true;
  if (targetCount == targetCap) {
    targetCap = targetCap == 0 ? <u32>4 : targetCap << 1;
    targets = regrow(targets, <usize>targetCount * TARGET, <usize>targetCap * TARGET);
  }
  const t = targets + <usize>targetCount * TARGET;
  store<f64>(t, start);
  store<u32>(t, kind, 8);
  store<u32>(t, cls, 12);
  store<u32>(t, a, 16);
  store<u32>(t, b, 20);
  targetCount++;
}

/** Whether the event at `start` of `kind` on row (cls, a, b) is asked about (a scan: the page asks about a few). */
export function detailsWanted(start: f64, kind: u32, cls: u32, a: u32, b: u32): bool {
  if (all) return true;
  for (let i: u32 = 0; i < targetCount; i++) {
    const t = targets + <usize>i * TARGET;
    if (load<f64>(t) == start && load<u32>(t, 8) == kind && load<u32>(t, 12) == cls && load<u32>(t, 16) == a &&
        load<u32>(t, 20) == b) return true;
  }
  return false;
}

/**
 * Writes the Chrome JSON of `e`, the event of arrival index `arrival`, as an EVENT block. The timeline's own output
 * is being dropped: the caller closed its open block, so nothing of it points into the window.
 */
export function detailsCapture(e: Ev, arrival: u32): void {
  O.flush(); // dropped
  O.outMode(O.CAPTURE);
  const counted = S.eventsEmitted; // the timeline counted `e` (and what chromeEvent writes with it) already
  chromeEvent(e);
  S.eventsBackTo(counted);
  O.flush();
  const n = O.capLen;
  O.outMode(O.TO_HOST);
  const h = HEAD;
  store<u32>(h, 1);
  store<u32>(h, arrival, 4);
  store<u32>(h, <u32>n, 8);
  store<u32>(h, 0, 12);
  O.raw(h, 16);
  O.raw(O.captured(), n);
  const pad: usize = (8 - (n & 7)) & 7;
  if (pad != 0) {
    store<u64>(h, 0);
    O.raw(h, pad);
  }
  O.flush();
  O.outMode(O.DROP);
  if (caughtCount == caughtCap) {
    caughtCap = caughtCap == 0 ? <u32>64 : caughtCap << 1;
    caught = regrow(caught, <usize>caughtCount << 2, <usize>caughtCap << 2);
  }
  store<u32>(caught + (<usize>caughtCount << 2), arrival);
  caughtCount++;
}

/**
 * At the start of the timeline pass (after timelineBegin): the Chrome JSON writer's state, on the Chrome JSON's own
 * time base `chromeBase` (Unix ns; `startNs` as chromeBegin's), and the timeline's output dropped from here on.
 */
export function detailsBegin(chromeBase: u64, startNs: u64): void {
  chromeBegin(chromeBase, startNs, true);
  O.flush();
  O.outMode(O.DROP);
}

/**
 * At the end of the pass, once the output indices are known (emit/timeline_order.ts noteOutputIndex): the INDEX
 * block. What the pass wrote before it (the tables) is dropped.
 */
export function detailsEnd(): void {
  O.flush(); // dropped
  O.outMode(O.TO_HOST);
  const h = HEAD;
  store<u32>(h, 2);
  store<u32>(h, caughtCount, 4);
  store<u64>(h, 0, 8);
  O.raw(h, 16);
  for (let i: u32 = 0; i < caughtCount; i++) {
    const a = load<u32>(caught + (<usize>i << 2));
    store<u32>(h, a);
    store<u32>(h, outputIndexOf(a), 4);
    O.raw(h, 8);
  }
  O.flush();
}
