/**
 * The printer's state and its output window: where the demangled name is written and how much work and depth are
 * left, the template scope and pack element in effect, pending qualifiers and declarators, lazily written list
 * separators; and the primitives that append to the window (characters, static strings, input bytes, numbers,
 * qualifier words, builtin type names). Other files assign this state through a namespace import
 * (`import * as O from "./print_state"`, `O.tDepth = lvl`).
 */
import { QC_CONST, QC_NOEXCEPT, QC_RESTRICT, QC_VOLATILE, Q_LREF, Q_RREF, qCount } from "./nodes";
import * as P from "./parse_state";

// ---------------------------------------------------------------------------------------------
// Printer state

/** Start of the output window. */
export let outBase: usize = 0;
/** Capacity of the output window in bytes. */
export let oCap: u32 = 0;
/** Bytes written to the output window. */
export let outPos: u32 = 0;
/** Print recursion depth (at most MAX_PRINT_DEPTH). */
export let prDepth: i32 = 0;
/** Print steps taken so far (see {@link workMax}). */
export let work: i32 = 0;
/** Print steps allowed for this name (bounds hostile inputs whose printing would blow up). */
export let workMax: i32 = 0;
/** number of template-argument scopes in effect */
export let tDepth: i32 = 0;
/** element of an argument pack being printed by a pack expansion */
export let packIdx: i32 = 0;
/** printing a lambda signature: template params print as auto:N */
export let inLambda: i32 = 0;
/** The last character appended (see {@link lastc}). */
export let lastCh: i32 = 0;
/** qualifiers of an enclosing N_QUAL still to be printed */
export let pendQ: i32 = 0;
// c++filt keeps enclosing pointer/reference/cv declarators pending while it prints a lambda's
// signature, and an array or function declarator in there then prints them as its own
// (`{lambda(auto:1 (&&) [auto:2])#2}` for a reference to the closure). That output is wrong,
// so we refuse (-1) instead of imitating it: modDepth counts pending declarators, `leak`
// marks a lambda signature printed under some.
/** Pending declarators around what is being printed. */
export let modDepth: i32 = 0;
/** A lambda signature is being printed under pending declarators. */
export let leak: bool = false;
/** argument list of the innermost template being printed */
export let curTmpl: i32 = 0;
/** scope level of the node returned by resolve() */
export let rLvl: i32 = 0;

// List separators are emitted lazily: c++filt removes the ", " before trailing elements that
// print nothing (empty packs) but keeps it before inner ones (`f(int, , int)`). Pending
// separators are written only once something follows, so a retracted one can never make
// an otherwise fitting name overflow the window.
/** Separators (", ") owed before whatever is appended next. */
export let sepPending: i32 = 0;
/** Times pending separators were written (lets a list tell whether its own were). */
export let sepFlushes: i32 = 0;

function flushSep(): void {
  const n = sepPending;
  sepPending = 0;
  sepFlushes++;
  for (let i = 0; i < n; i++) {
    putc(0x2c);
    putc(0x20);
  }
}

/** Appends character `c` (fails when the window is full). */
export function putc(c: i32): void {
  if (sepPending != 0) flushSep();
  if (outPos >= oCap) {
    P.failed = true;
    return;
  }
  store<u8>(outBase + <usize>outPos, <u8>c);
  outPos++;
  lastCh = c;
}

/**
 * c++filt decides spacing on the last character *appended*, which is still the space of a
 * retracted ", " (so `A<B<int>, pack{}>` prints `A<B<int>>`); mirror that.
 */
@inline export function lastc(): i32 {
  return sepPending != 0 ? 0x20 : lastCh;
}

/** Appends an ASCII string literal (stored as UTF-16 in static data; no allocation). */
export function emitS(s: string): void {
  if (sepPending != 0) flushSep();
  const n = <u32>s.length;
  if (n == 0) return;
  if (<u64>outPos + <u64>n > <u64>oCap) {
    P.failed = true;
    return;
  }
  const src = changetype<usize>(s);
  const dst = outBase + <usize>outPos;
  for (let i: usize = 0; i < <usize>n; i++) store<u8>(dst + i, <u8>load<u16>(src + (i << 1)));
  outPos += n;
  lastCh = <i32>load<u16>(src + (<usize>(n - 1) << 1));
}

/** Appends the `n` bytes at `p` (input bytes: names, numbers); fails when they do not fit. */
export function emitBytes(p: usize, n: i32): void {
  if (sepPending != 0) flushSep();
  if (<u64>outPos + <u64>n > <u64>oCap) {
    P.failed = true;
    return;
  }
  if (n <= 0) return;
  memory.copy(outBase + <usize>outPos, p, <usize>n);
  outPos += <u32>n;
  lastCh = <i32>load<u8>(p + <usize>n - 1);
}

/** Appends non-negative `v` in decimal. */
export function emitNum(v: i32): void {
  if (v >= 10) emitNum(v / 10);
  putc(48 + (v % 10));
}

/** `prefix` <v> `}`: a numbered entity (`{unnamed type#2}`, `{parm#1}`, `{lambda(...)#1}`). */
@inline export function emitNumbered(prefix: string, v: i32): void {
  emitS(prefix);
  emitNum(v);
  putc(0x7d);
}

/**
 * Prints a qualifier word innermost (last mangled) first. With `dedupe`, like c++filt for
 * types, a qualifier already pending from an enclosing one (`skip`, a qSet mask) or repeated
 * further out prints once.
 */
export function emitQuals(q: i32, dedupe: bool, skip: i32): void {
  const n = qCount(q);
  for (let i = n - 1; i >= 0; i--) {
    const code = (q >>> (2 + 3 * i)) & 7;
    if (dedupe && code <= QC_RESTRICT) {
      if ((skip & (1 << code)) != 0) continue;
      let outer = false;
      for (let j = 0; j < i; j++) if (((q >>> (2 + 3 * j)) & 7) == code) outer = true;
      if (outer) continue;
    }
    if (code == QC_CONST) emitS(" const");
    else if (code == QC_VOLATILE) emitS(" volatile");
    else if (code == QC_RESTRICT) emitS(" restrict");
    else if (code == QC_NOEXCEPT) emitS(" noexcept");
    else emitS(" transaction_safe");
  }
  const ref = q & 3;
  if (ref == Q_LREF) emitS(" &");
  else if (ref == Q_RREF) emitS(" &&");
}

/** The name of builtin type `code` (N_BUILTIN field a: the mangled letter, or 256 + the letter after D). */
export function builtinText(code: i32): string {
  switch (code) {
    case 0x76: return "void";
    case 0x77: return "wchar_t";
    case 0x62: return "bool";
    case 0x63: return "char";
    case 0x61: return "signed char";
    case 0x68: return "unsigned char";
    case 0x73: return "short";
    case 0x74: return "unsigned short";
    case 0x69: return "int";
    case 0x6a: return "unsigned int";
    case 0x6c: return "long";
    case 0x6d: return "unsigned long";
    case 0x78: return "long long";
    case 0x79: return "unsigned long long";
    case 0x6e: return "__int128";
    case 0x6f: return "unsigned __int128";
    case 0x66: return "float";
    case 0x64: return "double";
    case 0x65: return "long double";
    case 0x67: return "__float128";
    case 0x7a: return "...";
    case 256 + 0x68: return "half";
    case 256 + 0x6e: return "decltype(nullptr)";
    case 256 + 0x61: return "auto";
    case 256 + 0x63: return "decltype(auto)";
    case 256 + 0x69: return "char32_t";
    case 256 + 0x73: return "char16_t";
    case 256 + 0x75: return "char8_t";
    case 256 + 0x66: return "decimal32";
    case 256 + 0x64: return "decimal64";
    case 256 + 0x65: return "decimal128";
  }
  return "";
}
