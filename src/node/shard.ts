/**
 * Sharding a batch over machines (`rawtrace batch --shard I/N`, docs/cluster.md): every node expands the same
 * inputs and keeps the files whose shard is its own, so a cluster scheduler (a Kubernetes Indexed Job, a Slurm job
 * array) runs N independent processes that together convert every input exactly once, with no coordinator.
 *
 * A file's shard is `fnv1a32(path relative to the common root) mod N`, shards numbered from 0 (as Kubernetes'
 * JOB_COMPLETION_INDEX). The key is the path below the deepest directory that holds every input (resolved,
 * `/`-separated), so it does not depend on the node's working directory or mount point, nor on the order the inputs
 * were given; a file added under the same root moves no other file to another shard. The cost against round-robin
 * over the sorted list: shard sizes are only balanced on average (thousands of files: within a few per cent).
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { RawtraceError } from "../core/codes.js";
import { stemOf } from "./inputs.js";

/** Shard `index` of `count` (0 ≤ index < count). */
export interface Shard {
  index: number;
  count: number;
}

/** Largest shard count accepted (a larger one is surely a typo). */
export const MAX_SHARDS = 1 << 20;

/**
 * Parses `I/N` (0-based I, 0 ≤ I < N, 1 ≤ N ≤ {@link MAX_SHARDS}). Anything else is a USAGE error (exit 2) naming
 * the value.
 */
export function parseShard(text: string): Shard {
  const m = /^(\d{1,7})\/(\d{1,7})$/.exec(text.trim());
  if (!m) throw new RawtraceError("USAGE", `--shard must be I/N (shard I of N, I from 0), not '${text}'`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) {
    throw new RawtraceError("USAGE", `--shard ${text}: the shard count N must be 1 to ${MAX_SHARDS}`);
  }
  if (index >= count) {
    throw new RawtraceError("USAGE", `--shard ${text}: shards are numbered 0 to ${count - 1} (I from 0, as JOB_COMPLETION_INDEX)`);
  }
  return { index, count };
}

/** FNV-1a, 32 bits, of the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(text, "utf8")) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** The deepest directory that holds every one of `files` (resolved). */
export function commonRoot(files: string[]): string {
  if (files.length === 0) return resolve(".");
  let root = dirname(resolve(files[0])).split(sep);
  for (const f of files.slice(1)) {
    const parts = dirname(resolve(f)).split(sep);
    let i = 0;
    while (i < root.length && i < parts.length && root[i] === parts[i]) i++;
    root = root.slice(0, i);
  }
  return root.join(sep) || sep;
}

/** The shard key of each file: its path relative to the common root, `/`-separated. */
export function shardKeys(files: string[]): string[] {
  const root = commonRoot(files);
  return files.map((f) => relative(root, resolve(f)).split(sep).join("/"));
}

/** The files of shard `s`, in their given order. */
export function selectShard(files: string[], s: Shard): string[] {
  if (s.count === 1) return files.slice();
  const keys = shardKeys(files);
  return files.filter((_, i) => fnv1a32(keys[i]) % s.count === s.index);
}

/**
 * The inputs named by a list file, one a line (`-`: standard input). Blank lines and lines starting with `#` are
 * skipped; surrounding white space is trimmed; a line may be a file, a directory or a glob, as on the command line.
 * Relative paths are relative to the working directory (as the command line's). An unreadable list is an IO error.
 */
export function readList(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (e) {
    throw new RawtraceError("IO", `--list ${path}: cannot read the list (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, path);
  }
  if (text.includes("\0")) throw new RawtraceError("USAGE", `--list ${path}: a NUL byte: expected one path a line (text)`, path);
  return text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
}

/**
 * Fails (USAGE) when two of `files` would write the same default output in `outDir`: sharded, they could land on
 * different nodes and race for one name, so every shard refuses the whole list before any work.
 */
export function checkOutputNames(files: string[], outDir: string | undefined): void {
  const seen = new Map<string, string>();
  for (const f of files) {
    const key = join(resolve(outDir ?? dirname(f)), stemOf(f));
    const prev = seen.get(key);
    if (prev !== undefined) {
      throw new RawtraceError("USAGE", `${prev} and ${f} would write the same output ${key}.*: ` +
        "give them different names, or convert them with different --out-dir", f);
    }
    seen.set(key, f);
  }
}
