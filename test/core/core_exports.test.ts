/**
 * The core's pointers read unsigned (src/core/core_exports.ts unsignedPointers, the imports in src/core/engine.ts):
 * a usize arrives in JavaScript as a signed i32, so past 2 GiB of core memory a pointer was negative and building a
 * view of the memory threw "Start offset -2058037512 is outside the bounds of the buffer" (a hostile dump that grew
 * the container's window to 4 GiB, before that growth was bounded).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { unsignedPointers, type CoreExports } from "../../src/core/core_exports.js";

test("pointer results past 2 GiB come out unsigned; counts and other members are the core's own", () => {
  const past2GiB = 0x8000_1000 | 0; // as the i32 a wasm usize of 2 GiB + 4 KiB arrives as: negative
  const memory = { buffer: new ArrayBuffer(8) };
  const raw = {
    memory,
    rt_input_ptr: () => past2GiB,
    rt_alloc: (n: number) => past2GiB + n,
    rt_step_name_ptr: (_i: number) => past2GiB,
    rt_fatal_code: () => -1,
  } as unknown as CoreExports;
  const x = unsignedPointers(raw);
  assert.is(x.rt_input_ptr(), 0x8000_1000);
  assert.is(x.rt_alloc(16), 0x8000_1010);
  assert.is(x.rt_step_name_ptr(3), 0x8000_1000);
  assert.is(x.rt_fatal_code(), -1, "not a pointer: unchanged");
  assert.is(x.memory, memory);
  assert.is(raw.rt_input_ptr(), past2GiB, "the core's own exports untouched");
});

test.run();
