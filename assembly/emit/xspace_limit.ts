/**
 * The largest XSpace the core writes: protobuf parsers (C++ `ParseFromString`, which XProf and TensorBoard use)
 * refuse a message over 2^31 - 1 bytes, so a larger XSpace would be written in full and then fail to open. Before it
 * writes a byte, the XSpace emitter (emit/xspace.ts xspaceEnd) bounds the whole (each event at its largest) and, when
 * that is over the limit, computes the exact size of every plane and stops with Fatal.XSPACE_TOO_LARGE if the total
 * is over too (docs/xspace.md). Tests lower the limit to keep their inputs small.
 */

/** Protobuf's message limit, bytes. */
export const PROTOBUF_MAX: u64 = 0x7fffffff;

/** The limit in force for the next conversion (bytes). */
export let xspaceMaxBytes: u64 = PROTOBUF_MAX;

/** Sets the limit (bytes, ≥ 1; 0 restores {@link PROTOBUF_MAX}). Host entry rt_set_xspace_limit. */
export function setXSpaceMaxBytes(n: u64): void {
  xspaceMaxBytes = n == 0 || n > PROTOBUF_MAX ? PROTOBUF_MAX : n;
}
