/**
 * The parser's top production, <encoding>: a function (its name, return type when mangled, parameter types and the
 * qualifiers of `this`), a data name, or a <special-name> (vtables, typeinfo, thunks, guard variables, ...), and
 * the parameter lists that functions and function types share.
 */
import {
  MAX_PARSE_DEPTH, N_BUILTIN, N_CONV, N_CTOR, N_CTORVT, N_DEFARG, N_DTOR, N_ENC, N_FUNC, N_LOCAL, N_NAMEQUAL, N_NESTED,
  N_REFTEMP, N_SPECIAL, N_TEMPLATE, fa, fb, kindOf, stkBase, strp
} from "./nodes";
import * as P from "./parse_state";
import { ascend, expect, isDigit, makeList, mk, parseNumber, peek, peek1, pushTmp, tooDeep } from "./parse_state";
import { parseName, parseTemplateArg } from "./parse_name";
import { parseType } from "./parse_type";

// ---------------------------------------------------------------------------------------------
// Parser. Every function returns a node id, or 0 on failure.

/** <encoding> ::= <name> <bare-function-type> | <name> | <special-name> */
export function parseEncoding(): i32 {
  return ++P.pDepth <= MAX_PARSE_DEPTH ? ascend(parseEncodingInner()) : tooDeep();
}

function parseEncodingInner(): i32 {
  const c = peek();
  if (c == 0x54 /* T */ || c == 0x47 /* G */) return parseSpecial();
  let name = parseName();
  if (name == 0) return 0;
  if (P.ip >= P.iend || peek() == 0x45 /* E */) return mk(N_ENC, name, 0, 0);
  // the qualifiers of a member function's nested name print after its parameter list
  name = stripNameQuals(name, 0);
  if (name == 0) return 0;
  const quals = strippedQuals;
  let ret = 0;
  if (expect(0x4a /* J */) || hasReturnType(name)) {
    ret = parseType();
    if (ret == 0) return 0;
  }
  const params = parseParams();
  if (params == 0) return 0;
  const f = mk(N_FUNC, ret, params, quals);
  if (f == 0) return 0;
  return mk(N_ENC, name, f, 0);
}

let strippedQuals: i32 = 0;
function stripNameQuals(n: i32, depth: i32): i32 {
  strippedQuals = 0;
  const k = kindOf(n);
  if (k == N_NAMEQUAL) {
    strippedQuals = fb(n);
    return fa(n);
  }
  if ((k == N_LOCAL || k == N_DEFARG) && depth < MAX_PARSE_DEPTH) {
    const ent = fb(n);
    const e = stripNameQuals(ent, depth + 1);
    if (e == ent || e == 0) return e == 0 ? 0 : n;
    return mk(k, fa(n), e, 0);
  }
  return n;
}

// Function templates (other than constructors, destructors and conversions) mangle their
// return type.
function hasReturnType(n: i32): bool {
  for (let guard = 0; guard < 1024; guard++) {
    const k = kindOf(n);
    if (k == N_LOCAL || k == N_DEFARG) {
      n = fb(n);
      continue;
    }
    if (k == N_NAMEQUAL) {
      n = fa(n);
      continue;
    }
    if (k == N_TEMPLATE) return !isCtorDtorConv(fa(n));
    return false;
  }
  return false;
}

function isCtorDtorConv(n: i32): bool {
  for (let guard = 0; guard < 1024; guard++) {
    const k = kindOf(n);
    if (k == N_NESTED || k == N_LOCAL || k == N_DEFARG) {
      n = fb(n);
      continue;
    }
    if (k == N_NAMEQUAL) {
      n = fa(n);
      continue;
    }
    return k == N_CTOR || k == N_DTOR || k == N_CONV;
  }
  return false;
}

/** Parameter types up to the end, 'E', a clone suffix or a ref-qualifier; a lone `v` means (). */
export function parseParams(): i32 {
  const from = P.stkTop;
  while (true) {
    const c = peek();
    if (P.ip >= P.iend || c == 0x45 /* E */ || c == 0x2e /* . */) break;
    if ((c == 0x52 /* R */ || c == 0x4f /* O */) && peek1() == 0x45) break;
    const t = parseType();
    if (t == 0 || !pushTmp(t)) return 0;
  }
  return paramList(from);
}

/** The parameter types pushed since `from` as a list (0 when there are none); a lone `v` is (). */
@inline export function paramList(from: i32): i32 {
  const cnt = P.stkTop - from;
  if (cnt == 0) return 0;
  if (cnt == 1) {
    const t = load<i32>(stkBase + (<usize>from << 2));
    if (kindOf(t) == N_BUILTIN && fa(t) == 0x76 /* v */) P.stkTop = from;
  }
  return makeList(from);
}

// <special-name>: vtables, typeinfo, thunks, guard variables, ...
function parseSpecial(): i32 {
  const c = peek();
  const d = peek1();
  P.ip += 2;
  if (c == 0x54 /* T */) {
    switch (d) {
      case 0x56: return special("vtable for ", parseType());
      case 0x54: return special("VTT for ", parseType());
      case 0x49: return special("typeinfo for ", parseType());
      case 0x53: return special("typeinfo name for ", parseType());
      case 0x46: return special("typeinfo fn for ", parseType());
      case 0x48: return special("TLS init function for ", parseName());
      case 0x57: return special("TLS wrapper function for ", parseName());
      case 0x41: return special("template parameter object for ", parseTemplateArg());
      case 0x68: {
        if (!parseCallOffset(0x68)) return 0;
        return special("non-virtual thunk to ", parseEncoding());
      }
      case 0x76: {
        if (!parseCallOffset(0x76)) return 0;
        return special("virtual thunk to ", parseEncoding());
      }
      case 0x63: {
        const k1 = peek();
        P.ip++;
        if (!parseCallOffset(k1)) return 0;
        const k2 = peek();
        P.ip++;
        if (!parseCallOffset(k2)) return 0;
        return special("covariant return thunk to ", parseEncoding());
      }
      case 0x43: {
        const derived = parseType();
        if (derived == 0) return 0;
        if (parseSignedNumber() < 0 || !expect(0x5f)) return 0;
        const base = parseType();
        if (base == 0) return 0;
        return mk(N_CTORVT, derived, base, 0);
      }
    }
    return 0;
  }
  switch (d) {
    case 0x56: return special("guard variable for ", parseName());
    case 0x52: {
      const n = parseName();
      if (n == 0) return 0;
      const start = P.ip;
      while (isDigit(peek())) P.ip++;
      return mk(N_REFTEMP, n, <i32>start, <i32>(P.ip - start));
    }
    case 0x41: return special("hidden alias for ", parseEncoding());
    case 0x54: {
      const e = peek();
      P.ip++;
      if (e == 0x74) return special("transaction clone for ", parseEncoding());
      if (e == 0x6e) return special("non-transaction clone for ", parseEncoding());
      return 0;
    }
  }
  return 0;
}

function special(prefix: string, n: i32): i32 {
  if (n == 0) return 0;
  return mk(N_SPECIAL, strp(prefix), n, 0);
}

// <call-offset> after its h / v: <offset> _ | <offset> _ <virtual offset> _
function parseCallOffset(kind: i32): bool {
  if (kind == 0x68) return parseSignedNumber() >= 0 && expect(0x5f);
  if (kind == 0x76) return parseSignedNumber() >= 0 && expect(0x5f) && parseSignedNumber() >= 0 && expect(0x5f);
  return false;
}

// [n] <digits>; returns -1 on overflow, otherwise the magnitude (digits optional).
function parseSignedNumber(): i32 {
  expect(0x6e);
  if (!isDigit(peek())) return 0;
  return parseNumber();
}
