/**
 * End of the XSpace pass, before sizing: line names and display names (threads, streams, rank labels of a host
 * merge), the stat metadata a plane's events use, and plane stats (device capabilities, versions).
 */
import * as S from "../model/session";
import { tableNew, tableUpsert, inserted } from "../util/hash_table";
import { labelPtr, labelLen, hostRanks, deviceShared } from "./options";
import { corrAny } from "./xspace_corr";
import { Line, MAX_PSTATS, PSTAT, Plane, stIntern, wkId } from "./xspace_plane";
import { LINE_COUNTERS, LINE_NVTX, LINE_OVERHEAD, LINE_SYNC, T_GRAPH, WK, typeName } from "./xspace_schema";
import { asciiCopy, bAscii, bBytes, bKeep, bN, bStart, bU64 } from "./xspace_text";

/** Adds plane stat `statId` of `type` (0 string [v, v+len), 1 int64, 2 uint64 v) to `pl` (at most {@link MAX_PSTATS}). */
export function addPlaneStat(pl: Plane, statId: u32, type: u32, v: u64, len: u32): void {
  if (pl.pstatCount >= MAX_PSTATS) return;
  const a = pl.pstats + <usize>pl.pstatCount * PSTAT;
  store<u32>(a, statId);
  store<u32>(a, type, 4);
  store<u64>(a, v, 8);
  store<u32>(a, len, 16);
  store<u32>(a, 0, 20);
  pl.pstatCount++;
}
/** Adds the string plane stat `name` = [p, p+n) to `pl`. */
export function addPlaneStr(pl: Plane, name: string, p: usize, n: u32): void {
  addPlaneStat(pl, stIntern(pl, asciiCopy(name), name.length), 0, p, n);
}
/** The decimal text of v, copied into the arena (length bN). */
export function decimalCopy(v: u64): usize {
  bStart();
  bU64(v);
  return bKeep();
}
/** Adds the plane stat `name` = decimal text of `v` to `pl`. */
export function addPlaneDecimal(pl: Plane, name: string, v: u64): void {
  const p = decimalCopy(v);
  addPlaneStr(pl, name, p, bN);
}
function addPlaneStrAscii(pl: Plane, name: string, value: string): void {
  addPlaneStr(pl, name, asciiCopy(value), value.length);
}

function deviceStats(pl: Plane): void {
  const d = pl.dev;
  const vendor = S.deviceMaker;
  addPlaneStat(pl, wkId(pl, WK.DEVICE_VENDOR), 0, asciiCopy(vendor), vendor.length);
  if (d == 0) return;
  if (load<u32>(d, 92) != 0) addPlaneStat(pl, wkId(pl, WK.GPU_DEVICE_NAME), 0, load<u32>(d, 88), load<u32>(d, 92));
  if (load<u32>(d, 24) != 0) addPlaneStat(pl, wkId(pl, WK.CLOCK_RATE), 1, load<u32>(d, 24), 0);
  if (load<u32>(d, 4) != 0) addPlaneStat(pl, wkId(pl, WK.CORE_COUNT), 1, load<u32>(d, 4), 0);
  if (load<u64>(d, 16) != 0) addPlaneStat(pl, wkId(pl, WK.MEMORY_BANDWIDTH), 2, load<u64>(d, 16), 0);
  if (load<u64>(d, 8) != 0) addPlaneStat(pl, wkId(pl, WK.MEMORY_SIZE), 2, load<u64>(d, 8), 0);
  if (load<u32>(d, 28) != 0) {
    addPlaneStat(pl, wkId(pl, WK.CC_MAJOR), 1, load<u32>(d, 28), 0);
    addPlaneStat(pl, wkId(pl, WK.CC_MINOR), 1, load<u32>(d, 32), 0);
  }
}

/**
 * Makes the XLine.ids of `pl` distinct in their low 32 bits (what the trace viewer keys rows on): {@link lineIdFor}
 * maps crafted tids or stream ids ≥ 2^29 onto the ids of other lines. A later line that collides moves by steps of
 * 2^22, as src/node/xspace_merge.ts moves lines of different ranks, then by 1 if 1024 such steps are all taken.
 */
function uniqueLineIds(pl: Plane): void {
  if (pl.lineCount < 2) return;
  const ids = tableNew(pl.lineCount);
  for (let i: u32 = 0; i < pl.lineCount; i++) {
    const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>i << 2)));
    let id = ln.id;
    for (let tries: u32 = 0; ; tries++) {
      tableUpsert(ids, id & 0xffffffff);
      if (inserted) break;
      id += tries < 1024 ? <u64>(1 << 22) : 1;
    }
    ln.id = id;
  }
}

/** Names the lines of a plane and creates the stat metadata its events use. */
export function finishPlane(pl: Plane): void {
  uniqueLineIds(pl);
  for (let w = 0; w < WK.COUNT; w++) if ((pl.used & (1 << w)) != 0) wkId(pl, w);
  if (pl.kind == 0 && corrAny && (pl.used & (1 << WK.CORRELATION_ID)) != 0) wkId(pl, WK.DEVICE_ID);
  // Rows of a plane the host's ranks share are labelled with the rank ("rank 3: thread 12 (python)").
  const labelRows = hostRanks > 1 && labelLen != 0 && (pl.kind == 0 || (pl.kind == 1 && deviceShared(pl.local)));
  for (let i: u32 = 0; i < pl.lineCount; i++) {
    const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>i << 2)));
    const key = ln.key;
    bStart();
    if (pl.kind == 0) {
      const tid = <u32>key;
      const tn = S.threadName(ln.pid, tid);
      if (key >= LINE_OVERHEAD) bAscii(S.overheadName);
      else if (tn != 0 && load<u32>(tn, 4) != 0) bBytes(<usize>load<u32>(tn), load<u32>(tn, 4));
      else {
        bAscii("thread ");
        bU64(tid);
      }
      if (key >= LINE_NVTX && key < LINE_OVERHEAD) bAscii("/NVTX");
      ln.nameP = bKeep();
      ln.nameN = bN;
      // Named threads also get "thread <tid> (<name>)" as the row label, as the Chrome JSON output shows them (the
      // one overhead line of the plane serves every thread: it keeps its plain name).
      const named = key < LINE_OVERHEAD && tn != 0 && load<u32>(tn, 4) != 0;
      if (named) {
        bStart();
        bAscii("thread ");
        bU64(tid);
        bAscii(" (");
        bBytes(<usize>load<u32>(tn), load<u32>(tn, 4));
        bAscii(")");
        if (key >= LINE_NVTX) bAscii("/NVTX");
        ln.dispP = bKeep();
        ln.dispN = bN;
      }
    } else {
      if (key >= LINE_COUNTERS) bAscii("_counters_");
      else if (key >= LINE_OVERHEAD) bAscii(S.overheadName);
      else if (key >= LINE_SYNC) {
        const stream = <u32>key;
        if (stream == 0xffffffff) bAscii("Synchronization (context)");
        else {
          bAscii("Synchronization (Stream #");
          bU64(stream);
          bAscii(")");
        }
      } else {
        bAscii("Stream #");
        bU64(key);
        if (ln.kinds != 0) {
          bAscii("(");
          let first = true;
          for (let t: u32 = 1; t <= T_GRAPH; t <<= 1) {
            if ((ln.kinds & t) == 0) continue;
            if (!first) bAscii(",");
            first = false;
            bAscii(typeName(t));
          }
          bAscii(")");
        }
      }
      ln.nameP = bKeep();
      ln.nameN = bN;
      // A named stream (a Gaudi engine: decode/synapse_engines.ts) shows its name first: "MME0 (Stream #6000(Compute))".
      const sn = key < LINE_SYNC ? S.streamName(pl.local, <u32>key) : 0;
      if (sn != 0 && load<u32>(sn, 4) != 0) {
        bStart();
        bBytes(<usize>load<u32>(sn), load<u32>(sn, 4));
        bAscii(" (");
        bBytes(ln.nameP, ln.nameN);
        bAscii(")");
        ln.dispP = bKeep();
        ln.dispN = bN;
      }
    }
    if (labelRows) labelRow(ln);
  }
  if (pl.kind == 1) deviceStats(pl);
}

/** Host merge: the rank label in front of row `ln`'s display name (its name stays what XProf keys on). */
function labelRow(ln: Line): void {
  bStart();
  bBytes(labelPtr, labelLen);
  bAscii(": ");
  if (ln.dispN != 0) bBytes(ln.dispP, ln.dispN);
  else bBytes(ln.nameP, ln.nameN);
  ln.dispP = bKeep();
  ln.dispN = bN;
}

/** Host merge: the rank label and ": " in front of a diagnostic being built. */
export function bRankPrefix(): void {
  if (hostRanks > 1 && labelLen != 0) {
    bBytes(labelPtr, labelLen);
    bAscii(": ");
  }
}
