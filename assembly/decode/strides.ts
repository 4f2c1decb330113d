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
 * Sets the stride table for pass 1 from the dump's KIND_SIZES: a size that is not a multiple of 8, under 8 or over
 * 64 KiB, or over {@link MAX_GROWTH} times the kind's built-in size is BAD_KIND_SIZE (at the KIND_SIZES chunk the size came from, detail the kind) and
 * replaced by the built-in size, which also fills the kinds the dump does not size. Call once per file, before pass 1.
 */
export function prepareStrides(builtin: BuiltinSizeFn): void {
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
}
