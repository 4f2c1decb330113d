/**
 * Command-line inputs → files: plain paths, directories (every `*.rawtrace` below them, recursively) and glob
 * patterns (`*`, `?`, `[abc]`, `**`; for shells that do not expand them, or quoted patterns). Results are in natural
 * order (rank2 before rank10) and without duplicates; a path that does not exist is kept, so that its conversion
 * fails alone with an IO error.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, extname, isAbsolute, join, resolve, sep } from "node:path";
import { dumpFileName } from "../core/dump_name.js";

const GLOB = /[*?[]/;

/** Natural-order comparison of paths (digit runs compare as numbers). */
export function naturalCompare(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
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
 * dump twice (and would write the same output), so only the plain one is taken.
 */
function walk(dir: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  const names = new Set(entries.map((e) => e.name));
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith(".rawtrace")) out.push(p);
    else if (e.name.endsWith(".rawtrace.gz") && !names.has(e.name.slice(0, -3))) out.push(p);
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

/** Files matching a glob pattern. */
function glob(pattern: string): string[] {
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
      walk(dir, out);
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
 * Expands command-line inputs to files. A glob that matches nothing is returned under `unmatched` (the caller
 * decides whether that is an error); a file named twice as an argument of its own is kept once and listed under
 * `repeated` (a folder or glob that also covers a named file is not: that overlap is what they are for).
 */
export function expandInputs(args: string[]): { files: string[]; unmatched: string[]; repeated: string[] } {
  const files: string[] = [];
  const unmatched: string[] = [];
  const repeated: string[] = [];
  const seen = new Set<string>();
  const named = new Set<string>();
  const add = (p: string, explicit = false) => {
    const key = resolve(p);
    if (explicit) {
      if (named.has(key)) repeated.push(p);
      named.add(key);
    }
    if (!seen.has(key)) {
      seen.add(key);
      files.push(p);
    }
  };
  for (const arg of args) {
    // `-` is standard input, as `batch --list -` reads its list there.
    const a = arg === "-" ? "/dev/stdin" : arg;
    if (isDir(a)) {
      const found: string[] = [];
      walk(a, found);
      found.sort(naturalCompare).forEach((p) => add(p));
      if (found.length === 0) unmatched.push(a);
    } else if (GLOB.test(a) && !exists(a)) {
      const found = glob(a).sort(naturalCompare);
      found.forEach((p) => add(p));
      if (found.length === 0) unmatched.push(a);
    } else add(a, true);
  }
  return { files, unmatched, repeated };
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
