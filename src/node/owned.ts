/**
 * What this process created and must not leave behind: temporaries and lock files are removed on failure, on
 * SIGINT/SIGTERM (then the process exits 130/143 when nobody else listens for the signal) and at exit; folders it
 * made for outputs are removed on a signal when still empty. Nothing else is ever removed (src/node/output.ts).
 */
import { rmdirSync, unlinkSync } from "node:fs";
import { isMainThread } from "node:worker_threads";

/**
 * Files this process created and has not published (temporaries, locks), each with how the exit and signal cleanup
 * removes it: unlinked by path, or by its own remover (a lock: only while it is still this process's, src/node/
 * output_lock.ts — another run may have taken it over while this one stalled).
 */
const owned = new Map<string, (() => void) | null>();
/** Folders this process made (makeDir), in the order made: removed when a signal ends the process and they are still empty. */
const ownedDirs: string[] = [];
let hooked = false;

function cleanupOwned(): void {
  for (const [p, remove] of owned) {
    try {
      if (remove) remove();
      else unlinkSync(p);
    } catch {
      // already gone
    }
  }
  owned.clear();
}

/**
 * Removes the folders makeDir made that are still empty, deepest first (rmdir removes only an empty folder, so one
 * that received an output, or anything else, stays): when a signal ends the process, and at the end of a
 * command-line run (src/cli.ts: the whole process is one run, so these are the folders of outputs that failed, such as
 * an XSpace log directory's `plugins/profile/` for an input that was not a dump). Not at a normal exit of a library
 * host, or in a host that handles the signal and goes on: another run may be about to write into them.
 */
export function removeFoldersLeftEmpty(): void {
  for (const d of ownedDirs.splice(0).reverse()) {
    try {
      rmdirSync(d);
    } catch {
      // not empty, or gone
    }
  }
}

function onSignal(sig: "SIGINT" | "SIGTERM"): void {
  // Only when nobody else handles the signal: a library must not decide that its host exits, nor pull the files
  // from under the conversions of a host that handles it and goes on (a graceful shutdown that lets them finish).
  // Such a host that then exits runs the exit hook, which removes the temporaries and locks.
  if (process.listenerCount(sig) > 1) return;
  cleanupOwned();
  removeFoldersLeftEmpty();
  // Ended by the signal itself, its default action restored (a shell reports 130 / 143): process.exit would wait
  // for a worker thread blocked in a read (a conversion worker copying a FIFO that never ends) and never return.
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  process.kill(process.pid, sig);
  // Where the signal cannot end the process (its default action ignored by the parent): the exit code instead.
  setTimeout(() => process.exit(sig === "SIGINT" ? 130 : 143), 1000);
}

/**
 * Registers a file this process created and must remove unless it is published; `remove`: how the exit and signal
 * cleanup removes it (default: unlinked by path).
 */
export function own(path: string, remove?: () => void): void {
  owned.set(path, remove ?? null);
  hook();
}

/** Registers a folder this process made: removed when a signal ends the process and it is still empty. */
export function ownDir(path: string): void {
  ownedDirs.push(path);
  hook();
}

/** Installs, once and in the main thread, the SIGINT/SIGTERM and exit handlers that clean up what this process owns. */
function hook(): void {
  if (hooked || !isMainThread) return;
  hooked = true;
  // First among the listeners: a host's process.once() listener is removed before it is called, so had ours run
  // after it, it would have found itself alone, taken the signal as unhandled and ended the host.
  process.prependListener("SIGINT", onSignal);
  process.prependListener("SIGTERM", onSignal);
  process.on("exit", cleanupOwned);
}

/**
 * Runs `fn`, a loop that blocks the main thread (reading a stream to its end), with the default SIGINT/SIGTERM
 * action in place of this module's handlers: a handler cannot run while the thread blocks, so a stream that never
 * ends would leave the process killable by SIGKILL only. A signal then ends the process at once (exit 130 / 143 as
 * the shell reports it); files this process owns at that moment stay behind.
 */
export function withDefaultSignals<T>(fn: () => T): T {
  if (!hooked) return fn();
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  try {
    return fn();
  } finally {
    process.prependListener("SIGINT", onSignal);
    process.prependListener("SIGTERM", onSignal);
  }
}

/** Forgets `path` (published or removed). */
export function disown(path: string): void {
  owned.delete(path);
}

/** Removes `path` if this process created it (never anything else). */
export function removeOwned(path: string): void {
  if (!owned.has(path)) return;
  owned.delete(path);
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
