/**
 * The host's spill storage, shared by everything in the core that moves bytes out of linear memory during one
 * conversion: XSpace's buffered records (emit/xspace_spill.ts) and the cold pages of paged arrays (util/paged.ts).
 * Bytes are appended (imported `env.rt_spill_write(ptr, len)`) and read back by offset (`env.rt_spill_read(offset,
 * ptr, len)`, synchronous); the host keeps them in a temporary file (src/node/spill.ts) or in JavaScript memory
 * (src/core/engine.ts `memorySpill`), one store per conversion, so offsets restart at 0 with {@link spillStoreReset}
 * (rt_reset).
 */

// @ts-ignore: decorator
@external("env", "rt_spill_write")
declare function hostSpillWrite(ptr: usize, len: u32): void;
// @ts-ignore: decorator
@external("env", "rt_spill_read")
declare function hostSpillRead(offset: u64, ptr: usize, len: u32): void;

/** Bytes handed to the host in this conversion (the next append's offset). */
let spillOff: u64 = 0;

/** Starts a conversion: the host's store is new and empty. */
export function spillStoreReset(): void {
  spillOff = 0;
}

/** Appends the `len` bytes at `ptr` to the spill storage; returns their offset in it. */
export function spillAppend(ptr: usize, len: u32): u64 {
  const at = spillOff;
  hostSpillWrite(ptr, len);
  spillOff += len;
  return at;
}

/** Reads `len` bytes written at `offset` (by {@link spillAppend}) into `ptr`. */
// @ts-ignore: decorator
@inline export function spillLoad(offset: u64, ptr: usize, len: u32): void {
  hostSpillRead(offset, ptr, len);
}

/** Bytes appended in this conversion. */
export function spillStoreBytes(): u64 {
  return spillOff;
}
