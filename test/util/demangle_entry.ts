// Test-only WebAssembly entry: exposes the demangler plus a bump allocator for the harness.
export { demangle } from "../../assembly/util/demangle";

/** Allocates `size` bytes of linear memory (stub runtime: never freed). */
export function alloc(size: usize): usize {
  return heap.alloc(size);
}
