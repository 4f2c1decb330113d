/**
 * An independent reader of `.rawtrace` PTI dumps for the XPU interop tests: the container (docs/format.md) and the
 * PTI kernel record fields (vendor-record-layouts.md §3.3: `_name` @24, `_start_timestamp` @104, `_end_timestamp`
 * @112) and the copy and fill records' times read straight from the bytes in TypeScript, sharing no code with the
 * WebAssembly core, its emitters or the generator: the kernels' own durations per name, which HTA's breakdown and
 * XProf's kernel_stats must show, and the copies' and fills', which HTA counts as memory.
 */

/** One kernel record: its name (STRINGS) and device start/end (PTI ns). */
export interface PtiKernel {
  name: string;
  start: bigint;
  end: bigint;
}

/** One copy, peer copy or fill record: its PTI view kind and device start/end (PTI ns). */
export interface PtiTransfer {
  kind: "copy" | "fill" | "p2p";
  start: bigint;
  end: bigint;
}

/**
 * Offsets of `_start_timestamp` in the copy (view kind 8), fill (9) and peer copy (10) records (vendor-record-layouts.md
 * §3.3, `pti_view_record_memory_copy_v2` @96, `_memory_fill_v2` @88, `_memory_copy_p2p_v2` @128; the v1 records are
 * their prefixes); `_end_timestamp` follows at +8.
 */
const TRANSFERS = new Map<number, [PtiTransfer["kind"], number]>([[8, ["copy", 96]], [9, ["fill", 88]], [10, ["p2p", 128]]]);

/** Every kernel record of a PTI dump, in file order, stepped by the dump's KIND_SIZES. */
export function ptiKernels(bytes: Uint8Array): PtiKernel[] {
  return ptiRecords(bytes).kernels;
}

/** Every copy, peer copy and fill record of a PTI dump, in file order. */
export function ptiTransfers(bytes: Uint8Array): PtiTransfer[] {
  return ptiRecords(bytes).transfers;
}

function ptiRecords(bytes: Uint8Array): { kernels: PtiKernel[]; transfers: PtiTransfer[] } {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dec = new TextDecoder();
  const sizes = new Map<number, number>();
  const strings = new Map<bigint, string>();
  const out: PtiKernel[] = [];
  const transfers: PtiTransfer[] = [];
  for (let p = 16; p + 24 <= bytes.length;) {
    const type = dv.getUint16(p + 4, true);
    const len = dv.getUint32(p + 12, true);
    const q = p + 24;
    if (type === 3) {
      const n = dv.getUint32(q, true);
      for (let i = 0; i < n; i++) sizes.set(dv.getUint32(q + 4 + 8 * i, true), dv.getUint32(q + 8 + 8 * i, true));
    } else if (type === 6) {
      const n = dv.getUint32(q, true);
      let o = q + 4;
      for (let i = 0; i < n; i++) {
        const ptr = dv.getBigUint64(o, true);
        const l = dv.getUint32(o + 8, true);
        strings.set(ptr, dec.decode(bytes.subarray(o + 12, o + 12 + l)));
        o += 12 + l;
      }
    } else if (type === 5) {
      for (let r = q; r + 4 <= q + len;) {
        const kind = dv.getUint32(r, true);
        const size = sizes.get(kind);
        if (!size) throw new Error(`kind ${kind} has no size`);
        if (kind === 1) {
          out.push({ name: strings.get(dv.getBigUint64(r + 24, true)) ?? "?", start: dv.getBigUint64(r + 104, true), end: dv.getBigUint64(r + 112, true) });
        }
        const t = TRANSFERS.get(kind);
        if (t) transfers.push({ kind: t[0], start: dv.getBigUint64(r + t[1], true), end: dv.getBigUint64(r + t[1] + 8, true) });
        r += size;
      }
    }
    p = q + ((len + 7) & ~7);
  }
  return { kernels: out, transfers };
}

/** Kernel count and summed duration (µs) per name. */
export function kernelSums(k: PtiKernel[]): Map<string, { count: number; us: number }> {
  const m = new Map<string, { count: number; us: number }>();
  for (const x of k) {
    const e = m.get(x.name) ?? { count: 0, us: 0 };
    e.count++;
    e.us += Number(x.end - x.start) / 1000;
    m.set(x.name, e);
  }
  return m;
}
