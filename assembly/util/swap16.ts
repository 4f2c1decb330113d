/** Swapping two 16-byte entries of linear memory (the sorts of emit/xspace_spill.ts, emit/stats.ts and decode/cupti_events.ts). */

/** Swaps the 16 bytes at `a` with the 16 bytes at `b` (two u64 loads and stores each; any alignment). */
// @ts-ignore: decorator
@inline export function swap16(a: usize, b: usize): void {
  const x = load<u64>(a);
  const y = load<u64>(a, 8);
  store<u64>(a, load<u64>(b));
  store<u64>(a, load<u64>(b, 8), 8);
  store<u64>(b, x);
  store<u64>(b, y, 8);
}
