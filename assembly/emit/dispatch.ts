/**
 * Routes normalized events to the emitter chosen for this pass. Decoders call {@link emitEvent}; they never know
 * which output is being produced.
 */
import { Ev } from "../model/event";
import { chromeEvent } from "./chrome_json";
import { xspaceEvent } from "./xspace";
import { timelineEvent } from "./timeline";
import { statsEvent } from "./stats";

/** Which emitter receives events. */
export const enum Sink {
  NONE = 0,
  CHROME_JSON = 1,
  XSPACE = 2,
  /** Summary statistics (emit/stats.ts). */
  STATS = 3,
  /** Timeline tables for the in-browser viewer (emit/timeline.ts). */
  TIMELINE = 4,
}

let sink: Sink = Sink.NONE;

/** Selects the emitter for the next pass. */
export function setSink(s: Sink): void {
  sink = s;
}

/** Hands one event to the active emitter. */
export function emitEvent(e: Ev): void {
  if (sink == Sink.CHROME_JSON) chromeEvent(e);
  else if (sink == Sink.XSPACE) xspaceEvent(e);
  else if (sink == Sink.TIMELINE) timelineEvent(e);
  else if (sink == Sink.STATS) statsEvent(e);
}
