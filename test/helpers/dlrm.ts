/**
 * The eight ranks of the real DLRM run (../shared/data/real/kineto-cuda/dlrm_v100_8ranks.tar.gz, NCCL, world size 8)
 * as `.rawtrace` dumps built with the round-trip tool (src/tools/kineto_to_rawtrace.ts), with their original
 * Kineto traces.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { convertKineto, parseKinetoJson, type KinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";

const ARCHIVE = fileURLToPath(new URL("../../../shared/data/real/kineto-cuda/dlrm_v100_8ranks.tar.gz", import.meta.url));

/** Regular files of a (gzip) tar archive, by path (ustar/GNU headers). */
export function untar(gz: Uint8Array): Map<string, Buffer> {
  const b = gunzipSync(gz);
  const files = new Map<string, Buffer>();
  const field = (o: number, n: number) => b.subarray(o, o + n).toString("latin1").replace(/\0.*$/s, "");
  for (let off = 0; off + 512 <= b.length;) {
    const name = field(off, 100);
    if (!name) break;
    const size = parseInt(field(off + 124, 12).trim() || "0", 8);
    const type = field(off + 156, 1);
    const prefix = field(off + 345, 155);
    if (type === "0" || type === "") files.set(prefix ? `${prefix}/${name}` : name, b.subarray(off + 512, off + 512 + size));
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** One rank: its number, the original trace and the dump built from it. */
export interface DlrmRank {
  rank: number;
  original: KinetoTrace;
  bytes: Uint8Array;
}

let cached: DlrmRank[] | null = null;

/** The eight ranks, by rank. */
export function dlrmRanks(): DlrmRank[] {
  if (cached) return cached;
  const out: DlrmRank[] = [];
  for (const [p, text] of untar(readFileSync(ARCHIVE))) {
    if (!p.endsWith(".json")) continue;
    const original = parseKinetoJson(text.toString("utf8"));
    const rank = Number(/worker(\d+)/.exec(basename(p))?.[1] ?? original.distributedInfo?.rank);
    out.push({ rank, original, bytes: convertKineto(original, { layout: "cuda12" }).bytes });
  }
  cached = out.sort((a, b) => a.rank - b.rank);
  return cached;
}
