/**
 * Bit sets over u32 ids kept in a paged array (util/paged.ts) of bytes: bit `id & 7` of byte `id >> 3`, so a page of
 * 64 KiB covers 512 Ki ids. For per-id facts that are yes/no while a dump stays simple (one process, one device
 * plane), where a wider element per id would spill on real dumps' sparse correlation ids; {@link bitsExpand} turns
 * such a set into a wider paged map once the dump needs one.
 */
import { Paged, pagedSlot, pagedBudget, setPagedBudget, pagedResidentBytes } from "./paged";

/** Page bits of a bit set's byte array (64 KiB pages: 512 Ki ids each). */
export const BITS_PAGE_BITS: u32 = 16;

/**
 * Writes `value` (an element of 2^elemShift bytes, 1 or 2) into `into` (a paged array of 64 Ki elements a page, no
 * page made yet) at every id whose bit is set in `bits`, making pages of `into` only where a bit is set. Each page of
 * `bits` is read once (back from the spill storage when evicted). Stops at `into`'s page cap (those ids stay unset).
 * `bits` is not used by the caller afterwards, but its frames stay allocated (the heap cannot take them back), so
 * `into` gets the budget less what they hold: the two stay within one array's budget (and two pages).
 */
export function bitsExpand(bits: Paged, into: Paged, elemShift: u32, value: u32): void {
  const budget = pagedBudget();
  const held = pagedResidentBytes(bits);
  setPagedBudget(held < <usize>budget ? budget - <u32>held : 1); // read when `into` makes its first page
  expandPages(bits, into, elemShift, value);
  setPagedBudget(budget);
}

function expandPages(bits: Paged, into: Paged, elemShift: u32, value: u32): void {
  for (let p: u32 = 0; p < <u32>1 << (32 - 3 - BITS_PAGE_BITS); p++) {
    const b = pagedSlot(bits, <u64>p << BITS_PAGE_BITS, false); // valid through this page: only `into` is touched below
    if (b == 0) continue;
    for (let q: u32 = 0; q < 8; q++) {
      const sub = b + (<usize>q << 13); // the 8 KiB of bits of ids [(p << 19) | (q << 16), + 64 Ki)
      let any: u64 = 0;
      for (let i: usize = 0; i < 1 << 13; i += 8) any |= load<u64>(sub + i);
      if (any == 0) continue;
      const base = pagedSlot(into, (<u64>p << 19) | (<u64>q << 16), true);
      if (base == 0) return;
      for (let i: usize = 0; i < 1 << 13; i++) {
        let v = <u32>load<u8>(sub + i);
        while (v != 0) {
          const at = base + ((((i << 3) + <usize>ctz(v))) << elemShift);
          if (elemShift == 0) store<u8>(at, <u8>value);
          else store<u16>(at, <u16>value);
          v &= v - 1;
        }
      }
    }
  }
}
