/**
 * A damaged gzip input as both hosts report it (GZIP_DAMAGED): where, how much of the dump it still gave, and whether
 * the file was simply cut. Apart from the reader (src/core/gunzip.ts), which needs WebAssembly's types: the Node API's
 * declarations name these and must type-check without the DOM library (test/package/pack.test.ts).
 */
import type { Warning } from "./codes.js";

/**
 * Where a gzip file is damaged: the compressed byte offset, the decompressed bytes given before it (the hosts set
 * it to every byte of the dump the file gave once it is read), and why; `truncated` when the data simply ends inside
 * a member (a file cut short: what it held was given, as gunzip does). `filler`: zero bytes the reader gave in place
 * of a damaged member's lost bytes, so that the members after it stay at their offsets in the dump (src/core/gunzip.ts);
 * the reader adds to it as it reads on after the damage, and they are not counted in `decompressed`. `overrun`: bytes
 * a damaged member gave past the length its trailer gives (its damaged data decoded on as garbage, often into the next
 * member's compressed bytes): they cannot be taken back, so that member's zeros are then the up to 7 that put the
 * members after it back on the dump's 8-byte offsets. Both add up over every damaged member after the first damage
 * (which may be of another kind: a bad trailer).
 */
export interface GunzipDamage {
  compressedAt: number;
  decompressed: number;
  message: string;
  truncated: boolean;
  filler?: number;
  overrun?: number;
  /**
   * Decompressed bytes before this are the file's own as far as the gzip stream tells; those from here on may not be
   * (a damaged member's bytes from its start — DEFLATE decodes damaged data as garbage for a while before a code
   * fails, and a trailer that disagrees vouches for none of them —, the members after bytes skipped, at offsets the
   * skipped bytes may have shifted). Undefined when the stream was only cut (`truncated`: what it held is its own).
   * When the first damage vouches for every byte (zeros skipped between members), the first later one that does not
   * sets it on the same object, after onDamage (as `filler` grows): read it at the walk's end.
   */
  verifiedTo?: number;
}

/** The GZIP_DAMAGED warning of damage `d` (src/core/codes.ts): what the CLI and the viewer say of a damaged .gz. */
export function gzipDamageWarning(d: { compressedAt: number; decompressed: number; message: string; filler?: number; overrun?: number }): Warning {
  const filler = d.filler ?? 0;
  const overrun = d.overrun ?? 0;
  // Both counts add up over every damaged member after the first damage, whatever that one was (a bad trailer, say):
  // the aside names no member.
  const parts: string[] = [];
  if (overrun > 0) parts.push(`of which ${overrun} decoded from damaged data past a damaged member's length`);
  if (filler > 0 && overrun > 0) parts.push(`and ${filler} zero bytes in place of lost bytes or up to the next 8-byte offset, which keep the members after the damage at their offsets in the dump`);
  else if (filler > 0) parts.push(`and ${filler} zero bytes in place of damaged members' lost bytes, which keep the members after them at their offsets`);
  const aside = parts.length ? ` (${parts.join("; ")})` : "";
  return {
    code: "GZIP_DAMAGED", count: 1, offset: d.compressedAt, detail: d.decompressed,
    message: `the gzip stream is damaged at compressed byte ${d.compressedAt} (${d.message}): the ${d.decompressed} bytes of dump it still holds were converted${aside}`,
  };
}

/**
 * The GZIP_DAMAGED warning a host adds for damage `d` to a conversion's `warnings`, or null: none when they hold one
 * already, or when the file was simply cut inside a member's data and the dump itself reports TRUNCATED (what it held
 * was converted); a cut the dump cannot show (inside a member's trailer: the dump whole, its checksum unchecked) is
 * said. The CLI and the viewer both use it.
 */
export function gzipDamageFor(
  d: { compressedAt: number; decompressed: number; message: string; truncated?: boolean; filler?: number } | undefined, warnings: readonly Warning[],
): Warning | null {
  if (!d || warnings.some((w) => w.code === "GZIP_DAMAGED")) return null;
  if (d.truncated && warnings.some((w) => w.code === "TRUNCATED")) return null;
  return gzipDamageWarning(d);
}

/**
 * Adds the GZIP_DAMAGED warning of damage `d` to a conversion's `warnings` ({@link gzipDamageFor}'s rule), or, when
 * the core already lists it (the source said it before the output's end: ByteSource.hostWarnings), replaces that entry
 * with the host's (its words: where and why), as src/node/file_source.ts withSourceWarnings does. Returns `warnings`.
 */
export function addGzipDamage(
  warnings: Warning[], d: { compressedAt: number; decompressed: number; message: string; truncated?: boolean; filler?: number } | undefined,
): Warning[] {
  const i = warnings.findIndex((w) => w.code === "GZIP_DAMAGED");
  const w = gzipDamageFor(d, i < 0 ? warnings : warnings.filter((x) => x.code !== "GZIP_DAMAGED"));
  if (!w) return warnings;
  if (i < 0) warnings.push(w);
  else warnings[i] = w;
  return warnings;
}
