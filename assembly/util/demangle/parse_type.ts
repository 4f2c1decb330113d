/**
 * The parser's types, <type>: builtin and D-types (`Dn`, `DF16_`, vectors, decltype, pack expansions), cv- and
 * vendor-qualified types, pointers and references, function, array and pointer-to-member types, and named types,
 * template parameters and substitutions as types (with the substitution candidates each adds).
 */
import {
  MAX_PARSE_DEPTH, N_ARRAY, N_BUILTIN, N_COMPLEX, N_DECLTYPE, N_FLOATN, N_FUNC, N_IMAG, N_LIT, N_LREF, N_NAME,
  N_NAMEQUAL, N_PACKEXP, N_PTR, N_PTRMEM, N_QUAL, N_RREF, N_STDSUB, N_VECTOR, N_VENDORTYPE, N_VQUAL, Q_LREF, Q_RREF,
  fa, kindOf, strp
} from "./nodes";
import * as P from "./parse_state";
import {
  addSub, ascend, expect, isDigit, isUpper, mk, parseCvSeq, parseSourceName, peek, peek1, tooDeep
} from "./parse_state";
import { parseParams } from "./parse_encoding";
import { isScopeLike, parseName, parseSubstitution, parseTemplateParam, withArgs } from "./parse_name";
import { parseExpression } from "./parse_expr";

/**
 * <type> parsed with inConv = `conv` (1: a conversion operator's type, where `T_` takes no
 * template arguments).
 */
@inline export function parseTypeConv(conv: i32): i32 {
  const save = P.inConv;
  P.inConv = conv;
  const t = parseType();
  P.inConv = save;
  return t;
}

/**
 * <type>
 *
 * A node id, or 0 on failure (also past MAX_PARSE_DEPTH).
 */
export function parseType(): i32 {
  return ++P.pDepth <= MAX_PARSE_DEPTH ? ascend(parseTypeInner()) : tooDeep();
}

function parseTypeInner(): i32 {
  const c = peek();
  switch (c) {
    case 0x76: case 0x77: case 0x62: case 0x63: case 0x61: case 0x68: case 0x73: case 0x74:
    case 0x69: case 0x6a: case 0x6c: case 0x6d: case 0x78: case 0x79: case 0x6e: case 0x6f:
    case 0x66: case 0x64: case 0x65: case 0x67: case 0x7a: {
      // builtin types are never substitution candidates
      P.ip++;
      return mk(N_BUILTIN, c, 0, 0);
    }
    case 0x75: {
      // u <source-name>: vendor extended type
      P.ip++;
      const name = parseSourceName();
      if (name == 0) return 0;
      const n = mk(N_VENDORTYPE, name, 0, 0);
      if (n == 0 || !addSub(n)) return 0;
      return n;
    }
    case 0x72: case 0x56: case 0x4b:
      return parseQualified();
    case 0x50: case 0x52: case 0x4f: case 0x43: case 0x47: {
      P.ip++;
      const t = parseType();
      if (t == 0) return 0;
      const k = c == 0x50 ? N_PTR : c == 0x52 ? N_LREF : c == 0x4f ? N_RREF : c == 0x43 ? N_COMPLEX : N_IMAG;
      const n = mk(k, t, 0, 0);
      if (n == 0 || !addSub(n)) return 0;
      return n;
    }
    case 0x46: {
      const f = parseFunctionType();
      if (f == 0 || !addSub(f)) return 0;
      return f;
    }
    case 0x41: {
      const a = parseArray();
      if (a == 0 || !addSub(a)) return 0;
      return a;
    }
    case 0x4d: {
      P.ip++;
      const cls = parseType();
      if (cls == 0 || !isScopeLike(cls)) return 0;
      const mem = parseType();
      if (mem == 0) return 0;
      const n = mk(N_PTRMEM, cls, mem, 0);
      if (n == 0 || !addSub(n)) return 0;
      return n;
    }
    case 0x54: {
      const t = parseTemplateParam();
      if (t == 0 || !addSub(t)) return 0;
      if (peek() != 0x49 || P.inConv != 0) return t;
      // template template parameter with arguments
      const n = withArgs(t);
      if (n == 0 || !addSub(n)) return 0;
      return n;
    }
    case 0x53: {
      const d = peek1();
      if (isDigit(d) || d == 0x5f || isUpper(d)) {
        const s = parseSubstitution();
        if (s == 0 || peek() != 0x49) return s;
        const n = withArgs(s);
        if (n == 0 || !addSub(n)) return 0;
        return n;
      }
      const n = parseName();
      if (n == 0) return 0;
      // a bare std abbreviation (Sa, Ss, ...) is not a new candidate
      if (kindOf(n) != N_STDSUB && !addSub(n)) return 0;
      return n;
    }
    case 0x4e: case 0x5a:
    case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35: case 0x36: case 0x37: case 0x38: case 0x39: {
      const n = parseName();
      // cv/ref-qualified nested names only name member functions, never types
      if (n == 0 || kindOf(n) == N_NAMEQUAL || !addSub(n)) return 0;
      return n;
    }
    case 0x55: {
      // U <source-name> [<template-args>] <type>: vendor extended qualifier
      P.ip++;
      const q = withArgs(parseSourceName());
      if (q == 0) return 0;
      const t = parseType();
      if (t == 0) return 0;
      const n = mk(N_VQUAL, t, q, 0);
      if (n == 0 || !addSub(n)) return 0;
      return n;
    }
    case 0x44:
      return parseDType();
  }
  return 0;
}

function parseDType(): i32 {
  const d = peek1();
  switch (d) {
    case 0x68: case 0x6e: case 0x61: case 0x63: case 0x69: case 0x73: case 0x75: case 0x66: case 0x64: case 0x65: {
      P.ip += 2;
      return mk(N_BUILTIN, 256 + d, 0, 0);
    }
    case 0x46: {
      // DF <number> _ | DF <number> x | DF16b
      P.ip += 2;
      const start = P.ip;
      while (isDigit(peek())) P.ip++;
      const len = <i32>(P.ip - start);
      if (len == 0) return 0;
      if (expect(0x5f)) return mk(N_FLOATN, <i32>start, len, 0);
      if (expect(0x78)) return mk(N_FLOATN, <i32>start, len, 1);
      if (len == 2 && load<u8>(start) == 0x31 && load<u8>(start, 1) == 0x36 && expect(0x62)) {
        return mk(N_LIT, strp("std::bfloat16_t"), 0, 0);
      }
      return 0;
    }
    case 0x70: {
      // Dp <type>: pack expansion
      P.ip += 2;
      const t = parseType();
      if (t == 0) return 0;
      const n = mk(N_PACKEXP, t, 0, 0);
      if (n == 0 || !addSub(n)) return 0;
      return n;
    }
    case 0x76: {
      // Dv <number> _ <type>: vector type
      P.ip += 2;
      const start = P.ip;
      while (isDigit(peek())) P.ip++;
      const len = <i32>(P.ip - start);
      if (len == 0 || !expect(0x5f)) return 0;
      const dim = mk(N_NAME, <i32>start, len, 0);
      const t = parseType();
      // vectors of function/array (pointer) types: not real, and c++filt garbles them
      if (t == 0 || vectorElemBad(t)) return 0;
      const n = mk(N_VECTOR, t, dim, 0);
      if (n == 0 || !addSub(n)) return 0;
      return n;
    }
    case 0x78: case 0x6f:
      return parseQualified();
    case 0x74: case 0x54: {
      // Dt / DT <expression> E: decltype
      P.ip += 2;
      const e = parseExpression();
      if (e == 0 || !expect(0x45)) return 0;
      const n = mk(N_DECLTYPE, e, 0, 0);
      if (n == 0 || !addSub(n)) return 0;
      return n;
    }
  }
  return 0; // throw specs, ...: unsupported
}

function vectorElemBad(t: i32): bool {
  for (let guard = 0; guard < MAX_PARSE_DEPTH; guard++) {
    const k = kindOf(t);
    if (k == N_FUNC || k == N_ARRAY || k == N_PTRMEM || k == N_VECTOR) return true;
    if (k == N_PTR || k == N_LREF || k == N_RREF || k == N_QUAL || k == N_VQUAL) t = fa(t);
    else return false;
  }
  return true;
}

// [r] [V] [K] [Dx] [Do] <type>
function parseQualified(): i32 {
  if (peek() == 0x44 && (peek1() == 0x4f || peek1() == 0x77)) return 0; // DO / Dw: unsupported
  const q = parseCvSeq(true);
  if (q == 0 || P.failed) return 0;
  // qualifiers before a function type apply to `this`: the unqualified function type is not
  // a substitution candidate of its own
  const direct = peek() == 0x46; /* F */
  const t = direct ? parseFunctionType() : parseType();
  if (t == 0) return 0;
  // c=1 marks function qualifiers; a substituted function type under plain cv-qualifiers is
  // not valid C++ (c++filt prints it as `( const&)`), so printing one is refused
  const n = mk(N_QUAL, t, q, direct ? 1 : 0);
  if (n == 0 || !addSub(n)) return 0;
  return n;
}

// F [Y] <return type> <parameter types> [<ref-qualifier>] E
function parseFunctionType(): i32 {
  P.ip++; // F
  expect(0x59); // extern "C" is not printed
  const ret = parseType();
  if (ret == 0) return 0;
  const params = parseParams();
  if (params == 0) return 0;
  let q = 0;
  if (peek() == 0x52 && peek1() == 0x45) {
    q = Q_LREF;
    P.ip++;
  } else if (peek() == 0x4f && peek1() == 0x45) {
    q = Q_RREF;
    P.ip++;
  }
  if (!expect(0x45)) return 0;
  return mk(N_FUNC, ret, params, q);
}

// A <number> _ <type> | A _ <type>
function parseArray(): i32 {
  P.ip++; // A
  let dim = 0;
  if (isDigit(peek())) {
    const start = P.ip;
    while (isDigit(peek())) P.ip++;
    dim = mk(N_NAME, <i32>start, <i32>(P.ip - start), 0);
  } else if (peek() != 0x5f) {
    dim = parseExpression();
    if (dim == 0) return 0;
  }
  if (!expect(0x5f)) return 0;
  const t = parseType();
  if (t == 0) return 0;
  return mk(N_ARRAY, t, dim, 0);
}
