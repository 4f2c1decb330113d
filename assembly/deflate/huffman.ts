/**
 * Huffman code lengths from symbol counts (RFC 1951 §3.2.2 builds the codes from the lengths): a two-queue Huffman
 * tree over the counts sorted once, and, when the tree is deeper than the limit (15 for literal/length and distance
 * codes, 7 for the code-length code), a rebuild from flattened counts (each count halved, at least 1) until it fits:
 * all counts equal gives a balanced tree of ⌈log2 n⌉ ≤ 9 levels, so the loop ends. Every code it makes is complete
 * (a full binary tree), which inflaters require of codes with more than one symbol.
 */

// Working memory for up to 288 symbols: sorted keys (count << 9 | symbol), node weights, parents and depths.
const KEYS: usize = memory.data(288 * 4);
const WEIGHT: usize = memory.data(2 * 288 * 4);
const PARENT: usize = memory.data(2 * 288 * 2);
const DEPTH: usize = memory.data(2 * 288);

/**
 * Writes code lengths (u8[n]) for the counts `freq` (u32[n], each below 2^23) with no length above `limit`.
 * At least two counts must be non-zero (the caller adds a second symbol when needed).
 */
export function buildLengths(freq: usize, n: i32, lens: usize, limit: u32): void {
  memory.fill(lens, 0, n);
  let shift: u32 = 0;
  while (true) {
    // Non-zero counts, sorted ascending by count then symbol (insertion sort: n ≤ 288, once per block).
    let m = 0;
    for (let s = 0; s < n; s++) {
      let f = load<u32>(freq + (<usize>s << 2));
      if (f == 0) continue;
      if (shift) f = (f >> shift) | 1;
      const key = (f << 9) | <u32>s;
      let j = m;
      while (j > 0 && load<u32>(KEYS + (<usize>(j - 1) << 2)) > key) {
        store<u32>(KEYS + (<usize>j << 2), load<u32>(KEYS + (<usize>(j - 1) << 2)));
        j--;
      }
      store<u32>(KEYS + (<usize>j << 2), key);
      m++;
    }
    // Two queues: the sorted leaves 0..m-1 and the internal nodes m.., made in ascending weight order.
    for (let k = 0; k < m; k++) store<u32>(WEIGHT + (<usize>k << 2), load<u32>(KEYS + (<usize>k << 2)) >> 9);
    let leaf = 0;
    let inner = m;
    let end = m;
    for (let k = 0; k < m - 1; k++) {
      let a: i32, b: i32;
      if (leaf < m && (inner >= end || load<u32>(WEIGHT + (<usize>leaf << 2)) <= load<u32>(WEIGHT + (<usize>inner << 2)))) a = leaf++;
      else a = inner++;
      if (leaf < m && (inner >= end || load<u32>(WEIGHT + (<usize>leaf << 2)) <= load<u32>(WEIGHT + (<usize>inner << 2)))) b = leaf++;
      else b = inner++;
      store<u32>(WEIGHT + (<usize>end << 2), load<u32>(WEIGHT + (<usize>a << 2)) + load<u32>(WEIGHT + (<usize>b << 2)));
      store<u16>(PARENT + (<usize>a << 1), <u16>end);
      store<u16>(PARENT + (<usize>b << 1), <u16>end);
      end++;
    }
    // Depths from the root down: a parent always has a higher index than its children.
    const root = end - 1;
    store<u8>(DEPTH + root, 0);
    let deepest: u32 = 0;
    for (let k = root - 1; k >= 0; k--) {
      const d = <u32>load<u8>(DEPTH + load<u16>(PARENT + (<usize>k << 1))) + 1;
      store<u8>(DEPTH + k, <u8>min<u32>(d, 255));
      if (k < m && d > deepest) deepest = d;
    }
    if (deepest <= limit) {
      for (let k = 0; k < m; k++) store<u8>(lens + (load<u32>(KEYS + (<usize>k << 2)) & 511), load<u8>(DEPTH + k));
      return;
    }
    shift++;
  }
}
