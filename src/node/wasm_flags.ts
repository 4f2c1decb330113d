/**
 * V8 settings for rawtrace's WebAssembly in Node: {@link wasmFlags} runs before each of our `.wasm` files is compiled
 * (src/node/wasm.ts, fast_gzip.ts, gzip_members.ts; a call, not a bare import, which the bundler would drop: the
 * package is marked free of side effects).
 *
 * `--no-wasm-code-gc`: when TurboFan code replaces a function's Liftoff code, V8 (Node 20's 11.3) frees the old code
 * by a "wasm code GC" that posts a task to every isolate using the module — from the background compile thread. A
 * worker isolate that is being torn down at that moment (a pool closing right after its last task, while the tier-up
 * it started still compiles) has no task handle any more, and the post dereferences null: the process dies of
 * SIGSEGV with nothing on stderr after its output is complete (uv_async_send(handle=0x0) ← WasmEngine::TriggerGC ←
 * AddPotentiallyDeadCode: twice in about 1,800 `merge --format xspace` runs of two small ranks, two runs at a time,
 * and once in a full test run; the crash of nodejs/node#56236, whose null check nodejs/node#57910 makes thread-safe
 * in later Node lines). Without the code GC that path is never taken; the cost is the
 * replaced Liftoff code staying allocated until its module is freed (121 KB for the core's hot functions).
 * V8 flags are process-wide: setting it affects other WebAssembly in the process alike, in that one way.
 */
import { setFlagsFromString } from "node:v8";

let set = false;

/** Sets the flags above, once per thread (a worker finds them set already when the main thread compiled first). */
export function wasmFlags(): void {
  if (set) return;
  setFlagsFromString("--no-wasm-code-gc");
  set = true;
}
