/**
 * Record strides of the vendors whose records carry no length (CUPTI, PTI): the dump's own KIND_SIZES, checked, and
 * completed by the decoder's built-in sizes for the HEADER's API version.
 */
import * as S from "../model/session";
import { Warn } from "../util/error";
import { warn } from "../util/diag";

/** Built-in record size (bytes) of a vendor kind for an API version; 0 = a kind with no built-in size. */
export type BuiltinSizeFn = (kind: u32, version: u32) => u32;

/**
 * How many times its built-in size a known kind's record may claim. Records grow by appended fields (CUPTI's
 * CUDA_EVENT 24 → 80 bytes from 11.x to 13.5, the largest growth known): a dump of a version this build knows
 * claiming more is damage, not a newer layout. Why it matters: the walk steps a whole buffer by these sizes, and a
 * stride too large by a high bit swallows the records after one quietly when it still ends inside the buffer.
 */
const MAX_GROWTH: u32 = 4;

/**
 * Whether the activity payload [p, p+n) walks exactly under the sizes `builtin(kind, version)` (`version` < 0: the
 * table in use): every record's kind has a size and the last record ends at the payload's end. CUPTI and PTI hand
 * over whole records (`validSize`), so a layout that misreads one stride fails this on almost any real buffer.
 */
function walksExactly(p: usize, n: usize, builtin: BuiltinSizeFn, version: i64): bool {
  let r: usize = 0;
  while (r + 4 <= n) {
    const k = load<u32>(p + r);
    const s = version < 0 ? S.kindSize(k) : builtin(k, <u32>version);
    if (s == 0) return false;
    r += s;
  }
  return r == n;
}

/**
 * Sets the stride table for pass 1 from the dump's KIND_SIZES: a size that is not a multiple of 8, under 8 or over
 * 64 KiB, or over {@link MAX_GROWTH} times the kind's built-in size is BAD_KIND_SIZE (at the KIND_SIZES chunk the size came from, detail the kind) and
 * replaced by the built-in size, which also fills the kinds the dump does not size. Without a KIND_SIZES table, the
 * built-in sizes of the HEADER's version are checked against each activity buffer of pass 1 ({@link recheckStrides})
 * and, when they do not walk one exactly, replaced by those of the first of `layouts` (API versions, newest first)
 * that do. Call once per file, before pass 1.
 */
export function prepareStrides(builtin: BuiltinSizeFn, layouts: StaticArray<u32>): void {
  const ver = S.vendorVersion;
  for (let k: u32 = 1; k < S.MAX_KIND; k++) {
    let s = S.kindSize(k);
    const b = builtin(k, ver);
    if (s != 0 && (s > 65536 || (s & 7) != 0 || s < 8 || (b != 0 && s > b * MAX_GROWTH))) {
      warn(Warn.BAD_KIND_SIZE, S.kindSizesAt, k);
      s = 0;
    }
    if (s == 0) s = b;
    S.putKindSize(k, s);
  }
  // No KIND_SIZES (lost with the HEADER, or a damaged HEADER's version): the built-in sizes of a version that may not
  // be the dump's, checked against each buffer by recheckStrides — else every record after the first of a kind that
  // grew is read at the wrong offset.
  checkBuiltin = S.haveKindSizes ? null : builtin;
  checkLayouts = layouts;
}

// The layout check of a dump without KIND_SIZES, while a buffer may still tell the layouts apart (prepareStrides).
let checkBuiltin: BuiltinSizeFn | null = null;
let checkLayouts: StaticArray<u32> = [];

/** Forgets the layout check (a new file's index pass begins). */
export function stridesReset(): void {
  checkBuiltin = null;
}

/**
 * Pass 1, before each activity payload [p, p+n) of a dump without KIND_SIZES: when the sizes in use do not walk it
 * exactly, the first of the layouts that does and that sizes every kind pass 1 has counted so far as the sizes in use
 * do (so the buffers before were read alike) replaces them. A buffer of API records only walks under every layout:
 * the kernels or copies of a later one decide. When none fits, the check stops (the decoder reports the kinds it
 * cannot step: UNKNOWN_KIND_UNSIZED). A dump with KIND_SIZES is never checked.
 */
export function recheckStrides(p: usize, n: u32): void {
  const builtin = checkBuiltin;
  if (builtin == null) return;
  if (walksExactly(p, <usize>n, builtin, -1)) return;
  for (let i = 0; i < checkLayouts.length; i++) {
    const v = unchecked(checkLayouts[i]);
    if (!walksExactly(p, <usize>n, builtin, <i64>v)) continue;
    let same = true;
    for (let k: u32 = 1; k < S.MAX_KIND && same; k++) same = S.recordsOfKind(k) == 0 || builtin(k, v) == S.kindSize(k);
    if (!same) continue;
    for (let k: u32 = 1; k < S.MAX_KIND; k++) S.putKindSize(k, builtin(k, v));
    return;
  }
  checkBuiltin = null;
}
