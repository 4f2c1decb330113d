/**
 * Loads the compiled core in Node: next to the bundled CLI (dist/node/rawtrace.wasm) or from the build folder when
 * running from source (build/rawtrace.wasm).
 */
import { wasmFlags } from "./wasm_flags.js";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Engine } from "../core/engine.js";
import { RawtraceError } from "../core/codes.js";
import { tieredSpill } from "./spill.js";

let compiled: WebAssembly.Module | null = null;

/** Path of the core's .wasm file. */
export function wasmPath(): string {
  const candidates = [
    new URL("./rawtrace.wasm", import.meta.url),
    new URL("../../build/rawtrace.wasm", import.meta.url),
  ].map((u) => fileURLToPath(u));
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new RawtraceError("NO_CORE", `rawtrace core not built: none of ${candidates.join(", ")} exists (run npm run build)`);
  }
  return found;
}

/** A macrotask turn of this thread's event loop: signal handlers, timers and I/O callbacks run in it. */
export const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Compiles the core once per process and returns a new Engine instance, spilling XSpace's records to memory up to
 * 16 MiB and to a temporary file beyond (src/node/spill.ts tieredSpill). The engine gives the event loop a turn
 * after each input window (`windowYield`: 4 MiB, or one chunk where a chunk is larger), so the calls that run on
 * the caller's thread (`convertFile`, `infoFile`, `stats`, …) leave its timers, servers and signal handlers running;
 * a pool's worker thread sets it to null (nothing else runs there).
 */
export async function createEngine(): Promise<Engine> {
  if (!compiled) {
    wasmFlags();
    compiled = new WebAssembly.Module(readFileSync(wasmPath()));
  }
  const engine = await Engine.create(compiled);
  engine.spillFactory = () => tieredSpill();
  engine.windowYield = turn;
  return engine;
}
