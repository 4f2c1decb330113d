/**
 * Routes normalized events to the emitter chosen for this pass. Decoders call {@link emitEvent}; they never know
 * which output is being produced.
 */
import { Ev, EvFlag } from "../model/event";
import * as S from "../model/session";
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

/** Hands one event to the active emitter (inlined into the decoders' call sites: one call less per event). */
// @ts-ignore: decorator
@inline export function emitEvent(e: Ev): void {
  // A correlation id two processes used cannot be joined to the right launch: no flow for it in any output.
  if (S.ambiguousCorrs != 0 && S.corrAmbiguous(<u64>e.correlation)) e.flags &= ~(EvFlag.FLOW_START | EvFlag.FLOW_END);
  if (sink == Sink.CHROME_JSON) chromeEvent(e);
  else if (sink == Sink.XSPACE) xspaceEvent(e);
  else if (sink == Sink.TIMELINE) timelineEvent(e);
  else if (sink == Sink.STATS) statsEvent(e);
}
