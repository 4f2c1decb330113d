/**
 * Exports for multi-file work (`rawtrace merge`, the batch pipeline): output options (emit/options.ts) and the
 * clock anchors behind a file's alignment (the merge reports them per rank). Re-exported by index.ts.
 */
import { setOutputOptions, setXSpaceHost } from "./emit/options";
import * as S from "./model/session";

/**
 * Output options for the next rt_begin_emit (set for every conversion): fixed time base (Unix ns; 2^64 − 1 = per
 * file, emit/options.ts NO_BASE), pid namespace slot (-1 = Kineto pids), Chrome events-only mode (0/1),
 * process-name label at [p, p+n) (allocated with rt_alloc after rt_reset).
 */
export function rt_set_output(baseNs: u64, ns: i32, eventsOnly: i32, p: usize, n: u32): void {
  setOutputOptions(baseNs, ns, eventsOnly != 0, p, n);
}

/**
 * XSpace host merge for the next rt_begin_emit (set for every conversion; 1, 0, 0, 0 = off): ranks on this file's
 * host, this file's index among them, and `n` device map entries {local id, host ordinal, shared} (u32 each) at `p`
 * (allocated with rt_alloc after rt_reset). See emit/options.ts.
 */
export function rt_set_xspace_host(ranks: u32, index: u32, producer: u32, base: u32, p: usize, n: u32): void {
  setXSpaceHost(ranks, index, producer != 0, base, p, n);
}

/**
 * Clock anchors read in pass 1: 0 start anchor present (0/1), 1 its vendor ns, 2 its CLOCK_REALTIME ns, 3 end anchor
 * present, 4 its vendor ns, 5 its CLOCK_REALTIME ns.
 */
export function rt_clock_anchor(field: i32): u64 {
  switch (field) {
    case 0: return S.haveStartAnchor ? 1 : 0;
    case 1: return S.anchorStartVendor;
    case 2: return S.anchorStartReal;
    case 3: return S.haveEndAnchor ? 1 : 0;
    case 4: return S.anchorEndVendor;
    case 5: return S.anchorEndReal;
  }
  return 0;
}
