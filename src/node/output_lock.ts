/**
 * `<target>.lock`: claims a regular output while this process writes it (src/node/output.ts, docs/cluster.md
 * "Retries after a kill"). The lock is created exclusively and holds `pid host`, then the temporary's name. Its
 * holder refreshes its modification time every LOCK_REFRESH_MS; a lock whose process is gone (same host), or that
 * has not been refreshed for LOCK_STALE_MS (any host), is taken over and the temporary it names removed. A process
 * removes a lock only while it still names that process.
 *
 * Ages are read on the file system's clock, never compared with this host's: a lock shared between hosts (NFS, a
 * cluster's scratch) carries times the file server stamps, and two hosts' clocks may differ by minutes. The holder
 * stamps its refreshes with the file system's time (this host's clock plus the offset seen when the lock was created);
 * a run that finds a lock measures "now" by creating a probe file beside it.
 */
import { closeSync, constants as fc, existsSync, fstatSync, linkSync, openSync, readdirSync, readSync, renameSync, unlinkSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { RawtraceError } from "../core/codes.js";
import { CREATE_EXCL, createTemp, ioError } from "./output.js";
import { disown, own, removeOwned } from "./owned.js";

/** Adds the temporary's name to this process's lock file: a run that takes the lock over as stale removes it. */
export function nameTemp(lockPath: string, tmp: string): void {
  try {
    writeFileSync(lockPath, lockLine(tmp));
  } catch {
    // the lock still claims the output; only the orphan's removal is lost
  }
}

/** A lock file's line, inode and modification time, read through one descriptor (so they are one file's); null when none. */
function lockState(lock: string): { line: string; ino: number; mtimeMs: number } | null {
  try {
    const fd = openSync(lock, fc.O_RDONLY | fc.O_NOFOLLOW);
    try {
      const b = Buffer.alloc(256);
      const line = b.subarray(0, readSync(fd, b, 0, b.length, 0)).toString("utf8").trim();
      const st = fstatSync(fd);
      return { line, ino: st.ino, mtimeMs: st.mtimeMs };
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

/**
 * Removes the lock at `path` only if it is still the one `keep` says it is (by inode or line), exclusively: it is
 * renamed aside first (one process wins a rename), then dropped when it is that lock, or put back (a link, which never
 * replaces a lock made meanwhile) when another run's lock was there by then. Unlinking by path after a check left a
 * gap in which another run could replace the lock and lose it: two retries taking over one stale lock both held the
 * output (2 of 30 trials of 8 processes at once). Returns true when it was removed.
 */
function removeLockIf(path: string, keep: (st: { line: string; ino: number }) => boolean): boolean {
  const aside = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.aside`;
  try {
    renameSync(path, aside);
  } catch {
    return false; // gone: another run took it over, or its holder removed it
  }
  const st = lockState(aside);
  if (st && keep(st)) {
    try {
      unlinkSync(aside);
    } catch {
      // gone
    }
    return true;
  }
  try {
    linkSync(aside, path);
  } catch {
    // a newer lock is there: it stays
  }
  try {
    unlinkSync(aside);
  } catch {
    // gone
  }
  return false;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A lock's holder refreshes its modification time every LOCK_REFRESH_MS while it writes; a lock not refreshed for
 * LOCK_STALE_MS is stale whoever holds it (a process killed with SIGKILL, its host or pod gone: another host cannot
 * ask whether that pid still runs). Two minutes: a live holder's refresh is seen through NFS attribute caching
 * (`acregmax`, 60 s by default), with room for a refresh that comes late.
 */
export const LOCK_REFRESH_MS = 15_000;
export const LOCK_STALE_MS = 120_000;

/** Locks this process holds, each with the file system's clock minus this host's (ms) seen when it was created. */
const heldLocks = new Map<string, number>();
let refresher: ReturnType<typeof setInterval> | undefined;
/** When (this host's clock, ms) the held locks were last refreshed. */
let refreshedAt = 0;

/**
 * Refreshes the modification time of every lock this process holds, on the file system's clock, when LOCK_REFRESH_MS
 * have passed since the last refresh (or always, with `force`). The timer calls it; a long synchronous step that
 * keeps the timer from running (an XSpace merge's join of a big host's parts) calls it as it goes.
 */
export function refreshHeldLocks(force = false): void {
  const now = Date.now();
  if (!force && now - refreshedAt < LOCK_REFRESH_MS) return;
  refreshedAt = now;
  for (const [p, offset] of heldLocks) {
    const t = (now + offset) / 1000;
    try {
      utimesSync(p, t, t);
    } catch {
      // removed meanwhile
    }
  }
}

function holdLock(path: string, offsetMs: number): void {
  heldLocks.set(path, offsetMs);
  if (!refresher) {
    refreshedAt = Date.now();
    refresher = setInterval(() => refreshHeldLocks(true), LOCK_REFRESH_MS);
    refresher.unref?.();
  }
}

/** Removes a lock this process just took (its claim failed). */
export function dropLock(path: string): void {
  releaseLock(path);
  removeOwned(path);
}

function releaseLock(path: string): void {
  heldLocks.delete(path);
  if (heldLocks.size === 0 && refresher) {
    clearInterval(refresher);
    refresher = undefined;
  }
}

/**
 * Releases the lock at `path` that this process took, and removes it only while it is still this process's own line
 * ({@link ownLine}: `12 node1` is not `12 node10`): a stale one taken over meanwhile is its new holder's. Exclusively
 * (removeLockIf), not unlinked by path after a look. The exit and signal cleanup removes a lock by the same rule.
 */
export function unlock(path: string): void {
  releaseLock(path);
  removeLockIf(path, (now) => ownLine(now.line));
  disown(path);
}

/**
 * Whether a lock file's `line` is this process's: `pid host`, with or without its temporary's name (a process holds
 * one lock per output, so the pid and host tell).
 */
function ownLine(line: string): boolean {
  const mine = lockLine().trim();
  const l = line.trim();
  return l === mine || l.startsWith(`${mine} `);
}

/** This process's line in its lock files: `pid host`, then the temporary's name once it exists. */
function lockLine(tmp?: string): string {
  return `${process.pid} ${hostname()}${tmp ? ` ${basename(tmp)}` : ""}\n`;
}

/**
 * The file system's present time (ms) in the folder of `near`, as it stamps files there: a probe file is created
 * beside it, written, read back and removed. Null when none can be made there.
 */
function fsNow(near: string): number | null {
  let t: { path: string; fd: number };
  try {
    t = createTemp(near, "clock");
  } catch {
    return null;
  }
  try {
    writeSync(t.fd, "t"); // a write: stamped by the file system (the file server's clock on NFS)
    return fstatSync(t.fd).mtimeMs;
  } catch {
    return null;
  } finally {
    closeSync(t.fd);
    removeOwned(t.path);
  }
}

/**
 * Whether the lock of `target` (its modification time, and the pid and host of its line) is stale: its process is
 * gone (same host), or it has not been refreshed for LOCK_STALE_MS (any host), measured on the file system's clock
 * (this host's only where no probe can be made beside it).
 */
function staleLock(mtimeMs: number, pid: string | undefined, host: string | undefined, target: string): boolean {
  if (host === hostname() && Number(pid) > 0 && !alive(Number(pid))) return true;
  return (fsNow(target) ?? Date.now()) - mtimeMs > LOCK_STALE_MS;
}

/** Whether `f` is `.<base>.<16 hex>.<ext>`: a temporary (`tmp`) or a merge's rank part (`part`) of output `base`. */
function siblingOf(base: string, f: string, ext: string): boolean {
  return f.length === base.length + 19 + ext.length && f.startsWith(`.${base}.`) && f.endsWith(`.${ext}`) &&
    /^[0-9a-f]{16}$/.test(f.slice(base.length + 2, base.length + 18));
}

/**
 * Removes the temporary a stale lock names (`.<name>.<16 hex>.tmp` beside `target`, the only kind it can name):
 * the holder's unfinished output, left by a process that was killed.
 */
function removeOrphan(target: string, tmpName: string | undefined): void {
  if (!tmpName || tmpName !== basename(tmpName) || !siblingOf(basename(target), tmpName, "tmp")) return;
  try {
    unlinkSync(join(dirname(target), tmpName));
  } catch {
    // gone
  }
}

/**
 * Removes the XSpace merge's rank parts of `target` (`.<name>.<16 hex>.part` beside it), which a merge makes only
 * while it holds `target`'s lock: called once this process holds that lock, after finding a stale one, so they
 * are the killed holder's (a kill left them for good: up to `jobs` + min(`jobs`, 8), each up to a rank's whole
 * XSpace). Not before the new lock is ours: another run may take the lock in between and make parts of its own.
 */
function removeOrphanParts(target: string): void {
  const base = basename(target);
  const dir = dirname(target);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return; // unreadable folder: nothing to find
  }
  for (const f of names) {
    if (!siblingOf(base, f, "part")) continue;
    try {
      unlinkSync(join(dir, f));
    } catch {
      // gone
    }
  }
}

/** Claims `target` with `<target>.lock` (see the module comment). Returns the lock path. */
export function lock(target: string, shown: string): string {
  const path = `${target}.lock`;
  // A stale lock seen: its holder's temporary and parts go once the new lock is ours, whichever run removed it (a
  // run that lost that race to this one would hold no lock, and leave them for good).
  let tookOver = false;
  let orphanTmp: string | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, CREATE_EXCL, 0o644);
      // At exit or on a signal, removed only while it is still this process's: a run that stalled past
      // LOCK_STALE_MS (stopped with Ctrl-Z) may find its lock taken over by a retry, and unlinking it by path then
      // removed the retry's lock (before 2026-12-03), letting a third writer in.
      own(path, () => removeLockIf(path, (now) => ownLine(now.line)));
      let stamped: number;
      try {
        writeSync(fd, lockLine());
        stamped = fstatSync(fd).mtimeMs; // the file system's clock, now
      } finally {
        closeSync(fd);
      }
      holdLock(path, stamped - Date.now());
      if (tookOver) {
        removeOrphan(target, orphanTmp);
        removeOrphanParts(target);
      }
      return path;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" && !existsSync(dirname(target))) {
        // The usual cause, said plainly: a file output's folder is not made for it (as cp or gcc -o).
        throw new RawtraceError("IO", `${shown}: cannot create: the folder ${dirname(target)} does not exist (make it first: mkdir -p)`, shown);
      }
      if (code !== "EEXIST") throw ioError(shown, e, `cannot create its lock file ${path}`);
      const st = lockState(path);
      const info = st?.line ?? "";
      const [pid, host, tmpName] = info.split(" ");
      if (attempt === 0 && st && staleLock(st.mtimeMs, pid, host, target)) {
        // Its process is gone, or it has not refreshed it for LOCK_STALE_MS: taken over — that very lock only (by
        // inode), whichever of several runs gets there first; the others then find the winner's and say EXISTS.
        removeLockIf(path, (now) => now.ino === st.ino);
        tookOver = true;
        orphanTmp = tmpName;
        continue;
      }
      const who = /^\d+$/.test(pid ?? "") ? `rawtrace pid ${pid}${host ? ` on ${host}` : ""}` : "another program";
      throw new RawtraceError("EXISTS", `${shown}: being written by ${who} (lock file ${path}): not writing it at the same time; a lock not refreshed for ${LOCK_STALE_MS / 1000} s is taken over, or remove the lock file if that run is gone`, shown);
    }
  }
}
