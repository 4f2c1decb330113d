/**
 * XSpace.errors and XSpace.warnings: the decode warnings and skipped byte ranges of the file as text lines.
 */
import { Warn } from "../util/error";
import { warningCount, warningOffset, warningDetail, lossTotal, lossRange, NO_SEQ } from "../util/diag";
import { warnName } from "../util/error_names";
import { putBytesField } from "./protobuf";
import { bRankPrefix } from "./xspace_finish";
import { bAscii, bN, bP, bStart, bU64 } from "./xspace_text";

/** A warning or error line for XSpace: "<CODE>: <count> (first at file offset <o>, detail <d>)". */
export function putDiag(field: u32, code: i32): void {
  bStart();
  bRankPrefix();
  bAscii("rawtrace ");
  bAscii(warnName(code));
  bAscii(": ");
  bU64(warningCount(code));
  bAscii(warningCount(code) == 1 ? " occurrence" : " occurrences");
  bAscii(" (first at file offset ");
  bU64(warningOffset(code));
  bAscii(", detail ");
  bU64(warningDetail(code));
  bAscii(")");
  putBytesField(field, bP, bN);
}

/**
 * The skipped byte ranges as XSpace errors: "rawtrace skipped bytes <from>-<to> (chunk seq <s>: <CODE>)" for each kept
 * range, then one line with the totals when more ranges were skipped than kept.
 */
export function putLoss(): void {
  const kept = <i32>lossTotal(1);
  for (let i = 0; i < kept; i++) {
    bStart();
    bRankPrefix();
    bAscii("rawtrace skipped bytes ");
    bU64(lossRange(i, 0));
    bAscii("-");
    bU64(lossRange(i, 1));
    bAscii(" (");
    if (<u32>lossRange(i, 3) != NO_SEQ) {
      bAscii("chunk seq ");
      bU64(lossRange(i, 3));
      bAscii(": ");
    }
    bAscii(warnName(<i32>lossRange(i, 2)));
    bAscii(")");
    putBytesField(2, bP, bN);
  }
  if (lossTotal(0) > <u64>kept) {
    bStart();
    bRankPrefix();
    bAscii("rawtrace skipped ");
    bU64(lossTotal(0));
    bAscii(" byte ranges in all (");
    bU64(lossTotal(4));
    bAscii(" bytes); the first ");
    bU64(<u64>kept);
    bAscii(" are listed");
    putBytesField(2, bP, bN);
  }
}

/**
 * Warning codes that mean data was lost: written to XSpace.errors; the others go to XSpace.warnings. The loss codes
 * of src/core/codes.ts LOSS_WARNINGS but DROPPED_RECORDS, which XLA's own dropped-events line says (test/core/codes.test.ts
 * keeps the two lists alike).
 */
export function isDataLoss(code: i32): bool {
  // By name, not number: codes are appended as the format grows. BAD_TIMESTAMP: records dropped by model/timing.ts.
  return code == Warn.TRUNCATED || code == Warn.BAD_CHUNK_HEADER || code == Warn.BAD_PAYLOAD_CRC ||
    code == Warn.CHUNK_TOO_LARGE || code == Warn.SEQ_GAP || code == Warn.NO_END || code == Warn.BAD_PAYLOAD ||
    code == Warn.UNKNOWN_KIND_UNSIZED || code == Warn.RECORD_TRUNCATED || code == Warn.RECORD_TOO_SMALL ||
    code == Warn.COLLECTOR_ERROR || code == Warn.NEGATIVE_DURATION || code == Warn.BAD_TIMESTAMP ||
    code == Warn.HPU_BAD_TRACE || code == Warn.HPU_BAD_TIME || code == Warn.UNNAMED_KIND || code == Warn.DROPPED_BUFFERS ||
    code == Warn.FILE_CHANGED || code == Warn.BAD_RECORD_HEADER || code == Warn.FOREIGN_CHUNK || code == Warn.CLOCK_CLAMPED;
}
