/**
 * The parser's names: <name>, <nested-name>, <unqualified-name> (source names, operators, constructors and
 * destructors, lambdas, unnamed types, structured bindings, ABI tags), <local-name>, substitutions (`S_`, `St`,
 * ...), template parameters and <template-args>. Like every production, each returns a node id, or 0 on failure.
 */
import {
  MAX_PARSE_DEPTH, N_ABITAG, N_BINDING, N_CONV, N_CTOR, N_DECLTYPE, N_DEFARG, N_DTOR, N_LAMBDA, N_LIT, N_LOCAL, N_NAME,
  N_NAMEQUAL, N_NESTED, N_OPER, N_OPLIT, N_STDSUB, N_TEMPLATE, N_TPARAM, N_UNNAMED, N_VENDOROP, Q_LREF, Q_RREF, kindOf,
  strp, subBase
} from "./nodes";
import * as P from "./parse_state";
import {
  addSub, ascend, expect, isDigit, isLower, isUpper, makeList, mk, parseCvSeq, parseNumber, parseSourceName, peek,
  peek1, pushTmp, tooDeep
} from "./parse_state";
import { parseEncoding } from "./parse_encoding";
import { parseType, parseTypeConv } from "./parse_type";
import { SEQ_ARGS, SEQ_PARAMS, parseExprPrimary, parseExpression, parseSeq } from "./parse_expr";

/** <name> ::= <nested-name> | <unscoped-name> | <unscoped-template-name> <template-args> | <local-name> */
export function parseName(): i32 {
  return ++P.pDepth <= MAX_PARSE_DEPTH ? ascend(parseNameInner()) : tooDeep();
}

function parseNameInner(): i32 {
  const c = peek();
  if (c == 0x4e /* N */) return parseNested();
  if (c == 0x5a /* Z */) return parseLocal();
  let node = 0;
  let isSub = false;
  if (c == 0x53 /* S */) {
    if (peek1() == 0x74 /* t */) {
      P.ip += 2;
      const n = parseUnqualified();
      if (n == 0) return 0;
      node = mk(N_NESTED, mk(N_LIT, strp("std"), 0, 0), n, 0);
    } else {
      node = parseSubstitution();
      isSub = true;
    }
  } else {
    node = parseUnqualified();
    // c++filt rejects template arguments on an unscoped closure / unnamed type
    if (node != 0 && peek() == 0x49 && (kindOf(node) == N_LAMBDA || kindOf(node) == N_UNNAMED)) return 0;
  }
  if (node == 0) return 0;
  // an unscoped template name is a substitution candidate (a substitution already is one)
  if (peek() == 0x49 /* I */ && !isSub && !addSub(node)) return 0;
  return withArgs(node);
}

// <nested-name> ::= N [<CV-qualifiers>] [<ref-qualifier>] <prefix> <unqualified-name> E
function parseNested(): i32 {
  P.ip++; // N
  let q = parseCvSeq(false);
  if (peek() == 0x52 /* R */) {
    q |= Q_LREF;
    P.ip++;
  } else if (peek() == 0x4f /* O */) {
    q |= Q_RREF;
    P.ip++;
  }
  let prefix = 0;
  while (true) {
    const c = peek();
    if (c == 0x53 /* S */) {
      // a substitution (or St) may only start the prefix and is never a new candidate
      if (prefix != 0) return 0;
      if (peek1() == 0x74 /* t */) {
        P.ip += 2;
        prefix = mk(N_LIT, strp("std"), 0, 0);
      } else {
        prefix = parseSubstitution();
        if (prefix != 0 && !isScopeLike(prefix)) return 0;
      }
      if (prefix == 0) return 0;
      continue;
    }
    if (c == 0x4d /* M */) {
      // <data-member-prefix>: lambda in a member initializer; the prefix is already a candidate
      P.ip++;
      continue;
    }
    if (c == 0x49 /* I */) {
      prefix = withArgs(prefix);
    } else if (c == 0x54 /* T */) {
      if (prefix != 0) return 0;
      prefix = parseTemplateParam();
    } else if (c == 0x44 /* D */ && (peek1() == 0x74 || peek1() == 0x54)) {
      if (prefix != 0) return 0;
      prefix = parseType(); // decltype(...)::name
    } else if (c == 0x43 /* C */ || (c == 0x44 /* D */ && isDigit(peek1()))) {
      if (prefix == 0) return 0;
      const cd = parseCtorDtor();
      if (cd == 0) return 0;
      prefix = mk(N_NESTED, prefix, cd, 0);
    } else {
      const comp = parseUnqualified();
      if (comp == 0) return 0;
      prefix = prefix == 0 ? comp : mk(N_NESTED, prefix, comp, 0);
    }
    if (prefix == 0) return 0;
    if (peek() == 0x45 /* E */) {
      P.ip++;
      break;
    }
    if (!addSub(prefix)) return 0;
  }
  // qualifiers of `this`: printed after the parameter list, or after the name of a type
  return q != 0 ? mk(N_NAMEQUAL, prefix, q, 0) : prefix;
}

/**
 * Whether a node can name a scope (namespace, class, template parameter, decltype, ...). A
 * substitution naming a function or pointer type there never occurs in real manglings (and
 * c++filt prints nonsense for it), so such input is rejected.
 */
export function isScopeLike(n: i32): bool {
  const k = kindOf(n);
  return k == N_NAME || k == N_LIT || k == N_NESTED || k == N_TEMPLATE || k == N_STDSUB || k == N_LOCAL ||
    k == N_TPARAM || k == N_ABITAG || k == N_LAMBDA || k == N_UNNAMED || k == N_DECLTYPE;
}

// C1 C2 C3 C4 C5 CI1 <type> CI2 <type> D0 D1 D2 D4 D5; prints the last source name seen.
function parseCtorDtor(): i32 {
  if (P.lastName == 0) return 0;
  const c = peek();
  const name = P.lastName;
  if (c == 0x43 /* C */) {
    P.ip++;
    const inheriting = expect(0x49 /* I */);
    const d = peek();
    if (d < 0x31 || d > 0x35) return 0;
    P.ip++;
    // an inheriting constructor is named after the base class it inherits from
    if (inheriting && parseType() == 0) return 0;
    return mk(N_CTOR, P.lastName, 0, 0);
  }
  P.ip++;
  const d = peek();
  if (d != 0x30 && d != 0x31 && d != 0x32 && d != 0x34 && d != 0x35) return 0;
  P.ip++;
  return mk(N_DTOR, name, 0, 0);
}

/**
 * <unqualified-name> ::= <operator-name> | <source-name> | <unnamed-type-name> | L <source-name>
 *                        followed by any number of B <source-name> ABI tags
 */
export function parseUnqualified(): i32 {
  const c = peek();
  let n = 0;
  if (isDigit(c)) n = parseSourceName();
  else if (isLower(c)) n = parseOperator();
  else if (c == 0x55 /* U */) {
    const d = peek1();
    if (d == 0x74 /* t */) {
      P.ip += 2;
      const num = parseCompactNumber();
      if (num < 0) return 0;
      n = mk(N_UNNAMED, num + 1, 0, 0);
      if (n == 0 || !addSub(n)) return 0; // (closure types, unlike these, are not)
    } else if (d == 0x6c /* l */) {
      n = parseLambda();
    } else return 0;
  } else if (c == 0x44 /* D */ && peek1() == 0x43 /* C */) {
    // DC <source-name>+ E: structured binding declaration
    P.ip += 2;
    const from = P.stkTop;
    while (peek() != 0x45) {
      const b = parseSourceName();
      if (b == 0 || !pushTmp(b)) return 0;
    }
    P.ip++;
    if (P.stkTop == from) return 0;
    const l = makeList(from);
    if (l == 0) return 0;
    n = mk(N_BINDING, l, 0, 0);
  } else if (c == 0x4c /* L */) {
    // internal linkage (GCC)
    P.ip++;
    n = parseSourceName();
    if (n == 0 || !parseDiscriminator()) return 0;
  } else return 0;
  if (n == 0) return 0;
  while (peek() == 0x42 /* B */) {
    P.ip++;
    const hold = P.lastName; // a tag is not the class name for a constructor
    const tag = parseSourceName();
    P.lastName = hold;
    if (tag == 0) return 0;
    n = mk(N_ABITAG, n, tag, 0);
    if (n == 0) return 0;
  }
  return n;
}

// Ul <lambda-sig> E [<number>] _
function parseLambda(): i32 {
  P.ip += 2;
  const sig = parseSeq(SEQ_PARAMS, 0x45 /* E */);
  if (sig == 0) return 0;
  const num = parseCompactNumber();
  if (num < 0) return 0;
  return mk(N_LAMBDA, sig, num + 1, 0);
}

// [<number>] _  ->  0 for `_`, n+1 for `n_`
function parseCompactNumber(): i32 {
  if (expect(0x5f)) return 0;
  const n = parseNumber();
  if (n < 0 || n == 0x7fffffff || !expect(0x5f)) return -1;
  return n + 1;
}

// _ <digit> | __ <number> _   (ignored; only validated)
function parseDiscriminator(): bool {
  if (peek() != 0x5f) return true;
  P.ip++;
  let two = false;
  if (peek() == 0x5f) {
    P.ip++;
    two = true;
  }
  let num = 0;
  if (isDigit(peek())) {
    num = parseNumber();
    if (num < 0) return false;
  }
  if (two && num >= 10) return expect(0x5f);
  return true;
}

/**
 * <operator-name>: `cv <type>` (conversion), `li <source-name>` (operator""), `v <digit> <source-name>` (vendor
 * operator), or a two-letter operator code.
 */
export function parseOperator(): i32 {
  const c1 = peek();
  const c2 = peek1();
  if (c1 == 0x63 /* c */ && c2 == 0x76 /* v */) {
    P.ip += 2;
    const t = parseTypeConv(1);
    if (t == 0) return 0;
    return mk(N_CONV, t, 0, 0);
  }
  if (c1 == 0x6c /* l */ && c2 == 0x69 /* i */) {
    P.ip += 2;
    const n = parseSourceName();
    if (n == 0) return 0;
    return mk(N_OPLIT, n, 0, 0);
  }
  if (c1 == 0x76 /* v */ && isDigit(c2)) {
    P.ip += 2;
    const n = parseSourceName();
    if (n == 0) return 0;
    return mk(N_VENDOROP, n, 0, 0);
  }
  const s = operatorSymbol((c1 << 8) | c2);
  if (s.length == 0) return 0;
  P.ip += 2;
  return mk(N_OPER, strp(s), 0, 0);
}

/** The symbol of two-letter operator code `op` (first letter in the high byte), "" when it is none. */
export function operatorSymbol(op: i32): string {
  switch (op) {
    case 0x6e77: return "new"; // nw
    case 0x6e61: return "new[]"; // na
    case 0x646c: return "delete"; // dl
    case 0x6461: return "delete[]"; // da
    case 0x7073: return "+"; // ps
    case 0x6e67: return "-"; // ng
    case 0x6164: return "&"; // ad
    case 0x6465: return "*"; // de
    case 0x636f: return "~"; // co
    case 0x706c: return "+"; // pl
    case 0x6d69: return "-"; // mi
    case 0x6d6c: return "*"; // ml
    case 0x6476: return "/"; // dv
    case 0x726d: return "%"; // rm
    case 0x616e: return "&"; // an
    case 0x6f72: return "|"; // or
    case 0x656f: return "^"; // eo
    case 0x6153: return "="; // aS
    case 0x704c: return "+="; // pL
    case 0x6d49: return "-="; // mI
    case 0x6d4c: return "*="; // mL
    case 0x6456: return "/="; // dV
    case 0x724d: return "%="; // rM
    case 0x614e: return "&="; // aN
    case 0x6f52: return "|="; // oR
    case 0x654f: return "^="; // eO
    case 0x6c73: return "<<"; // ls
    case 0x7273: return ">>"; // rs
    case 0x6c53: return "<<="; // lS
    case 0x7253: return ">>="; // rS
    case 0x6571: return "=="; // eq
    case 0x6e65: return "!="; // ne
    case 0x6c74: return "<"; // lt
    case 0x6774: return ">"; // gt
    case 0x6c65: return "<="; // le
    case 0x6765: return ">="; // ge
    case 0x7373: return "<=>"; // ss
    case 0x6e74: return "!"; // nt
    case 0x6161: return "&&"; // aa
    case 0x6f6f: return "||"; // oo
    case 0x7070: return "++"; // pp
    case 0x6d6d: return "--"; // mm
    case 0x636d: return ","; // cm
    case 0x706d: return "->*"; // pm
    case 0x7074: return "->"; // pt
    case 0x636c: return "()"; // cl
    case 0x6978: return "[]"; // ix
    case 0x7175: return "?"; // qu
    case 0x7374: return "sizeof"; // st
    case 0x737a: return "sizeof"; // sz
    case 0x6174: return "alignof"; // at
    case 0x617a: return "alignof"; // az
    case 0x6177: return "co_await"; // aw
  }
  return "";
}

// <local-name> ::= Z <encoding> E <entity name> [<discriminator>]
//               | Z <encoding> E s [<discriminator>]
//               | Z <encoding> E d [<number>] _ <entity name>
function parseLocal(): i32 {
  P.ip++; // Z
  const enc = parseEncoding();
  if (enc == 0 || !expect(0x45 /* E */)) return 0;
  if (peek() == 0x73 /* s */) {
    P.ip++;
    if (!parseDiscriminator()) return 0;
    return mk(N_LOCAL, enc, mk(N_LIT, strp("string literal"), 0, 0), 0);
  }
  let defArg = -1;
  if (peek() == 0x64 /* d */) {
    P.ip++;
    defArg = parseCompactNumber();
    if (defArg < 0) return 0;
  }
  let ent = parseName();
  if (ent == 0) return 0;
  const k = kindOf(ent);
  if (k != N_LAMBDA && k != N_UNNAMED && !parseDiscriminator()) return 0;
  if (defArg >= 0) ent = mk(N_DEFARG, defArg + 1, ent, 0);
  return mk(N_LOCAL, enc, ent, 0);
}

/** S_ | S <seq-id> _ | St Sa Sb Ss Si So Sd */
export function parseSubstitution(): i32 {
  P.ip++; // S
  const c = peek();
  if (c == 0x5f) {
    P.ip++;
    return P.nSubs > 0 ? load<i32>(subBase) : 0;
  }
  if (isDigit(c) || isUpper(c)) {
    let v: i64 = 0;
    while (true) {
      const d = peek();
      if (isDigit(d)) v = v * 36 + <i64>(d - 48);
      else if (isUpper(d)) v = v * 36 + <i64>(d - 55);
      else break;
      if (v > 0x7fffffff) return 0;
      P.ip++;
    }
    if (!expect(0x5f)) return 0;
    v += 1;
    if (v >= <i64>P.nSubs) return 0;
    return load<i32>(subBase + (<usize>v << 2));
  }
  P.ip++;
  let full: string;
  let base: string;
  switch (c) {
    case 0x74: // t: only valid as a prefix, handled by callers
      return 0;
    case 0x61:
      full = "std::allocator";
      base = "allocator";
      break;
    case 0x62:
      full = "std::basic_string";
      base = "basic_string";
      break;
    case 0x73:
      full = "std::basic_string<char, std::char_traits<char>, std::allocator<char> >";
      base = "basic_string";
      break;
    case 0x69:
      full = "std::basic_istream<char, std::char_traits<char> >";
      base = "basic_istream";
      break;
    case 0x6f:
      full = "std::basic_ostream<char, std::char_traits<char> >";
      base = "basic_ostream";
      break;
    case 0x64:
      full = "std::basic_iostream<char, std::char_traits<char> >";
      base = "basic_iostream";
      break;
    default:
      return 0;
  }
  const n = mk(N_STDSUB, strp(full), 0, 0);
  P.lastName = mk(N_LIT, strp(base), 0, 0);
  return n;
}

/** T_ | T <number> _ */
export function parseTemplateParam(): i32 {
  P.ip++; // T
  let idx = 0;
  if (!expect(0x5f)) {
    const n = parseNumber();
    if (n < 0 || n == 0x7fffffff || !expect(0x5f)) return 0;
    idx = n + 1;
  }
  return mk(N_TPARAM, idx, 0, 0);
}

/** I <template-arg>+ E, or with `pack` the J <template-arg>* E of an argument pack */
export function parseTemplateArgs(pack: bool): i32 {
  if (++P.pDepth > MAX_PARSE_DEPTH) return tooDeep();
  P.ip++; // I or J
  const saveConv = P.inConv;
  const saveName = P.lastName;
  if (!pack) P.inConv = 0;
  const l = parseSeq(SEQ_ARGS, 0x45 /* E */);
  P.inConv = saveConv;
  // arguments must not change the name a later constructor prints (a pack is part of its list)
  if (!pack) P.lastName = saveName;
  return ascend(l);
}

/** [<name>] <template-args>: `n` followed by optional template arguments; 0 on failure. */
@inline export function withArgs(n: i32): i32 {
  if (n == 0 || peek() != 0x49 /* I */) return n;
  const args = parseTemplateArgs(false);
  if (args == 0) return 0;
  return mk(N_TEMPLATE, n, args, 0);
}

/** <template-arg> ::= <type> | X <expression> E | <expr-primary> | J <template-arg>* E | I <template-arg>* E */
export function parseTemplateArg(): i32 {
  const c = peek();
  if (c == 0x4c /* L */) return parseExprPrimary();
  if (c == 0x58 /* X */) {
    P.ip++;
    const e = parseExpression();
    if (e == 0 || !expect(0x45)) return 0;
    return e;
  }
  if (c == 0x4a /* J */ || c == 0x49 /* I: argument pack in pre-standard GCC manglings */) {
    return parseTemplateArgs(true);
  }
  return parseType();
}
