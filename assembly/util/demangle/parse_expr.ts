/**
 * The parser's expressions, <expression> (template arguments, array bounds, decltype): operators, calls, casts,
 * sizeof/alignof, member access, unresolved names (`sr ...`), function parameters, new, initializer lists and
 * literals (<expr-primary>), and the sequences of expressions, template arguments or types that end at a marker.
 */
import {
  MAX_PARSE_DEPTH, N_BINARY, N_BUILTIN, N_CALL, N_CAST, N_EXTNAME, N_FPARAM, N_INITLIST, N_LITERAL, N_LITNEG,
  N_NAMEDCAST, N_NESTED, N_NEW, N_NULLARY, N_PACKEXP, N_SIZEOFPACK, N_TEMPLATE, N_TERNARY, N_UNARY, U_GLOBAL,
  U_POSTFIX, U_PREFIX, U_TYPE, fa, kindOf, strp
} from "./nodes";
import * as P from "./parse_state";
import {
  addSub, ascend, expect, isDigit, makeList, mk, parseNumber, parseSourceName, peek, peek1, pushTmp, tooDeep
} from "./parse_state";
import { paramList, parseEncoding } from "./parse_encoding";
import {
  operatorSymbol, parseOperator, parseTemplateArg, parseTemplateArgs, parseTemplateParam, parseUnqualified, withArgs
} from "./parse_name";
import { parseType, parseTypeConv } from "./parse_type";

/**
 * <expression>: the subset that shows up in real symbols (operators, calls, casts, sizeof,
 * member access, unresolved names, function parameters, literals); anything else fails.
 */
export function parseExpression(): i32 {
  return ++P.pDepth <= MAX_PARSE_DEPTH ? ascend(parseExpressionInner()) : tooDeep();
}

function parseExpressionInner(): i32 {
  const c = peek();
  const d = peek1();
  if (c == 0x4c /* L */) return parseExprPrimary();
  if (c == 0x54 /* T */) return parseTemplateParam();
  if (isDigit(c)) return parseSimpleId();
  const op = (c << 8) | d;
  switch (op) {
    case 0x6670: { // fp [<number>] _  (cv-qualified forms unsupported, like c++filt)
      P.ip += 2;
      if (expect(0x5f)) return mk(N_FPARAM, 1, 0, 0);
      const n = parseNumber();
      if (n < 0 || n > 0x7ffffff0 || !expect(0x5f)) return 0;
      return mk(N_FPARAM, n + 2, 0, 0);
    }
    case 0x7372: // sr: unresolved qualified name
      return parseUnresolved();
    case 0x6773: // gs: ::expr
      P.ip += 2;
      return parseUnaryExpr("::", U_GLOBAL);
    case 0x6f6e: { // on <operator-name> [<template-args>]
      P.ip += 2;
      return withArgs(parseOperator());
    }
    case 0x7370: { // sp <expression>: pack expansion
      P.ip += 2;
      const e = parseExpression();
      if (e == 0) return 0;
      return mk(N_PACKEXP, e, 0, 0);
    }
    case 0x735a: { // sZ <template-param>: sizeof...(pack)
      P.ip += 2;
      if (peek() != 0x54) return 0;
      const t = parseTemplateParam();
      if (t == 0) return 0;
      return mk(N_SIZEOFPACK, t, 0, 0);
    }
    case 0x7374: // st <type>: sizeof (type)
    case 0x6174: { // at <type>: alignof (type)
      P.ip += 2;
      const t = parseType();
      if (t == 0) return 0;
      return mk(N_UNARY, strp(op == 0x7374 ? "sizeof " : "alignof "), t, U_TYPE);
    }
    case 0x7472: // tr: rethrow
      P.ip += 2;
      return mk(N_NULLARY, strp("throw"), 0, 0);
    case 0x746c: // tl <type> <expression>* E: T{...}
    case 0x696c: { // il <expression>* E: {...}
      P.ip += 2;
      let t = 0;
      if (op == 0x746c) {
        t = parseType();
        if (t == 0) return 0;
      }
      const l = parseExprList();
      if (l == 0) return 0;
      return mk(N_INITLIST, t, l, 0);
    }
    case 0x6376: { // cv <type> <expression> | cv <type> _ <expression>* E
      P.ip += 2;
      const t = parseTypeConv(0);
      if (t == 0) return 0;
      if (expect(0x5f)) {
        const l = parseExprList();
        if (l == 0) return 0;
        return mk(N_CAST, t, l, 1);
      }
      const e = parseExpression();
      if (e == 0) return 0;
      return mk(N_CAST, t, e, 0);
    }
    case 0x6463: case 0x7363: case 0x7263: case 0x6363: { // dc sc rc cc <type> <expression>
      P.ip += 2;
      const t = parseType();
      if (t == 0) return 0;
      const e = parseExpression();
      if (e == 0) return 0;
      const name = op == 0x6463 ? "dynamic_cast" : op == 0x7363 ? "static_cast" : op == 0x7263 ? "reinterpret_cast" : "const_cast";
      return mk(N_NAMEDCAST, strp(name), t, e);
    }
    case 0x636c: { // cl <expression>+ E: call
      P.ip += 2;
      const f = parseExpression();
      if (f == 0) return 0;
      const l = parseExprList();
      if (l == 0) return 0;
      return mk(N_CALL, f, l, 0);
    }
    case 0x6474: case 0x7074: { // dt / pt <expression> <unresolved-name>: member access
      P.ip += 2;
      const l = parseExpression();
      if (l == 0) return 0;
      const r = withArgs(parseUnqualified());
      if (r == 0) return 0;
      return mk(N_BINARY, strp(op == 0x6474 ? "." : "->"), l, r);
    }
    case 0x7175: { // qu: a ? b : c
      P.ip += 2;
      const x = parseExpression();
      if (x == 0) return 0;
      const y = parseExpression();
      if (y == 0) return 0;
      const z = parseExpression();
      if (z == 0) return 0;
      return mk(N_TERNARY, x, y, z);
    }
    case 0x7070: case 0x6d6d: { // pp_ / mm_ prefix, pp / mm postfix
      P.ip += 2;
      const prefix = expect(0x5f);
      return parseUnaryExpr(op == 0x7070 ? "++" : "--", prefix ? U_PREFIX : U_POSTFIX);
    }
    case 0x6e77: case 0x6e61: { // nw / na <expression>* _ <type> (E | pi <expression>* E | il ...)
      P.ip += 2;
      const place = parseSeq(SEQ_EXPRS, 0x5f);
      if (place == 0) return 0;
      const t = parseType();
      if (t == 0) return 0;
      let init = 0;
      if (!expect(0x45)) {
        if (peek() == 0x70 && peek1() == 0x69) {
          P.ip += 2;
          init = parseExprList();
        } else if (peek() == 0x69 && peek1() == 0x6c) {
          init = parseExpression();
        }
        if (init == 0) return 0;
      }
      return mk(N_NEW, place, t, init);
    }
    case 0x7477: // tw <expression>: throw
      P.ip += 2;
      return parseUnaryExpr("throw ", U_PREFIX);
  }
  let sym = unaryOperatorSymbol(op);
  if (sym.length > 0) {
    P.ip += 2;
    return parseUnaryExpr(sym, U_PREFIX);
  }
  sym = binaryOperatorSymbol(op);
  if (sym.length > 0) {
    P.ip += 2;
    const l = parseExpression();
    if (l == 0) return 0;
    const r = parseExpression();
    if (r == 0) return 0;
    return mk(N_BINARY, strp(sym), l, r);
  }
  return 0;
}

// <expression> as the operand of `sym` (a static string) in form `form` (U_*)
@inline function parseUnaryExpr(sym: string, form: i32): i32 {
  const e = parseExpression();
  if (e == 0) return 0;
  return mk(N_UNARY, strp(sym), e, form);
}

// Prefix operators of <expression>: as in operator names, keywords followed by a space.
function unaryOperatorSymbol(op: i32): string {
  switch (op) {
    case 0x7073: case 0x6e67: case 0x6164: case 0x6465: case 0x636f: case 0x6e74: // ps ng ad de co nt
      return operatorSymbol(op);
    case 0x737a: return "sizeof "; // sz
    case 0x617a: return "alignof "; // az
    case 0x646c: return "delete "; // dl
    case 0x6461: return "delete[] "; // da
  }
  return "";
}

// Binary operators of <expression>, spelled as in operator names.
function binaryOperatorSymbol(op: i32): string {
  switch (op) {
    case 0x706c: case 0x6d69: case 0x6d6c: case 0x6476: case 0x726d: case 0x616e: // pl mi ml dv rm an
    case 0x6f72: case 0x656f: case 0x6153: case 0x704c: case 0x6d49: case 0x6d4c: // or eo aS pL mI mL
    case 0x6456: case 0x724d: case 0x614e: case 0x6f52: case 0x654f: case 0x6c73: // dV rM aN oR eO ls
    case 0x7273: case 0x6c53: case 0x7253: case 0x6571: case 0x6e65: case 0x6c74: // rs lS rS eq ne lt
    case 0x6774: case 0x6c65: case 0x6765: case 0x7373: case 0x6161: case 0x6f6f: // gt le ge ss aa oo
    case 0x636d: case 0x706d: case 0x6978: // cm pm ix
      return operatorSymbol(op);
  }
  return "";
}

// <expression>* E
function parseExprList(): i32 {
  return parseSeq(SEQ_EXPRS, 0x45);
}

// What parseSeq collects.
/** <expression>* */
const SEQ_EXPRS: i32 = 0;
/** <template-arg>* */
export const SEQ_ARGS: i32 = 1;
/** <type>+ of a parameter list (see paramList) */
export const SEQ_PARAMS: i32 = 2;

/** Elements of kind `what` up to and including the `end` byte, as a list node; 0 on failure. */
@inline export function parseSeq(what: i32, end: i32): i32 {
  const from = P.stkTop;
  while (peek() != end) {
    if (P.ip >= P.iend) return 0;
    const e = what == SEQ_EXPRS ? parseExpression() : what == SEQ_ARGS ? parseTemplateArg() : parseType();
    if (e == 0 || !pushTmp(e)) return 0;
  }
  P.ip++;
  return what == SEQ_PARAMS ? paramList(from) : makeList(from);
}

// <source-name> [<template-args>]
function parseSimpleId(): i32 {
  return withArgs(parseSourceName());
}

// <base-unresolved-name> ::= <simple-id> | on <operator-name> [<template-args>], joined to its
// scope; template arguments apply to the whole qualified name (c++filt prints
// `(std::declval<int>)()` for a call).
function parseBaseUnresolved(scope: i32): i32 {
  let n = 0;
  if (peek() == 0x6f && peek1() == 0x6e) {
    P.ip += 2;
    n = parseOperator();
  } else if (isDigit(peek())) {
    n = parseSourceName();
  } else return 0; // dn <destructor-name> unsupported
  if (n == 0) return 0;
  return withArgs(mk(N_NESTED, scope, n, 0));
}

// sr <unresolved-type> <base-unresolved-name>
// sr N <unresolved-type> <simple-id>+ E <base-unresolved-name>
// sr <simple-id>+ E <base-unresolved-name>
function parseUnresolved(): i32 {
  P.ip += 2; // sr
  let scope = 0;
  if (expect(0x4e /* N */)) {
    // c++filt reads N...E as a nested type: each qualifier level not followed by E, and the
    // whole, become substitution candidates
    scope = parseType();
    if (scope == 0) return 0;
    let levels = 0;
    while (peek() != 0x45) {
      if (P.ip >= P.iend) return 0;
      const q = parseSourceName();
      if (q == 0) return 0;
      scope = mk(N_NESTED, scope, q, 0);
      if (peek() == 0x49 /* I */) {
        if (!addSub(scope)) return 0;
        const args = parseTemplateArgs(false);
        if (args == 0) return 0;
        scope = mk(N_TEMPLATE, scope, args, 0);
      }
      if (peek() != 0x45 && !addSub(scope)) return 0;
      levels++;
    }
    P.ip++;
    if (levels > 0 && !addSub(scope)) return 0;
  } else if (isDigit(peek())) {
    while (peek() != 0x45) {
      if (P.ip >= P.iend) return 0;
      const q = parseSimpleId();
      if (q == 0) return 0;
      scope = scope == 0 ? q : mk(N_NESTED, scope, q, 0);
    }
    P.ip++;
  } else {
    scope = parseType();
    if (scope == 0) return 0;
  }
  return parseBaseUnresolved(scope);
}

/** L <type> <value> E | L _Z <encoding> E | L <nullptr type> E */
export function parseExprPrimary(): i32 {
  return ++P.pDepth <= MAX_PARSE_DEPTH ? ascend(parseExprPrimaryInner()) : tooDeep();
}

function parseExprPrimaryInner(): i32 {
  P.ip++; // L
  if ((peek() == 0x5f && peek1() == 0x5a) || peek() == 0x5a) {
    if (peek() == 0x5f) P.ip++;
    P.ip++;
    const enc = parseEncoding();
    if (enc == 0 || !expect(0x45)) return 0;
    return mk(N_EXTNAME, enc, 0, 0);
  }
  const t = parseType();
  if (t == 0) return 0;
  if (kindOf(t) == N_BUILTIN && fa(t) == 256 + 0x6e /* Dn */ && expect(0x45)) return t;
  let k = N_LITERAL;
  if (expect(0x6e /* n */)) k = N_LITNEG;
  const start = P.ip;
  while (peek() != 0x45) {
    if (P.ip >= P.iend || peek() == 0) return 0;
    P.ip++;
  }
  if (P.ip == start) return 0;
  const len = <i32>(P.ip - start);
  P.ip++;
  return mk(k, t, <i32>start, len);
}
