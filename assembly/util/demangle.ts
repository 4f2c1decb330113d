/**
 * Itanium C++ ABI name demangler (https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling).
 *
 * Written from the ABI grammar; the output format follows GNU c++filt (binutils), which is the
 * oracle for our golden tests. Two passes: a recursive-descent parser builds a small node graph
 * in fixed scratch tables (allocated once, reused on every call), then a printer walks it.
 * The graph is needed because C++ declarator syntax prints out of order (`void (*)(int)`,
 * `int (&) [3]`) and because template parameters (`T_`) resolve at print time against the
 * template that is being printed (a substitution of `T_` can print differently in a lambda
 * signature and in a parameter list).
 *
 * Untrusted input: every read is bounds-checked, parse and print recursion are depth-limited,
 * print work is budgeted, and all tables have fixed capacities; any overflow means "not
 * demangled" (-1) so the caller keeps the mangled name.
 *
 * This file is the entry point ({@link demangle}, {@link demangleReset}); the parts are in demangle/:
 * nodes.ts (limits, scratch tables, node kinds), parse_state.ts (parser state and lexical primitives),
 * parse_encoding.ts, parse_name.ts, parse_type.ts, parse_expr.ts (the productions), print_state.ts (printer state,
 * output window), scope.ts (what template parameters mean while printing), print.ts and print_expr.ts (the printer).
 */
import { N_CLONE, initScratch } from "./demangle/nodes";
import * as P from "./demangle/parse_state";
import { isDigit, isLower, mk, peek, peek1 } from "./demangle/parse_state";
import { parseEncoding } from "./demangle/parse_encoding";
import * as O from "./demangle/print_state";
import * as S from "./demangle/scope";
import { pr } from "./demangle/print";

export { demangleReset } from "./demangle/nodes";

// ---------------------------------------------------------------------------------------------

/**
 * Demangles the Itanium-ABI name in [src, src+len) into [out, out+outCap).
 *
 * Returns the demangled byte length, or -1 when the input is not a mangled name (does not
 * start with `_Z`), cannot be demangled, or does not fit; the caller then keeps the original
 * name. The output format matches GNU c++filt (e.g. `void f<int>(int) [clone .cold]`).
 *
 * Input is untrusted: reads stay inside [src, src+len), writes inside [out, out+outCap),
 * recursion depth and printing work are bounded, and no memory is allocated per call (the
 * scratch tables are allocated once on first use).
 */
export function demangle(src: usize, len: u32, out: usize, outCap: u32): i32 {
  if (len < 3 || load<u8>(src) != 0x5f || load<u8>(src, 1) != 0x5a) return -1;
  initScratch();
  P.ip = src + 2;
  P.iend = src + <usize>len;
  P.failed = false;
  P.nNodes = 1; // node 0 means "none"
  P.nList = 0;
  P.nSubs = 0;
  P.stkTop = 0;
  P.pDepth = 0;
  P.inConv = 0;
  P.lastName = 0;

  let enc = parseEncoding();
  if (enc == 0 || P.failed) return -1;
  // GCC clone suffixes: .cold, .isra.0, .constprop.1, ...
  while (peek() == 0x2e) {
    const d = peek1();
    if (!(isLower(d) || d == 0x5f || isDigit(d))) break;
    const start = P.ip;
    P.ip += 2;
    while (true) {
      const e = peek();
      if (isLower(e) || e == 0x5f || isDigit(e)) P.ip++;
      else break;
    }
    while (peek() == 0x2e && isDigit(peek1())) {
      P.ip += 2;
      while (isDigit(peek())) P.ip++;
    }
    enc = mk(N_CLONE, enc, <i32>start, <i32>(P.ip - start));
    if (enc == 0) return -1;
  }
  if (P.ip != P.iend) return -1;

  O.outBase = out;
  O.oCap = outCap;
  O.outPos = 0;
  O.lastCh = 0;
  O.sepPending = 0;
  O.sepFlushes = 0;
  O.pendQ = 0;
  O.modDepth = 0;
  O.leak = false;
  O.curTmpl = 0;
  O.prDepth = 0;
  O.work = 0;
  O.workMax = outCap > 0x1000000 ? 0x40000000 : <i32>(outCap << 6) + 65536;
  O.tDepth = 0;
  O.packIdx = 0;
  O.inLambda = 0;
  S.scopeCount = 0;
  S.swapTop = 0;
  pr(enc);
  if (P.failed) return -1;
  return <i32>O.outPos;
}
