/**
 * Argument checks of the Node API's exports: a value of the wrong type is a USAGE RawtraceError naming the function,
 * the argument and what was given (docs/node-api.md: errors are RawtraceErrors), thrown before anything is made —
 * not a TypeError from deep inside, and not a value taken silently as another (a NaN gap length finding no gap).
 */
import { RawtraceError, shownValue } from "../core/codes.js";

/** A path argument of the API `fn`: a non-empty string. */
export function needPath(fn: string, what: string, v: unknown): asserts v is string {
  if (typeof v === "string" && v !== "") return;
  throw new RawtraceError("USAGE", `${fn}: the ${what} must be a file path, not ${v === "" ? "an empty string" : v === null ? "null" : typeof v}`);
}

/** An array of paths (`inputs` of the batch functions). */
export function needPaths(fn: string, v: unknown): asserts v is string[] {
  if (Array.isArray(v) && v.every((i) => typeof i === "string")) return;
  throw new RawtraceError("USAGE", `${fn}: inputs must be an array of paths, not ${shownValue(v)}`);
}

/** An optional boolean option. */
export function needBool(fn: string, what: string, v: unknown): void {
  if (v === undefined || typeof v === "boolean") return;
  throw new RawtraceError("USAGE", `${fn}: ${what} must be true or false, not ${shownValue(v)}`);
}

/** An optional number of ns ≥ 0 (a length of time). */
export function needNs(fn: string, what: string, v: unknown): void {
  if (v === undefined || (typeof v === "number" && Number.isFinite(v) && v >= 0)) return;
  throw new RawtraceError("USAGE", `${fn}: ${what} must be a number of ns ≥ 0, not ${shownValue(v)}`);
}

/** An options argument: an object or nothing (undefined). */
export function needOptions(fn: string, v: unknown): void {
  if (v === undefined || (typeof v === "object" && v !== null && !Array.isArray(v))) return;
  throw new RawtraceError("USAGE", `${fn}: the options must be an object, not ${shownValue(v)}`);
}

/**
 * No `signal` option: the API has no AbortSignal (a conversion stops when `onProgress` throws, or when its pool is
 * closed). One given was ignored, and the conversion ran to its end.
 */
export function noSignal(fn: string, opts: unknown): void {
  if (typeof opts !== "object" || opts === null || (opts as { signal?: unknown }).signal === undefined) return;
  throw new RawtraceError("USAGE", `${fn}: there is no signal option (to stop a conversion, throw from onProgress or close its WorkerPool)`);
}
