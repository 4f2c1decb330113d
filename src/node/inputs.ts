/**
 * Command-line inputs → files: plain paths, directories (every `*.rawtrace` and `*.rawtrace.gz` below them,
 * recursively) and glob patterns (`*`, `?`, `[abc]`, `**`; for
 * shells that do not expand them, or quoted patterns). Results are in natural order (rank2 before rank10) and
 * without duplicates (one file under several names — a symlink, a hard link, another spelling of its path — is
 * taken once); a path that does not exist is kept, so that its conversion fails alone with an IO error. An
 * `x.rawtrace.gz` whose `x.rawtrace` is taken too — beside it in a directory, or among the files, however they were
 * given (a pattern, or the shell's expansion of one) — is the same dump twice and is left out.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, extname, isAbsolute, join, resolve, sep } from "node:path";
import { dumpFileName } from "../core/dump_name.js";

const GLOB = /[*?[]/;

/**
 * Natural-order comparison of paths (digit runs compare as numbers), ties broken by code units: `rank01` and `rank1`
 * compare equal numerically, and without the tie-break their order was the directory listing's — which alias of a file
 * is kept, the shard an input goes to and which of two colliding outputs is written could differ between two copies
 * of the same data.
 */
export function naturalCompare(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true }) || (a < b ? -1 : a > b ? 1 : 0);
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Every `*.rawtrace` and `*.rawtrace.gz` file below `dir`; an `x.rawtrace.gz` beside its `x.rawtrace` is the same
 * dump twice (and would write the same output), so only the plain one is taken and the other goes to `skipped`.
 */
function walk(dir: string, out: string[], skipped: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  const names = new Set(entries.map((e) => e.name));
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out, skipped);
    else if (e.name.endsWith(".rawtrace")) out.push(p);
    else if (e.name.endsWith(".rawtrace.gz")) (names.has(e.name.slice(0, -3)) ? skipped : out).push(p);
  }
}

/** A glob segment as a regular expression (no `/` inside). */
function segmentRegex(seg: string): RegExp {
  let re = "";
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i];
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = seg.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        let body = seg.slice(i + 1, end);
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += `[${body.replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Files matching a glob pattern (a trailing `dir/**` walks `dir`: what it leaves out goes to `skipped`). */
function glob(pattern: string, skipped: string[]): string[] {
  const abs = isAbsolute(pattern);
  const parts = pattern.split(/[\\/]+/).filter((p, i) => p !== "" || i === 0);
  let bases = [abs ? sep : "."];
  if (abs) parts.shift();
  // Leading plain segments are a directory to start from.
  while (parts.length > 1 && !GLOB.test(parts[0])) bases = [join(bases[0], parts.shift()!)];
  const out: string[] = [];
  const step = (dir: string, i: number) => {
    if (i === parts.length) return;
    const seg = parts[i];
    const last = i === parts.length - 1;
    if (seg === "**" && last) {
      // `dir/**`: everything below, as a folder given alone expands (its dumps, not every file).
      walk(dir, out, skipped);
      return;
    }
    if (seg === "**") {
      step(dir, i + 1); // zero directories
      for (const e of safeReaddir(dir)) if (e.isDirectory() && !e.name.startsWith(".")) step(join(dir, e.name), i);
      return;
    }
    if (!GLOB.test(seg)) {
      const p = join(dir, seg);
      if (last) {
        if (exists(p)) out.push(p);
      } else if (isDir(p)) step(p, i + 1);
      return;
    }
    const re = segmentRegex(seg);
    for (const e of safeReaddir(dir)) {
      if (!re.test(e.name) || (e.name.startsWith(".") && !seg.startsWith("."))) continue;
      const p = join(dir, e.name);
      if (last) {
        if (!e.isDirectory()) out.push(p);
      } else if (e.isDirectory()) step(p, i + 1);
    }
  };
  for (const b of bases) step(b, 0);
  return out;
}

function safeReaddir(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * The keys of the file `p` names, for telling inputs apart: its resolved path and, where it can be stat'ed, its
 * device and inode (symlinks followed, so a symlink, a hard link and every spelling of its path share one). Two paths
 * that share a key are one file; a path that cannot be stat'ed (missing, a symlink loop) is told by its path alone.
 */
export function fileKeys(p: string): string[] {
  const keys = [resolve(p)];
  try {
    const st = statSync(p, { bigint: true }); // bigint: 64-bit inode numbers are not all exact as doubles
    if (st.ino !== 0n) keys.push(`${st.dev}:${st.ino}`); // no inode number (some file systems): the path only
  } catch {
    // its own read reports why
  }
  return keys;
}

/** Files met so far, told apart by {@link fileKeys}. */
export class FilesMet {
  private readonly first = new Map<string, string>();

  /** The path under which `p`'s file was met first; undefined when it is new (then `p` is that path). */
  meet(p: string): string | undefined {
    const keys = fileKeys(p);
    const first = keys.map((k) => this.first.get(k)).find((f) => f !== undefined);
    for (const k of keys) if (!this.first.has(k)) this.first.set(k, first ?? p);
    return first;
  }
}

/** What {@link expandInputs} found. */
export interface ExpandedInputs {
  /** The files, each once, in the order of the arguments (a directory's or a pattern's in natural order). */
  files: string[];
  /** Directories without dumps and globs that match nothing (the caller decides whether that is an error). */
  unmatched: string[];
  /** Files named twice as arguments of their own (by any name of the file), each kept once. */
  repeated: string[];
  /** Paths left out because their file was already taken under another path (`of`): a symlink or a hard link. */
  aliases: Array<{ path: string; of: string }>;
  /**
   * `x.rawtrace.gz` files left out because `x.rawtrace` is beside them in a directory, or among the files (the same
   * dump twice: converted twice, to the same output; merged, its events twice).
   */
  skipped: string[];
}

/**
 * Expands command-line inputs to files. A file is taken once, told by its path or its device and inode
 * ({@link fileKeys}): a file named twice as an argument of its own is listed under `repeated` (a folder or glob that
 * also covers a named file is not: that overlap is what they are for), and one met again under another path (a
 * symlink, a hard link), however it was given, under `aliases`.
 */
export function expandInputs(args: string[]): ExpandedInputs {
  const out: ExpandedInputs = { files: [], unmatched: [], repeated: [], aliases: [], skipped: [] };
  const taken = new FilesMet();
  const named = new FilesMet();
  const paths = new Set<string>(); // resolved paths met: a path met again is no alias, only a repeat
  const add = (p: string, explicit = false) => {
    if (explicit && named.meet(p) !== undefined) out.repeated.push(p);
    const first = taken.meet(p);
    if (first === undefined) out.files.push(p);
    else if (!paths.has(resolve(p))) out.aliases.push({ path: p, of: first });
    paths.add(resolve(p));
  };
  for (const arg of args) {
    // `-` is standard input, as `batch --list -` reads its list there.
    const a = arg === "-" ? "/dev/stdin" : arg;
    if (isDir(a)) {
      const found: string[] = [];
      walk(a, found, out.skipped);
      found.sort(naturalCompare).forEach((p) => add(p));
      if (found.length === 0) out.unmatched.push(a);
    } else if (GLOB.test(a) && !exists(a)) {
      const found = glob(a, out.skipped).sort(naturalCompare);
      found.forEach((p) => add(p));
      if (found.length === 0) out.unmatched.push(a);
    } else add(a, true);
  }
  // The same dump twice, however both came (a glob, the shell's expansion of `dir/*`, a folder and a named file):
  // before 2026-12-03 only a folder's walk left the .gz out, and a merge of `dir/*` had that rank twice.
  const plain = new Set(out.files.filter((f) => f.endsWith(".rawtrace")).map((f) => resolve(f)));
  const twice = new Set(out.files.filter((f) => f.endsWith(".rawtrace.gz") && plain.has(resolve(f.slice(0, -3)))));
  if (twice.size > 0) {
    out.files = out.files.filter((f) => !twice.has(f));
    out.skipped.push(...twice);
  }
  out.skipped = [...new Set(out.skipped)].sort(naturalCompare); // a folder given twice, or inside another given
  return out;
}

/** The dump at `path`'s name as traces show it: {@link dumpFileName} of its base name. */
export function dumpName(path: string): string {
  return dumpFileName(basename(path));
}

/** The input's name without its extension (and a compressed dump's without `.rawtrace.gz`): what output names start with. */
export function stemOf(input: string): string {
  const b = dumpName(input);
  return basename(b, extname(b));
}
