/**
 * External correlation: which framework op (CUPTI external kinds UNKNOWN / CUSTOM0) and which user range (CUSTOM1)
 * each vendor correlation id belongs to, recorded in pass 1 from EXTERNAL_CORRELATION records (and the other
 * vendors' equivalents) and looked up per event in pass 2 (decode/external.ts). Per-file state in linear memory
 * allocated after the last heap.reset(); {@link externalIdsReset} runs from model/session.ts sessionReset.
 */
import { Table, tableNew, tableUpsert, tableFind, inserted } from "../util/hash_table";
import { Paged, pagedNew, pagedSlot, pagedEpoch } from "../util/paged";

// Framework-op ids below 2^32 - 1 live in a paged direct array (util/paged.ts: cache-friendly for sequential
// correlation ids, 8,192 pages of 16 Ki ids at most, 8 MiB resident, colder pages spilled), 4 bytes per correlation
// id (8 before session 18: the bench's dump spilled 74 MB of them, JavaScript memory in a browser); other kinds,
// wider framework-op ids and ids past the page cap go to the hash table. Framework-op ids of both kinds (UNKNOWN and
// CUSTOM0) share one slot per correlation in the array and one key in the table ({@link tableKey}), and a
// correlation's first framework-op mapping wins across both ({@link extOpInTable}: only once one was put in the
// table does a narrow one look there first).
let extDense: Paged = 0; // corr → ext+1 (u32), 16384 per 64 KiB page, 8192 pages at most
let extTable: Table = 0;
let extCount: u32 = 0;
// Page of the last id looked up in extDense and of the last one written (a written page's address comes from a
// `create` slot, see util/paged.ts), each valid while extDense's eviction epoch is the one it was taken under.
let extPage: u32 = 0xffffffff;
let extPageBase: usize = 0;
let extEpoch: u32 = 0;
let extWPage: u32 = 0xffffffff;
let extWBase: usize = 0;
let extWEpoch: u32 = 0;
let extUserSeen = false;
let extOpInTable = false; // a framework-op id went to the hash table (2^32 - 1 or more, or past the page cap)

/**
 * Hash-table key of (corr, kind): the kind in the low 3 bits, both framework-op kinds as CUSTOM0 (3), kinds of 8 and
 * more (not CUPTI's) as 7, which nothing looks up (before, kind & 7 let them pass for a framework op or a user range).
 */
// @ts-ignore: decorator
@inline function tableKey(corr: u64, kind: u32): u64 {
  return (corr << 3) | <u64>(isOpKind(kind) ? 3 : kind < 8 ? kind : 7);
}

/** Kinds kept in the direct array: CUPTI UNKNOWN (1) and CUSTOM0 (3) both mark framework ops. */
// @ts-ignore: decorator
@inline function isOpKind(kind: u32): bool {
  return kind == 3 || kind == 1;
}

/**
 * Records that vendor correlation `corr` belongs to external id `ext` of external kind `kind` (0..7). Returns false
 * when the pair was already mapped to another id (the first mapping is kept).
 */
// @ts-ignore: decorator
@inline export function setExternal(corr: u64, kind: u32, ext: u64): bool {
  // Correlation 0 is none (emit/chrome_json.ts putCorr): an external id for it would join every unlinked record.
  if (corr == 0) return true;
  // The common case inline (no call per record): a framework op whose id is on the page written last.
  if (
    isOpKind(kind) && ext < 0xffffffff && !extOpInTable && corr <= 0xffffffff && <u32>(corr >> 14) == extWPage &&
    pagedEpoch(extDense) == extWEpoch
  ) {
    const d = extWBase + (<usize>(corr & 0x3fff) << 2);
    const cur = load<u32>(d);
    if (cur != 0) return <u64>cur == ext + 1;
    store<u32>(d, <u32>(ext + 1));
    extCount++;
    return true;
  }
  return setExternalAny(corr, kind, ext);
}

/** {@link setExternal} for any id. */
function setExternalAny(corr: u64, kind: u32, ext: u64): bool {
  if (isOpKind(kind)) {
    if (ext < 0xffffffff) {
      if (extOpInTable) {
        // A framework-op id this correlation got in the table first wins.
        const w = tableFind(extTable, tableKey(corr, kind));
        if (w != 0) return load<u64>(w) == ext;
      }
      // Not on the page written last (setExternal took that case): find the slot, remember its page.
      const d = pagedSlot(extDense, corr, true);
      if (d != 0) {
        extWPage = <u32>(corr >> 14);
        extWBase = d - (<usize>(corr & 0x3fff) << 2);
        extWEpoch = pagedEpoch(extDense);
        const cur = load<u32>(d);
        if (cur != 0) return <u64>cur == ext + 1;
        store<u32>(d, <u32>(ext + 1));
        extCount++;
        return true;
      }
    } else {
      // Too wide for the array: a narrow id mapped to this correlation first wins, else the table.
      const d = pagedSlot(extDense, corr, false);
      if (d != 0 && load<u32>(d) != 0) return false;
    }
    extOpInTable = true; // (a narrow one here: past the array's page cap)
  }
  if (!isOpKind(kind)) extUserSeen = true;
  const slot = tableUpsert(extTable, tableKey(corr, kind));
  if (!inserted) return load<u64>(slot) == ext;
  store<u64>(slot, ext);
  extCount++;
  return true;
}

/** External ids found by the last {@link lookupExternal}. */
export let extOp: u64 = 0;
export let extOpFound = false;
export let extUser: u64 = 0;
export let extUserFound = false;

/** Pass 2 looks external ids up only when pass 1 recorded some and the emitter reads them (one test per event). */
export let extLookups = false;

/**
 * Pass 2, before the first record (engine.ts beginEmit): whether the emitter reads external ids — Chrome JSON and the
 * timeline do; XSpace and the statistics never read `Ev.externalId` / `Ev.userExternalId` or their flags, so
 * {@link lookupExternal} finds nothing for them (the lookups skipped). Until it is called, nothing is found.
 */
export function setExternalLookups(on: bool): void {
  extLookups = on && extCount != 0;
}

/**
 * Looks up the framework-op id (CUSTOM0, else UNKNOWN) and user-annotation id (CUSTOM1) of `corr`. Pass 2, only
 * while {@link extLookups} (the caller tests it: decode/external.ts).
 */
// @ts-ignore: decorator
@inline export function lookupExternal(corr: u64): void {
  extOpFound = false;
  extUserFound = false;
  let d: usize;
  if (corr <= 0xffffffff && <u32>(corr >> 14) == extPage && pagedEpoch(extDense) == extEpoch) {
    d = extPageBase + (<usize>(corr & 0x3fff) << 2);
  } else {
    d = pagedSlot(extDense, corr, false);
    if (d != 0) {
      extPage = <u32>(corr >> 14);
      extPageBase = d - (<usize>(corr & 0x3fff) << 2);
      extEpoch = pagedEpoch(extDense);
    }
  }
  if (d != 0 && load<u32>(d) != 0) {
    extOp = <u64>load<u32>(d) - 1;
    extOpFound = true;
  } else if (extOpInTable) {
    const x = tableFind(extTable, tableKey(corr, 3));
    if (x != 0) {
      extOp = load<u64>(x);
      extOpFound = true;
    }
  }
  if (extUserSeen) {
    const u = tableFind(extTable, (corr << 3) | 4);
    if (u != 0) {
      extUser = load<u64>(u);
      extUserFound = true;
    }
  }
}

/** Number of external correlations recorded. */
export function externalCount(): u32 {
  return extCount;
}

/** Forgets every mapping (a new file; after heap.reset()). */
export function externalIdsReset(): void {
  extTable = tableNew(64);
  extDense = pagedNew(2, 14, 8192);
  extPage = 0xffffffff;
  extPageBase = 0;
  extWPage = 0xffffffff;
  extWBase = 0;
  extCount = 0;
  extUserSeen = false;
  extOpInTable = false;
  extLookups = false;
}
