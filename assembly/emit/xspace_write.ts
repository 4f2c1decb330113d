/**
 * Sizing and writing of whole XPlanes at the end of the XSpace pass: every line's and plane's exact size first
 * ({@link sizePlane}: a line's events are encoded then while emit/xspace_capture.ts's buffer has room, the rest
 * sized), then the bytes ({@link putPlane}: the captured events copied, the rest encoded), checked against those
 * sizes; {@link planeBound} bounds a plane's size without encoding an event.
 */
import * as O from "./out";
import { varintSize, putVarintField, putLenPrefix, putBytesField } from "./protobuf";
import { F_INT64, F_UINT64, I64_MAX, usePlane, setLineTs } from "./xspace_encode";
import { captureLineEvents, putLineEvents } from "./xspace_lines";
import { EVENT_ROOM, capEvents, captured, captureCopy } from "./xspace_capture";
import { metaMapSize, putMetaMap, stOut } from "./xspace_meta";
import { Line, PSTAT, Plane } from "./xspace_plane";

/** Profile start of the file (Unix ns): Task Environment profile_start_time; line timestamps are relative to it. */
export let profileStart: u64 = 0;

/** Sets {@link profileStart} (Unix ns). */
export function setProfileStart(ns: u64): void {
  profileStart = ns;
}

/** XLine.timestamp_ns of `ln`: its first start after the profile start, saturating at 2^63 - 1 (an int64 field). */
function lineTsNs(ln: Line): u64 {
  const ts = ln.minStart > profileStart ? ln.minStart - profileStart : 0;
  return ts > I64_MAX ? I64_MAX : ts;
}

/** XLine body size, without its events. */
function lineHeadSize(ln: Line): u64 {
  let n: u64 = 0;
  if (ln.id != 0) n += 1 + varintSize(ln.id);
  n += 1 + varintSize(ln.nameN) + ln.nameN;
  if (ln.dispN != 0) n += 1 + varintSize(ln.dispN) + ln.dispN;
  const ts = lineTsNs(ln);
  if (ts != 0) n += 1 + varintSize(ts);
  return n;
}

function pstatBody(a: usize): u64 {
  const type = load<u32>(a, 4);
  const id = stOut(load<u32>(a));
  if (type == 0) {
    const n = load<u32>(a, 16);
    return 1 + varintSize(id) + 1 + varintSize(n) + n;
  }
  return 1 + varintSize(id) + 1 + varintSize(load<u64>(a, 8));
}

/**
 * Computes every line's size and the plane's size (stored in ln.size / pl.size), capturing the lines' events while
 * the buffer has room (emit/xspace_capture.ts, after captureStart).
 */
export function sizePlane(pl: Plane): void {
  usePlane(pl);
  let n = pl.fixed;
  for (let i: u32 = 0; i < pl.lineCount; i++) {
    const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>i << 2)));
    setLineTs(profileStart + lineTsNs(ln), ln.links != 0, ln.pid);
    const at = captured();
    const k = capEvents;
    const rest = captureLineEvents(ln);
    ln.capAt = at;
    ln.capN = captured() - at;
    ln.capK = capEvents - k;
    ln.size = lineHeadSize(ln) + <u64>ln.capN + rest;
    n += 1 + varintSize(ln.size) + ln.size;
  }
  pl.size = n;
}

/**
 * An upper bound of XSpace.planes entry `pl` (tag, length and body) that encodes no event: its lines' heads exact,
 * each event at its most ({@link EVENT_ROOM}). Also sets pl.fixed (what is not a line: id, name, metadata maps,
 * plane stats), which {@link sizePlane} adds its lines to. Metadata is complete by now (encoding interns none).
 */
export function planeBound(pl: Plane): u64 {
  let n: u64 = 0;
  if (pl.id != 0) n += 1 + varintSize(pl.id);
  n += 1 + varintSize(pl.nameN) + pl.nameN;
  n += metaMapSize(pl.ev);
  n += metaMapSize(pl.st);
  for (let i: u32 = 0; i < pl.pstatCount; i++) {
    const b = pstatBody(pl.pstats + <usize>i * PSTAT);
    n += 1 + varintSize(b) + b;
  }
  pl.fixed = n;
  for (let i: u32 = 0; i < pl.lineCount; i++) {
    const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>i << 2)));
    const b = lineHeadSize(ln) + <u64>ln.count * <u64>EVENT_ROOM;
    n += 1 + varintSize(b) + b;
  }
  return 1 + <u64>varintSize(n) + n;
}

/** Writes XSpace.planes entry `pl` (sized by {@link sizePlane}). */
export function putPlane(pl: Plane): void {
  usePlane(pl);
  putLenPrefix(1, pl.size);
  const bodyStart = O.written + <u64>O.pos;
  O.need(16);
  if (pl.id != 0) putVarintField(1, pl.id);
  putBytesField(2, pl.nameP, pl.nameN);
  for (let i: u32 = 0; i < pl.lineCount; i++) {
    const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>i << 2)));
    const ts = lineTsNs(ln);
    putLenPrefix(3, ln.size);
    const lineStart = O.written + <u64>O.pos;
    O.need(32);
    if (ln.id != 0) putVarintField(1, ln.id);
    putBytesField(2, ln.nameP, ln.nameN);
    O.need(16);
    if (ts != 0) putVarintField(3, ts);
    captureCopy(ln.capAt, ln.capN);
    if (<u64>ln.capK < ln.count) {
      setLineTs(profileStart + ts, ln.links != 0, ln.pid);
      putLineEvents(ln, ln.capK);
    }
    // Fields in number order, as protobuf encoders write them (display_name is field 11).
    if (ln.dispN != 0) putBytesField(11, ln.dispP, ln.dispN);
    // A size that disagrees with the bytes (head fields, captured events) would corrupt the file: stop instead.
    if (O.written + <u64>O.pos - lineStart != ln.size) unreachable();
  }
  putMetaMap(4, pl.ev);
  putMetaMap(5, pl.st);
  for (let i: u32 = 0; i < pl.pstatCount; i++) {
    const a = pl.pstats + <usize>i * PSTAT;
    putLenPrefix(6, pstatBody(a));
    O.need(32);
    putVarintField(1, stOut(load<u32>(a)));
    const type = load<u32>(a, 4);
    if (type == 0) putBytesField(5, <usize>load<u64>(a, 8), load<u32>(a, 16));
    else putVarintField(type == 1 ? F_INT64 : F_UINT64, load<u64>(a, 8));
  }
  if (O.written + <u64>O.pos - bodyStart != pl.size) unreachable();
}
