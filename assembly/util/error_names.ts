/**
 * Stable names of the warning codes in assembly/util/error.ts, written into outputs (Chrome JSON `rawtrace.warnings`,
 * XSpace warnings). src/core/codes.ts holds the same names with user messages; test/core/codes.test.ts checks both.
 */
export function warnName(code: i32): string {
  switch (code) {
    case 0: return "TRUNCATED";
    case 1: return "BAD_CHUNK_HEADER";
    case 2: return "BAD_PAYLOAD_CRC";
    case 3: return "CHUNK_TOO_LARGE";
    case 4: return "SEQ_GAP";
    case 5: return "DUPLICATE_CHUNK";
    case 6: return "UNKNOWN_CHUNK";
    case 7: return "NO_END";
    case 8: return "BAD_PAYLOAD";
    case 9: return "UNKNOWN_KIND_UNSIZED";
    case 10: return "UNKNOWN_KIND";
    case 11: return "RECORD_TRUNCATED";
    case 12: return "MISSING_STRING";
    case 13: return "UNKNOWN_VENDOR_VERSION";
    case 14: return "NEGATIVE_DURATION";
    case 15: return "DUPLICATE_CORRELATION";
    case 16: return "DROPPED_RECORDS";
    case 17: return "UNCLOSED_RANGE";
    case 18: return "UNMATCHED_RANGE_END";
    case 19: return "BAD_KIND_SIZE";
    case 20: return "NO_HEADER";
    case 21: return "RECORD_TOO_SMALL";
    case 22: return "COLLECTOR_ERROR";
    case 23: return "SEQ_REUSED";
    case 24: return "CORRELATION_PROCESSES";
    case 25: return "BAD_TIMESTAMP";
    case 26: return "INCOMPLETE_RECORD";
    case 27: return "UNKNOWN_DEVICE";
    case 28: return "BAD_ENUM_VALUE";
    case 29: return "HPU_BAD_TRACE";
    case 30: return "HPU_BAD_TIME";
    case 31: return "HPU_BAD_STRING";
    case 32: return "HPU_UNMATCHED_END";
    case 33: return "HEADER_DAMAGED";
    case 34: return "UNNAMED_KIND";
    case 35: return "DROPPED_BUFFERS";
    case 36: return "HPU_CUT_STRING";
    case 37: return "STILL_WRITING";
    case 38: return "GZIP_DAMAGED";
    case 39: return "FILE_CHANGED";
    case 40: return "BAD_RECORD_HEADER";
    case 41: return "FOREIGN_CHUNK";
    case 42: return "BAD_CLOCK_ANCHOR";
    case 43: return "CLOCK_CLAMPED";
    case 44: return "PREAMBLE_DAMAGED";
    case 45: return "GZIP_MAGIC_DAMAGED";
  }
  return "UNKNOWN";
}
