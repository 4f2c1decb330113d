// Itanium C++ ABI name demangler (https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling).
//
// Written from the ABI grammar; the output format follows GNU c++filt (binutils), which is the
// oracle for our golden tests. Two passes: a recursive-descent parser builds a small node graph
// in fixed scratch tables (allocated once, reused on every call), then a printer walks it.
// The graph is needed because C++ declarator syntax prints out of order (`void (*)(int)`,
// `int (&) [3]`) and because template parameters (`T_`) resolve at print time against the
// template that is being printed (a substitution of `T_` can print differently in a lambda
// signature and in a parameter list).
//
// Untrusted input: every read is bounds-checked, parse and print recursion are depth-limited,
// print work is budgeted, and all tables have fixed capacities; any overflow means "not
// demangled" (-1) so the caller keeps the mangled name.

// ---------------------------------------------------------------------------------------------
// Limits and scratch tables

const NODE_CAP: i32 = 16384; // nodes, 16 bytes each
const LIST_CAP: i32 = 16384; // list element slots
const SUB_CAP: i32 = 4096; // substitution candidates
const STK_CAP: i32 = 4096; // temporary stack used while collecting list elements
const TSTK_CAP: i32 = 256; // template-argument scopes while printing
const SCOPE_CAP: i32 = 32; // saved template scopes of references to template parameters
const SWAP_CAP: i32 = 8; // nested restores of a saved scope
const MAX_PARSE_DEPTH: i32 = 256;
const MAX_PRINT_DEPTH: i32 = 512;

let scratch: usize = 0;
let nodeBase: usize = 0;
let listBase: usize = 0;
let subBase: usize = 0;
let stkBase: usize = 0;
let tstkBase: usize = 0;
let scopeBase: usize = 0; // SCOPE_CAP snapshots of TSTK_CAP entries
let swapBase: usize = 0; // SWAP_CAP saved stacks of TSTK_CAP entries

/** Forgets the scratch tables; call after heap.reset() (the next call allocates them again). */
export function demangleReset(): void {
  scratch = 0;
}

// One allocation per heap generation (the stub runtime never frees; heap.reset() rewinds it between files).
function initScratch(): void {
  if (scratch != 0) return;
  const bytes: usize = (<usize>NODE_CAP << 4) + (<usize>(LIST_CAP + SUB_CAP + STK_CAP + TSTK_CAP) << 2) +
    (<usize>((SCOPE_CAP + SWAP_CAP) * TSTK_CAP) << 2);
  scratch = heap.alloc(bytes);
  nodeBase = scratch;
  listBase = nodeBase + (<usize>NODE_CAP << 4);
  subBase = listBase + (<usize>LIST_CAP << 2);
  stkBase = subBase + (<usize>SUB_CAP << 2);
  tstkBase = stkBase + (<usize>STK_CAP << 2);
  scopeBase = tstkBase + (<usize>TSTK_CAP << 2);
  swapBase = scopeBase + (<usize>(SCOPE_CAP * TSTK_CAP) << 2);
  memory.fill(nodeBase, 0, 16); // node 0 ("none") has kind 0, which never prints
}

// ---------------------------------------------------------------------------------------------
// Node kinds. Fields a, b, c are i32: node ids, byte pointers, lengths or AS string pointers.

const N_NAME: i32 = 1; // a=ptr b=len: identifier bytes from the input
const N_LIT: i32 = 2; // a=AS string: fixed text
const N_BUILTIN: i32 = 3; // a=code (char, or 256+char for D-types)
const N_FLOATN: i32 = 4; // a=ptr b=len (digits) c=1 for the `x` suffix: _FloatN / _FloatNx
const N_NESTED: i32 = 5; // a=scope b=name
const N_TEMPLATE: i32 = 6; // a=name b=args list
const N_LIST: i32 = 7; // a=start b=count (also used for argument packs)
const N_QUAL: i32 = 8; // a=type b=qualifier word c=1 for function qualifiers (K F...E)
const N_PTR: i32 = 9; // a=pointee
const N_LREF: i32 = 10;
const N_RREF: i32 = 11;
const N_COMPLEX: i32 = 12;
const N_IMAG: i32 = 13;
const N_FUNC: i32 = 14; // a=return type (0: none) b=params list c=qualifier word
const N_ARRAY: i32 = 15; // a=element b=dimension (0: none)
const N_PTRMEM: i32 = 16; // a=class b=member type
const N_ENC: i32 = 17; // a=name b=function type (0: data)
const N_SPECIAL: i32 = 18; // a=AS string prefix b=node
const N_CTORVT: i32 = 19; // a=derived b=base
const N_CTOR: i32 = 20; // a=name to print
const N_DTOR: i32 = 21; // a=name to print
const N_OPER: i32 = 22; // a=AS string operator symbol
const N_CONV: i32 = 23; // a=type
const N_LAMBDA: i32 = 24; // a=signature list b=number
const N_UNNAMED: i32 = 25; // a=number
const N_LOCAL: i32 = 26; // a=encoding b=entity
const N_LITERAL: i32 = 27; // a=type b=ptr c=len
const N_LITNEG: i32 = 28; // negative literal, same fields
const N_TPARAM: i32 = 29; // a=index
const N_PACKEXP: i32 = 30; // a=pattern
const N_ABITAG: i32 = 31; // a=name b=tag
const N_VQUAL: i32 = 32; // a=type b=vendor qualifier name
const N_CLONE: i32 = 33; // a=encoding b=ptr c=len
const N_STDSUB: i32 = 34; // a=AS string (full expansion)
const N_VECTOR: i32 = 35; // a=element b=dimension
const N_EXTNAME: i32 = 36; // a=encoding (external name in a template argument)
const N_OPLIT: i32 = 37; // a=name: operator"" suffix
const N_VENDOROP: i32 = 38; // a=name
const N_DEFARG: i32 = 39; // a=number b=entity
const N_REFTEMP: i32 = 40; // a=name b=ptr c=len (number text)
const N_NAMEQUAL: i32 = 41; // a=name b=qualifier word: a cv/ref-qualified <nested-name>
const N_BINDING: i32 = 42; // a=list of names: structured binding `[a, b]`
const N_VENDORTYPE: i32 = 43; // a=name: u <source-name>
// expressions (template arguments, array bounds, decltype)
const N_UNARY: i32 = 44; // a=AS string operator b=operand c=form (U_*)
const N_BINARY: i32 = 45; // a=AS string operator b=left c=right
const N_TERNARY: i32 = 46; // a=condition b=then c=else
const N_CALL: i32 = 47; // a=callee b=argument list
const N_CAST: i32 = 48; // a=type b=operand (c=1: b is a parenthesised list)
const N_NAMEDCAST: i32 = 49; // a=AS string (static_cast, ...) b=type c=operand
const N_FPARAM: i32 = 50; // a=parameter number (1-based)
const N_DECLTYPE: i32 = 51; // a=expression
const N_INITLIST: i32 = 52; // a=type (0: none) b=list
const N_SIZEOFPACK: i32 = 53; // a=template parameter
const N_NULLARY: i32 = 54; // a=AS string
const N_NEW: i32 = 55; // a=placement list b=type c=initializer (0, N_LIST for (...), N_INITLIST)

const U_PREFIX: i32 = 0; // op operand
const U_POSTFIX: i32 = 1; // operand op
const U_TYPE: i32 = 2; // op (type)
const U_GLOBAL: i32 = 3; // ::operand

// Qualifier words keep mangled order, because c++filt prints cv-qualifiers innermost first
// (`rK` prints `restrict const`): bits 0-1 hold a ref-qualifier (Q_LREF / Q_RREF), then up
// to ten 3-bit QC_* codes from bit 2 on, in mangled order.
const Q_LREF: i32 = 1;
const Q_RREF: i32 = 2;
const QC_CONST: i32 = 1;
const QC_VOLATILE: i32 = 2;
const QC_RESTRICT: i32 = 3;
const QC_NOEXCEPT: i32 = 4;
const QC_TXSAFE: i32 = 5;
const QC_MAX: i32 = 10;

// ---------------------------------------------------------------------------------------------
// Parser state

let ip: usize = 0; // cursor into the input
let iend: usize = 0; // one past the last input byte
let failed: bool = false;
let nNodes: i32 = 0;
let nList: i32 = 0;
let nSubs: i32 = 0;
let stkTop: i32 = 0;
let pDepth: i32 = 0;
let inConv: i32 = 0; // parsing a conversion operator's type: `T_` must not take template args
let lastName: i32 = 0; // last source name seen: constructors/destructors print it

@inline function kindOf(n: i32): i32 {
  return load<i32>(nodeBase + (<usize>n << 4));
}
@inline function fa(n: i32): i32 {
  return load<i32>(nodeBase + (<usize>n << 4), 4);
}
@inline function fb(n: i32): i32 {
  return load<i32>(nodeBase + (<usize>n << 4), 8);
}
@inline function fc(n: i32): i32 {
  return load<i32>(nodeBase + (<usize>n << 4), 12);
}

function mk(k: i32, a: i32, b: i32, c: i32): i32 {
  if (nNodes >= NODE_CAP) {
    failed = true;
    return 0;
  }
  const n = nNodes++;
  const p = nodeBase + (<usize>n << 4);
  store<i32>(p, k);
  store<i32>(p, a, 4);
  store<i32>(p, b, 8);
  store<i32>(p, c, 12);
  return n;
}

function qCount(q: i32): i32 {
  let n = 0;
  while (n < QC_MAX && ((q >>> (2 + 3 * n)) & 7) != 0) n++;
  return n;
}

// Appends a QC_* code; fails when a hostile input stacks more than QC_MAX of them.
function qAdd(q: i32, code: i32): i32 {
  const n = qCount(q);
  if (n >= QC_MAX) {
    failed = true;
    return q;
  }
  return q | (code << (2 + 3 * n));
}

// Bit set (1 << code) of the codes in a qualifier word.
function qSet(q: i32): i32 {
  let m = 0;
  for (let i = 0; i < QC_MAX; i++) {
    const c = (q >>> (2 + 3 * i)) & 7;
    if (c == 0) break;
    m |= 1 << c;
  }
  return m;
}

// [r] [V] [K] (any order, as c++filt accepts) plus Dx / Do when `fnQuals`.
function parseCvSeq(fnQuals: bool): i32 {
  let q = 0;
  while (!failed) {
    const c = peek();
    let code = 0;
    if (c == 0x72) code = QC_RESTRICT;
    else if (c == 0x56) code = QC_VOLATILE;
    else if (c == 0x4b) code = QC_CONST;
    else if (fnQuals && c == 0x44 && peek1() == 0x78) code = QC_TXSAFE;
    else if (fnQuals && c == 0x44 && peek1() == 0x6f) code = QC_NOEXCEPT;
    else break;
    ip += code >= QC_NOEXCEPT ? 2 : 1;
    q = qAdd(q, code);
  }
  return q;
}

@inline function strp(s: string): i32 {
  return <i32>changetype<usize>(s);
}
@inline function strOf(v: i32): string {
  return changetype<string>(<usize>v);
}

function pushTmp(n: i32): bool {
  if (stkTop >= STK_CAP) {
    failed = true;
    return false;
  }
  store<i32>(stkBase + (<usize>stkTop << 2), n);
  stkTop++;
  return true;
}

// Moves the temporaries pushed since `from` into the list pool.
function makeList(from: i32): i32 {
  const cnt = stkTop - from;
  if (nList + cnt > LIST_CAP) {
    failed = true;
    return 0;
  }
  const start = nList;
  memory.copy(listBase + (<usize>start << 2), stkBase + (<usize>from << 2), <usize>cnt << 2);
  nList += cnt;
  stkTop = from;
  return mk(N_LIST, start, cnt, 0);
}

@inline function listAt(l: i32, i: i32): i32 {
  return load<i32>(listBase + (<usize>(fa(l) + i) << 2));
}

function addSub(n: i32): bool {
  if (nSubs >= SUB_CAP) {
    failed = true;
    return false;
  }
  store<i32>(subBase + (<usize>nSubs << 2), n);
  nSubs++;
  return true;
}

// Recursive productions run one parse depth level deeper and fail past MAX_PARSE_DEPTH:
//   return ++pDepth <= MAX_PARSE_DEPTH ? ascend(<production>) : tooDeep();
@inline function ascend(r: i32): i32 {
  pDepth--;
  return r;
}
function tooDeep(): i32 {
  pDepth--;
  failed = true;
  return 0;
}

@inline function peek(): i32 {
  return ip < iend ? <i32>load<u8>(ip) : 0;
}
@inline function peek1(): i32 {
  return ip + 1 < iend ? <i32>load<u8>(ip + 1) : 0;
}
@inline function isDigit(c: i32): bool {
  return <u32>(c - 48) < 10;
}
@inline function isUpper(c: i32): bool {
  return <u32>(c - 65) < 26;
}
@inline function isLower(c: i32): bool {
  return <u32>(c - 97) < 26;
}
function expect(c: i32): bool {
  if (ip < iend && <i32>load<u8>(ip) == c) {
    ip++;
    return true;
  }
  return false;
}

// Non-negative decimal; -1 when there are no digits or the value does not fit in i32.
function parseNumber(): i32 {
  if (!isDigit(peek())) return -1;
  let v: i64 = 0;
  while (isDigit(peek())) {
    v = v * 10 + <i64>(peek() - 48);
    if (v > 0x7fffffff) return -1;
    ip++;
  }
  return <i32>v;
}

// <source-name> ::= <positive length number> <identifier>
function parseSourceName(): i32 {
  const n = parseNumber();
  if (n <= 0 || <usize>n > iend - ip) return 0;
  const p = ip;
  ip += <usize>n;
  let node: i32;
  if (n >= 10 && isAnonNamespace(p)) node = mk(N_LIT, strp("(anonymous namespace)"), 0, 0);
  else node = mk(N_NAME, <i32>p, n, 0);
  lastName = node;
  return node;
}

// GCC names anonymous namespaces _GLOBAL__N_1 (also with '.' or '$' as separator).
function isAnonNamespace(p: usize): bool {
  return (
    load<u8>(p) == 0x5f && load<u8>(p, 1) == 0x47 && load<u8>(p, 2) == 0x4c && load<u8>(p, 3) == 0x4f &&
    load<u8>(p, 4) == 0x42 && load<u8>(p, 5) == 0x41 && load<u8>(p, 6) == 0x4c && load<u8>(p, 7) == 0x5f &&
    (load<u8>(p, 8) == 0x2e || load<u8>(p, 8) == 0x5f || load<u8>(p, 8) == 0x24) && load<u8>(p, 9) == 0x4e
  );
}

// ---------------------------------------------------------------------------------------------
// Parser. Every function returns a node id, or 0 on failure.

// <encoding> ::= <name> <bare-function-type> | <name> | <special-name>
function parseEncoding(): i32 {
  return ++pDepth <= MAX_PARSE_DEPTH ? ascend(parseEncodingInner()) : tooDeep();
}

function parseEncodingInner(): i32 {
  const c = peek();
  if (c == 0x54 /* T */ || c == 0x47 /* G */) return parseSpecial();
  let name = parseName();
  if (name == 0) return 0;
  if (ip >= iend || peek() == 0x45 /* E */) return mk(N_ENC, name, 0, 0);
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

// Parameter types up to the end, 'E', a clone suffix or a ref-qualifier; a lone `v` means ().
function parseParams(): i32 {
  const from = stkTop;
  while (true) {
    const c = peek();
    if (ip >= iend || c == 0x45 /* E */ || c == 0x2e /* . */) break;
    if ((c == 0x52 /* R */ || c == 0x4f /* O */) && peek1() == 0x45) break;
    const t = parseType();
    if (t == 0 || !pushTmp(t)) return 0;
  }
  return paramList(from);
}

// The parameter types pushed since `from` as a list (0 when there are none); a lone `v` is ().
@inline function paramList(from: i32): i32 {
  const cnt = stkTop - from;
  if (cnt == 0) return 0;
  if (cnt == 1) {
    const t = load<i32>(stkBase + (<usize>from << 2));
    if (kindOf(t) == N_BUILTIN && fa(t) == 0x76 /* v */) stkTop = from;
  }
  return makeList(from);
}

// <name> ::= <nested-name> | <unscoped-name> | <unscoped-template-name> <template-args> | <local-name>
function parseName(): i32 {
  return ++pDepth <= MAX_PARSE_DEPTH ? ascend(parseNameInner()) : tooDeep();
}

function parseNameInner(): i32 {
  const c = peek();
  if (c == 0x4e /* N */) return parseNested();
  if (c == 0x5a /* Z */) return parseLocal();
  let node = 0;
  let isSub = false;
  if (c == 0x53 /* S */) {
    if (peek1() == 0x74 /* t */) {
      ip += 2;
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
  ip++; // N
  let q = parseCvSeq(false);
  if (peek() == 0x52 /* R */) {
    q |= Q_LREF;
    ip++;
  } else if (peek() == 0x4f /* O */) {
    q |= Q_RREF;
    ip++;
  }
  let prefix = 0;
  while (true) {
    const c = peek();
    if (c == 0x53 /* S */) {
      // a substitution (or St) may only start the prefix and is never a new candidate
      if (prefix != 0) return 0;
      if (peek1() == 0x74 /* t */) {
        ip += 2;
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
      ip++;
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
      ip++;
      break;
    }
    if (!addSub(prefix)) return 0;
  }
  // qualifiers of `this`: printed after the parameter list, or after the name of a type
  return q != 0 ? mk(N_NAMEQUAL, prefix, q, 0) : prefix;
}

// Whether a node can name a scope (namespace, class, template parameter, decltype, ...). A
// substitution naming a function or pointer type there never occurs in real manglings (and
// c++filt prints nonsense for it), so such input is rejected.
function isScopeLike(n: i32): bool {
  const k = kindOf(n);
  return k == N_NAME || k == N_LIT || k == N_NESTED || k == N_TEMPLATE || k == N_STDSUB || k == N_LOCAL ||
    k == N_TPARAM || k == N_ABITAG || k == N_LAMBDA || k == N_UNNAMED || k == N_DECLTYPE;
}

// C1 C2 C3 C4 C5 CI1 <type> CI2 <type> D0 D1 D2 D4 D5; prints the last source name seen.
function parseCtorDtor(): i32 {
  if (lastName == 0) return 0;
  const c = peek();
  const name = lastName;
  if (c == 0x43 /* C */) {
    ip++;
    const inheriting = expect(0x49 /* I */);
    const d = peek();
    if (d < 0x31 || d > 0x35) return 0;
    ip++;
    // an inheriting constructor is named after the base class it inherits from
    if (inheriting && parseType() == 0) return 0;
    return mk(N_CTOR, lastName, 0, 0);
  }
  ip++;
  const d = peek();
  if (d != 0x30 && d != 0x31 && d != 0x32 && d != 0x34 && d != 0x35) return 0;
  ip++;
  return mk(N_DTOR, name, 0, 0);
}

// <unqualified-name> ::= <operator-name> | <source-name> | <unnamed-type-name> | L <source-name>
//                        followed by any number of B <source-name> ABI tags
function parseUnqualified(): i32 {
  const c = peek();
  let n = 0;
  if (isDigit(c)) n = parseSourceName();
  else if (isLower(c)) n = parseOperator();
  else if (c == 0x55 /* U */) {
    const d = peek1();
    if (d == 0x74 /* t */) {
      ip += 2;
      const num = parseCompactNumber();
      if (num < 0) return 0;
      n = mk(N_UNNAMED, num + 1, 0, 0);
      if (n == 0 || !addSub(n)) return 0; // (closure types, unlike these, are not)
    } else if (d == 0x6c /* l */) {
      n = parseLambda();
    } else return 0;
  } else if (c == 0x44 /* D */ && peek1() == 0x43 /* C */) {
    // DC <source-name>+ E: structured binding declaration
    ip += 2;
    const from = stkTop;
    while (peek() != 0x45) {
      const b = parseSourceName();
      if (b == 0 || !pushTmp(b)) return 0;
    }
    ip++;
    if (stkTop == from) return 0;
    const l = makeList(from);
    if (l == 0) return 0;
    n = mk(N_BINDING, l, 0, 0);
  } else if (c == 0x4c /* L */) {
    // internal linkage (GCC)
    ip++;
    n = parseSourceName();
    if (n == 0 || !parseDiscriminator()) return 0;
  } else return 0;
  if (n == 0) return 0;
  while (peek() == 0x42 /* B */) {
    ip++;
    const hold = lastName; // a tag is not the class name for a constructor
    const tag = parseSourceName();
    lastName = hold;
    if (tag == 0) return 0;
    n = mk(N_ABITAG, n, tag, 0);
    if (n == 0) return 0;
  }
  return n;
}

// Ul <lambda-sig> E [<number>] _
function parseLambda(): i32 {
  ip += 2;
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
  ip++;
  let two = false;
  if (peek() == 0x5f) {
    ip++;
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

// <type> parsed with inConv = `conv` (1: a conversion operator's type, where `T_` takes no
// template arguments).
@inline function parseTypeConv(conv: i32): i32 {
  const save = inConv;
  inConv = conv;
  const t = parseType();
  inConv = save;
  return t;
}

function parseOperator(): i32 {
  const c1 = peek();
  const c2 = peek1();
  if (c1 == 0x63 /* c */ && c2 == 0x76 /* v */) {
    ip += 2;
    const t = parseTypeConv(1);
    if (t == 0) return 0;
    return mk(N_CONV, t, 0, 0);
  }
  if (c1 == 0x6c /* l */ && c2 == 0x69 /* i */) {
    ip += 2;
    const n = parseSourceName();
    if (n == 0) return 0;
    return mk(N_OPLIT, n, 0, 0);
  }
  if (c1 == 0x76 /* v */ && isDigit(c2)) {
    ip += 2;
    const n = parseSourceName();
    if (n == 0) return 0;
    return mk(N_VENDOROP, n, 0, 0);
  }
  const s = operatorSymbol((c1 << 8) | c2);
  if (s.length == 0) return 0;
  ip += 2;
  return mk(N_OPER, strp(s), 0, 0);
}

function operatorSymbol(op: i32): string {
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
  ip++; // Z
  const enc = parseEncoding();
  if (enc == 0 || !expect(0x45 /* E */)) return 0;
  if (peek() == 0x73 /* s */) {
    ip++;
    if (!parseDiscriminator()) return 0;
    return mk(N_LOCAL, enc, mk(N_LIT, strp("string literal"), 0, 0), 0);
  }
  let defArg = -1;
  if (peek() == 0x64 /* d */) {
    ip++;
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

// S_ | S <seq-id> _ | St Sa Sb Ss Si So Sd
function parseSubstitution(): i32 {
  ip++; // S
  const c = peek();
  if (c == 0x5f) {
    ip++;
    return nSubs > 0 ? load<i32>(subBase) : 0;
  }
  if (isDigit(c) || isUpper(c)) {
    let v: i64 = 0;
    while (true) {
      const d = peek();
      if (isDigit(d)) v = v * 36 + <i64>(d - 48);
      else if (isUpper(d)) v = v * 36 + <i64>(d - 55);
      else break;
      if (v > 0x7fffffff) return 0;
      ip++;
    }
    if (!expect(0x5f)) return 0;
    v += 1;
    if (v >= <i64>nSubs) return 0;
    return load<i32>(subBase + (<usize>v << 2));
  }
  ip++;
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
  lastName = mk(N_LIT, strp(base), 0, 0);
  return n;
}

// T_ | T <number> _
function parseTemplateParam(): i32 {
  ip++; // T
  let idx = 0;
  if (!expect(0x5f)) {
    const n = parseNumber();
    if (n < 0 || n == 0x7fffffff || !expect(0x5f)) return 0;
    idx = n + 1;
  }
  return mk(N_TPARAM, idx, 0, 0);
}

// I <template-arg>+ E, or with `pack` the J <template-arg>* E of an argument pack
function parseTemplateArgs(pack: bool): i32 {
  if (++pDepth > MAX_PARSE_DEPTH) return tooDeep();
  ip++; // I or J
  const saveConv = inConv;
  const saveName = lastName;
  if (!pack) inConv = 0;
  const l = parseSeq(SEQ_ARGS, 0x45 /* E */);
  inConv = saveConv;
  // arguments must not change the name a later constructor prints (a pack is part of its list)
  if (!pack) lastName = saveName;
  return ascend(l);
}

// [<name>] <template-args>: `n` followed by optional template arguments; 0 on failure.
@inline function withArgs(n: i32): i32 {
  if (n == 0 || peek() != 0x49 /* I */) return n;
  const args = parseTemplateArgs(false);
  if (args == 0) return 0;
  return mk(N_TEMPLATE, n, args, 0);
}

// <template-arg> ::= <type> | X <expression> E | <expr-primary> | J <template-arg>* E | I <template-arg>* E
function parseTemplateArg(): i32 {
  const c = peek();
  if (c == 0x4c /* L */) return parseExprPrimary();
  if (c == 0x58 /* X */) {
    ip++;
    const e = parseExpression();
    if (e == 0 || !expect(0x45)) return 0;
    return e;
  }
  if (c == 0x4a /* J */ || c == 0x49 /* I: argument pack in pre-standard GCC manglings */) {
    return parseTemplateArgs(true);
  }
  return parseType();
}

// <expression>: the subset that shows up in real symbols (operators, calls, casts, sizeof,
// member access, unresolved names, function parameters, literals); anything else fails.
function parseExpression(): i32 {
  return ++pDepth <= MAX_PARSE_DEPTH ? ascend(parseExpressionInner()) : tooDeep();
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
      ip += 2;
      if (expect(0x5f)) return mk(N_FPARAM, 1, 0, 0);
      const n = parseNumber();
      if (n < 0 || n > 0x7ffffff0 || !expect(0x5f)) return 0;
      return mk(N_FPARAM, n + 2, 0, 0);
    }
    case 0x7372: // sr: unresolved qualified name
      return parseUnresolved();
    case 0x6773: // gs: ::expr
      ip += 2;
      return parseUnaryExpr("::", U_GLOBAL);
    case 0x6f6e: { // on <operator-name> [<template-args>]
      ip += 2;
      return withArgs(parseOperator());
    }
    case 0x7370: { // sp <expression>: pack expansion
      ip += 2;
      const e = parseExpression();
      if (e == 0) return 0;
      return mk(N_PACKEXP, e, 0, 0);
    }
    case 0x735a: { // sZ <template-param>: sizeof...(pack)
      ip += 2;
      if (peek() != 0x54) return 0;
      const t = parseTemplateParam();
      if (t == 0) return 0;
      return mk(N_SIZEOFPACK, t, 0, 0);
    }
    case 0x7374: // st <type>: sizeof (type)
    case 0x6174: { // at <type>: alignof (type)
      ip += 2;
      const t = parseType();
      if (t == 0) return 0;
      return mk(N_UNARY, strp(op == 0x7374 ? "sizeof " : "alignof "), t, U_TYPE);
    }
    case 0x7472: // tr: rethrow
      ip += 2;
      return mk(N_NULLARY, strp("throw"), 0, 0);
    case 0x746c: // tl <type> <expression>* E: T{...}
    case 0x696c: { // il <expression>* E: {...}
      ip += 2;
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
      ip += 2;
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
      ip += 2;
      const t = parseType();
      if (t == 0) return 0;
      const e = parseExpression();
      if (e == 0) return 0;
      const name = op == 0x6463 ? "dynamic_cast" : op == 0x7363 ? "static_cast" : op == 0x7263 ? "reinterpret_cast" : "const_cast";
      return mk(N_NAMEDCAST, strp(name), t, e);
    }
    case 0x636c: { // cl <expression>+ E: call
      ip += 2;
      const f = parseExpression();
      if (f == 0) return 0;
      const l = parseExprList();
      if (l == 0) return 0;
      return mk(N_CALL, f, l, 0);
    }
    case 0x6474: case 0x7074: { // dt / pt <expression> <unresolved-name>: member access
      ip += 2;
      const l = parseExpression();
      if (l == 0) return 0;
      const r = withArgs(parseUnqualified());
      if (r == 0) return 0;
      return mk(N_BINARY, strp(op == 0x6474 ? "." : "->"), l, r);
    }
    case 0x7175: { // qu: a ? b : c
      ip += 2;
      const x = parseExpression();
      if (x == 0) return 0;
      const y = parseExpression();
      if (y == 0) return 0;
      const z = parseExpression();
      if (z == 0) return 0;
      return mk(N_TERNARY, x, y, z);
    }
    case 0x7070: case 0x6d6d: { // pp_ / mm_ prefix, pp / mm postfix
      ip += 2;
      const prefix = expect(0x5f);
      return parseUnaryExpr(op == 0x7070 ? "++" : "--", prefix ? U_PREFIX : U_POSTFIX);
    }
    case 0x6e77: case 0x6e61: { // nw / na <expression>* _ <type> (E | pi <expression>* E | il ...)
      ip += 2;
      const place = parseSeq(SEQ_EXPRS, 0x5f);
      if (place == 0) return 0;
      const t = parseType();
      if (t == 0) return 0;
      let init = 0;
      if (!expect(0x45)) {
        if (peek() == 0x70 && peek1() == 0x69) {
          ip += 2;
          init = parseExprList();
        } else if (peek() == 0x69 && peek1() == 0x6c) {
          init = parseExpression();
        }
        if (init == 0) return 0;
      }
      return mk(N_NEW, place, t, init);
    }
    case 0x7477: // tw <expression>: throw
      ip += 2;
      return parseUnaryExpr("throw ", U_PREFIX);
  }
  let sym = unaryOperatorSymbol(op);
  if (sym.length > 0) {
    ip += 2;
    return parseUnaryExpr(sym, U_PREFIX);
  }
  sym = binaryOperatorSymbol(op);
  if (sym.length > 0) {
    ip += 2;
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
const SEQ_EXPRS: i32 = 0; // <expression>*
const SEQ_ARGS: i32 = 1; // <template-arg>*
const SEQ_PARAMS: i32 = 2; // <type>+ of a parameter list (see paramList)

// Elements of kind `what` up to and including the `end` byte, as a list node; 0 on failure.
@inline function parseSeq(what: i32, end: i32): i32 {
  const from = stkTop;
  while (peek() != end) {
    if (ip >= iend) return 0;
    const e = what == SEQ_EXPRS ? parseExpression() : what == SEQ_ARGS ? parseTemplateArg() : parseType();
    if (e == 0 || !pushTmp(e)) return 0;
  }
  ip++;
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
    ip += 2;
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
  ip += 2; // sr
  let scope = 0;
  if (expect(0x4e /* N */)) {
    // c++filt reads N...E as a nested type: each qualifier level not followed by E, and the
    // whole, become substitution candidates
    scope = parseType();
    if (scope == 0) return 0;
    let levels = 0;
    while (peek() != 0x45) {
      if (ip >= iend) return 0;
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
    ip++;
    if (levels > 0 && !addSub(scope)) return 0;
  } else if (isDigit(peek())) {
    while (peek() != 0x45) {
      if (ip >= iend) return 0;
      const q = parseSimpleId();
      if (q == 0) return 0;
      scope = scope == 0 ? q : mk(N_NESTED, scope, q, 0);
    }
    ip++;
  } else {
    scope = parseType();
    if (scope == 0) return 0;
  }
  return parseBaseUnresolved(scope);
}

// L <type> <value> E | L _Z <encoding> E | L <nullptr type> E
function parseExprPrimary(): i32 {
  return ++pDepth <= MAX_PARSE_DEPTH ? ascend(parseExprPrimaryInner()) : tooDeep();
}

function parseExprPrimaryInner(): i32 {
  ip++; // L
  if ((peek() == 0x5f && peek1() == 0x5a) || peek() == 0x5a) {
    if (peek() == 0x5f) ip++;
    ip++;
    const enc = parseEncoding();
    if (enc == 0 || !expect(0x45)) return 0;
    return mk(N_EXTNAME, enc, 0, 0);
  }
  const t = parseType();
  if (t == 0) return 0;
  if (kindOf(t) == N_BUILTIN && fa(t) == 256 + 0x6e /* Dn */ && expect(0x45)) return t;
  let k = N_LITERAL;
  if (expect(0x6e /* n */)) k = N_LITNEG;
  const start = ip;
  while (peek() != 0x45) {
    if (ip >= iend || peek() == 0) return 0;
    ip++;
  }
  if (ip == start) return 0;
  const len = <i32>(ip - start);
  ip++;
  return mk(k, t, <i32>start, len);
}

// <type>
function parseType(): i32 {
  return ++pDepth <= MAX_PARSE_DEPTH ? ascend(parseTypeInner()) : tooDeep();
}

function parseTypeInner(): i32 {
  const c = peek();
  switch (c) {
    case 0x76: case 0x77: case 0x62: case 0x63: case 0x61: case 0x68: case 0x73: case 0x74:
    case 0x69: case 0x6a: case 0x6c: case 0x6d: case 0x78: case 0x79: case 0x6e: case 0x6f:
    case 0x66: case 0x64: case 0x65: case 0x67: case 0x7a: {
      // builtin types are never substitution candidates
      ip++;
      return mk(N_BUILTIN, c, 0, 0);
    }
    case 0x75: {
      // u <source-name>: vendor extended type
      ip++;
      const name = parseSourceName();
      if (name == 0) return 0;
      const n = mk(N_VENDORTYPE, name, 0, 0);
      if (n == 0 || !addSub(n)) return 0;
      return n;
    }
    case 0x72: case 0x56: case 0x4b:
      return parseQualified();
    case 0x50: case 0x52: case 0x4f: case 0x43: case 0x47: {
      ip++;
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
      ip++;
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
      if (peek() != 0x49 || inConv != 0) return t;
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
      ip++;
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
      ip += 2;
      return mk(N_BUILTIN, 256 + d, 0, 0);
    }
    case 0x46: {
      // DF <number> _ | DF <number> x | DF16b
      ip += 2;
      const start = ip;
      while (isDigit(peek())) ip++;
      const len = <i32>(ip - start);
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
      ip += 2;
      const t = parseType();
      if (t == 0) return 0;
      const n = mk(N_PACKEXP, t, 0, 0);
      if (n == 0 || !addSub(n)) return 0;
      return n;
    }
    case 0x76: {
      // Dv <number> _ <type>: vector type
      ip += 2;
      const start = ip;
      while (isDigit(peek())) ip++;
      const len = <i32>(ip - start);
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
      ip += 2;
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
  if (q == 0 || failed) return 0;
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
  ip++; // F
  expect(0x59); // extern "C" is not printed
  const ret = parseType();
  if (ret == 0) return 0;
  const params = parseParams();
  if (params == 0) return 0;
  let q = 0;
  if (peek() == 0x52 && peek1() == 0x45) {
    q = Q_LREF;
    ip++;
  } else if (peek() == 0x4f && peek1() == 0x45) {
    q = Q_RREF;
    ip++;
  }
  if (!expect(0x45)) return 0;
  return mk(N_FUNC, ret, params, q);
}

// A <number> _ <type> | A _ <type>
function parseArray(): i32 {
  ip++; // A
  let dim = 0;
  if (isDigit(peek())) {
    const start = ip;
    while (isDigit(peek())) ip++;
    dim = mk(N_NAME, <i32>start, <i32>(ip - start), 0);
  } else if (peek() != 0x5f) {
    dim = parseExpression();
    if (dim == 0) return 0;
  }
  if (!expect(0x5f)) return 0;
  const t = parseType();
  if (t == 0) return 0;
  return mk(N_ARRAY, t, dim, 0);
}

// <special-name>: vtables, typeinfo, thunks, guard variables, ...
function parseSpecial(): i32 {
  const c = peek();
  const d = peek1();
  ip += 2;
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
        ip++;
        if (!parseCallOffset(k1)) return 0;
        const k2 = peek();
        ip++;
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
      const start = ip;
      while (isDigit(peek())) ip++;
      return mk(N_REFTEMP, n, <i32>start, <i32>(ip - start));
    }
    case 0x41: return special("hidden alias for ", parseEncoding());
    case 0x54: {
      const e = peek();
      ip++;
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

// ---------------------------------------------------------------------------------------------
// Printer state

let outBase: usize = 0;
let oCap: u32 = 0;
let outPos: u32 = 0;
let prDepth: i32 = 0;
let work: i32 = 0;
let workMax: i32 = 0;
let tDepth: i32 = 0; // number of template-argument scopes in effect
let packIdx: i32 = 0; // element of an argument pack being printed by a pack expansion
let inLambda: i32 = 0; // printing a lambda signature: template params print as auto:N
let lastCh: i32 = 0;
let pendQ: i32 = 0; // qualifiers of an enclosing N_QUAL still to be printed
// c++filt keeps enclosing pointer/reference/cv declarators pending while it prints a lambda's
// signature, and an array or function declarator in there then prints them as its own
// (`{lambda(auto:1 (&&) [auto:2])#2}` for a reference to the closure). That output is wrong,
// so we refuse (-1) instead of imitating it: modDepth counts pending declarators, `leak`
// marks a lambda signature printed under some.
let modDepth: i32 = 0;
let leak: bool = false;
let curTmpl: i32 = 0; // argument list of the innermost template being printed
let rLvl: i32 = 0; // scope level of the node returned by resolve()

// List separators are emitted lazily: c++filt removes the ", " before trailing elements that
// print nothing (empty packs) but keeps it before inner ones (`f(int, , int)`). Pending
// separators are written only once something follows, so a retracted one can never make
// an otherwise fitting name overflow the window.
let sepPending: i32 = 0;
let sepFlushes: i32 = 0;

function flushSep(): void {
  const n = sepPending;
  sepPending = 0;
  sepFlushes++;
  for (let i = 0; i < n; i++) {
    putc(0x2c);
    putc(0x20);
  }
}

function putc(c: i32): void {
  if (sepPending != 0) flushSep();
  if (outPos >= oCap) {
    failed = true;
    return;
  }
  store<u8>(outBase + <usize>outPos, <u8>c);
  outPos++;
  lastCh = c;
}

// c++filt decides spacing on the last character *appended*, which is still the space of a
// retracted ", " (so `A<B<int>, pack{}>` prints `A<B<int>>`); mirror that.
@inline function lastc(): i32 {
  return sepPending != 0 ? 0x20 : lastCh;
}

// Appends an ASCII string literal (stored as UTF-16 in static data; no allocation).
function emitS(s: string): void {
  if (sepPending != 0) flushSep();
  const n = <u32>s.length;
  if (n == 0) return;
  if (<u64>outPos + <u64>n > <u64>oCap) {
    failed = true;
    return;
  }
  const src = changetype<usize>(s);
  const dst = outBase + <usize>outPos;
  for (let i: usize = 0; i < <usize>n; i++) store<u8>(dst + i, <u8>load<u16>(src + (i << 1)));
  outPos += n;
  lastCh = <i32>load<u16>(src + (<usize>(n - 1) << 1));
}

function emitBytes(p: usize, n: i32): void {
  if (sepPending != 0) flushSep();
  if (<u64>outPos + <u64>n > <u64>oCap) {
    failed = true;
    return;
  }
  if (n <= 0) return;
  memory.copy(outBase + <usize>outPos, p, <usize>n);
  outPos += <u32>n;
  lastCh = <i32>load<u8>(p + <usize>n - 1);
}

function emitNum(v: i32): void {
  if (v >= 10) emitNum(v / 10);
  putc(48 + (v % 10));
}

// `prefix` <v> `}`: a numbered entity (`{unnamed type#2}`, `{parm#1}`, `{lambda(...)#1}`).
@inline function emitNumbered(prefix: string, v: i32): void {
  emitS(prefix);
  emitNum(v);
  putc(0x7d);
}

// Prints a qualifier word innermost (last mangled) first. With `dedupe`, like c++filt for
// types, a qualifier already pending from an enclosing one (`skip`, a qSet mask) or repeated
// further out prints once.
function emitQuals(q: i32, dedupe: bool, skip: i32): void {
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

function builtinText(code: i32): string {
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

// Template-argument scopes: printing a function template's encoding makes its arguments the
// meaning of T_; printing an argument pops one scope (it may itself name an outer parameter).
function tPush(args: i32): i32 {
  if (tDepth >= TSTK_CAP) {
    failed = true;
    return 0;
  }
  const slot = tstkBase + (<usize>tDepth << 2);
  const old = load<i32>(slot);
  store<i32>(slot, args);
  tDepth++;
  return old;
}

function tPop(old: i32): void {
  tDepth--;
  store<i32>(tstkBase + (<usize>tDepth << 2), old);
}

// c++filt (libiberty's d_saved_scope): a reference to a template parameter (`OT_`) remembers
// the template scopes in effect when it is first printed; printed again through a substitution,
// from outside itself, its parameter means what it meant there, not what it means here.
let scopeCount: i32 = 0;
let swapTop: i32 = 0;
const scopeKey = memory.data(SCOPE_CAP * 4); // the reference's template-parameter node
const scopeLvl = memory.data(SCOPE_CAP * 4); // tDepth when first printed
const scopeActive = memory.data(SCOPE_CAP * 4); // prints of the reference in progress
const swapLvl = memory.data(SWAP_CAP * 4);
const swapLen = memory.data(SWAP_CAP * 4);

// Before printing a half of reference `n` to a template parameter: returns a token for
// {@link scopeLeave} (-1: nothing to undo), the index of its scope, + SCOPE_CAP when restored.
function scopeEnter(n: i32): i32 {
  const sub = fa(n);
  let i = 0;
  while (i < scopeCount && load<i32>(scopeKey + (<usize>i << 2)) != sub) i++;
  const active = scopeActive + (<usize>i << 2);
  if (i == scopeCount) {
    if (scopeCount == SCOPE_CAP) return -1;
    scopeCount++;
    store<i32>(scopeKey + (<usize>i << 2), sub);
    store<i32>(scopeLvl + (<usize>i << 2), tDepth);
    memory.copy(scopeBase + (<usize>(i * TSTK_CAP) << 2), tstkBase, <usize>tDepth << 2);
    store<i32>(active, 1);
    return i;
  }
  // beneath itself (or no room to restore): the scopes in effect stay
  if (load<i32>(active) > 0 || swapTop == SWAP_CAP) {
    store<i32>(active, load<i32>(active) + 1);
    return i;
  }
  const lvl = load<i32>(scopeLvl + (<usize>i << 2));
  const len = lvl > tDepth ? lvl : tDepth;
  memory.copy(swapBase + (<usize>(swapTop * TSTK_CAP) << 2), tstkBase, <usize>len << 2);
  store<i32>(swapLvl + (<usize>swapTop << 2), tDepth);
  store<i32>(swapLen + (<usize>swapTop << 2), len);
  swapTop++;
  memory.copy(tstkBase, scopeBase + (<usize>(i * TSTK_CAP) << 2), <usize>lvl << 2);
  tDepth = lvl;
  store<i32>(active, 1);
  return i + SCOPE_CAP;
}

function scopeLeave(tok: i32): void {
  if (tok < 0) return;
  const i = tok % SCOPE_CAP;
  const active = scopeActive + (<usize>i << 2);
  store<i32>(active, load<i32>(active) - 1);
  if (tok < SCOPE_CAP) return;
  swapTop--;
  const len = load<i32>(swapLen + (<usize>swapTop << 2));
  memory.copy(tstkBase, swapBase + (<usize>(swapTop * TSTK_CAP) << 2), <usize>len << 2);
  tDepth = load<i32>(swapLvl + (<usize>swapTop << 2));
}

/** A reference whose referent is a template parameter: c++filt keeps the scope it was first printed in. */
// @ts-ignore: decorator
@inline function isRefToParam(n: i32): bool {
  const k = kindOf(n);
  return (k == N_LREF || k == N_RREF) && kindOf(fa(n)) == N_TPARAM && inLambda == 0;
}

// Follows template parameters to the argument they denote; sets rLvl to the scope level in
// which the result must be printed. Returns 0 (and fails) when a parameter has no argument.
function resolve(n: i32, lvl: i32): i32 {
  while (n != 0 && kindOf(n) == N_TPARAM && inLambda == 0) {
    if (lvl <= 0) {
      failed = true;
      rLvl = 0;
      return 0;
    }
    const args = load<i32>(tstkBase + (<usize>(lvl - 1) << 2));
    const idx = fa(n);
    if (idx >= fb(args)) {
      failed = true;
      rLvl = 0;
      return 0;
    }
    let a = listAt(args, idx);
    if (kindOf(a) == N_LIST) {
      if (packIdx >= fb(a)) {
        failed = true;
        rLvl = 0;
        return 0;
      }
      a = listAt(a, packIdx);
    }
    n = a;
    lvl--;
  }
  rLvl = lvl;
  return n;
}

// Function or array types print inside a parenthesised declarator when pointed/referred to.
function isParenTarget(n: i32, lvl: i32): bool {
  const r = resolve(n, lvl);
  if (r == 0) return false;
  const k = kindOf(r);
  if (k == N_FUNC || k == N_ARRAY) return true;
  if (k == N_QUAL) {
    const c = unwrapQual(fa(r), rLvl);
    return c != 0 && (kindOf(c) == N_FUNC || kindOf(c) == N_ARRAY);
  }
  return false;
}

function unwrapQual(n: i32, lvl: i32): i32 {
  let r = resolve(n, lvl);
  for (let guard = 0; r != 0 && kindOf(r) == N_QUAL && guard < 64; guard++) r = resolve(fa(r), rLvl);
  return r;
}

function isFuncish(n: i32, lvl: i32): bool {
  const r = resolve(n, lvl);
  if (r == 0) return false;
  const k = kindOf(r);
  if (k == N_FUNC) return true;
  if (k == N_QUAL) {
    const c = unwrapQual(fa(r), rLvl);
    return c != 0 && kindOf(c) == N_FUNC;
  }
  return false;
}

// Whether a type's printed form ends its left part inside a declarator, e.g. `int (*` for a
// pointer to function; then no space separates it from what follows.
function hasParenDecl(n: i32, lvl: i32): bool {
  for (let guard = 0; guard < MAX_PRINT_DEPTH; guard++) {
    const r = resolve(n, lvl);
    if (r == 0) return false;
    const l = rLvl;
    const k = kindOf(r);
    if (k == N_PTR || k == N_LREF || k == N_RREF) {
      if (isParenTarget(fa(r), l)) return true;
      n = fa(r);
      lvl = l;
    } else if (k == N_PTRMEM) {
      if (isParenTarget(fb(r), l)) return true;
      n = fb(r);
      lvl = l;
    } else if (k == N_QUAL || k == N_VQUAL) {
      n = fa(r);
      lvl = l;
    } else return false;
  }
  return false;
}

function enter(): bool {
  if (failed) return false;
  if (prDepth >= MAX_PRINT_DEPTH || ++work > workMax) {
    failed = true;
    return false;
  }
  prDepth++;
  return true;
}

function pr(n: i32): void {
  if (!enter()) return;
  prLeftInner(n);
  prRightInner(n);
  prDepth--;
}

function prLeft(n: i32): void {
  if (!enter()) return;
  prLeftInner(n);
  prDepth--;
}

function prRight(n: i32): void {
  if (!enter()) return;
  prRightInner(n);
  prDepth--;
}

// `open` n `close`: a node in brackets (characters).
@inline function prIn(open: i32, n: i32, close: i32): void {
  putc(open);
  pr(n);
  putc(close);
}

// `open` list `close`: a comma-separated list in brackets (characters).
@inline function prListIn(open: i32, l: i32, close: i32): void {
  putc(open);
  prList(l);
  putc(close);
}

// `text` n `close`: a node after some fixed text (`decltype (`, `[abi:`), then a closing character.
@inline function prAfter(text: string, n: i32, close: i32): void {
  emitS(text);
  pr(n);
  putc(close);
}

function prLeftAt(n: i32, lvl: i32): void {
  const save = tDepth;
  tDepth = lvl;
  prLeft(n);
  tDepth = save;
}

function prRightAt(n: i32, lvl: i32): void {
  const save = tDepth;
  tDepth = lvl;
  prRight(n);
  tDepth = save;
}

// Comma-separated. Empty packs print nothing; like c++filt, only the separators *trailing*
// the last element that printed something are dropped (`f<, int>`, `f(int, , int)`, `f(int)`).
function prList(l: i32): void {
  const cnt = fb(l);
  if (cnt == 0) return;
  const base = sepPending;
  const flushes = sepFlushes;
  pr(listAt(l, 0));
  for (let i = 1; i < cnt; i++) {
    if (failed) return;
    sepPending++;
    pr(listAt(l, i));
  }
  // drop this list's own trailing separators (the last appended char was their space)
  const keep = sepFlushes != flushes ? 0 : base;
  if (sepPending > keep) {
    sepPending = keep;
    lastCh = 0x20;
  }
}

// A parameter list `(...)`, printed without the declarators pending around its function type.
function prParams(l: i32): void {
  const saveMods = modDepth;
  const saveLeak = leak;
  modDepth = 0;
  leak = false;
  prListIn(0x28, l, 0x29);
  modDepth = saveMods;
  leak = saveLeak;
}

function spaceBeforeParen(): void {
  const l = lastc();
  if (l != 0x20 && l != 0x28 && l != 0x2a) putc(0x20);
}

// Reference collapsing, one level deep like c++filt: when the referred-to type (after
// resolving a template parameter) is `&`, or the same kind, it is printed instead; `&` to
// `&&` prints `&` over the inner type. (`&& (& T)` with T = `X&` thus prints `X&&`.)
let refChild: i32 = 0;
let refLvl: i32 = 0;
function collapseRef(n: i32): i32 {
  const k = kindOf(n);
  let c = fa(n);
  let lvl = tDepth;
  if (k != N_PTR) {
    let sub = c;
    let subLvl = lvl;
    if (kindOf(sub) == N_TPARAM && inLambda == 0) {
      sub = resolve(sub, lvl);
      subLvl = rLvl;
    }
    if (sub != 0) {
      const sk = kindOf(sub);
      if (sk == N_LREF || sk == k) {
        refChild = fa(sub);
        refLvl = subLvl;
        return sk;
      }
      if (sk == N_RREF) {
        refChild = fa(sub);
        refLvl = subLvl;
        return N_LREF;
      }
    }
  }
  refChild = c;
  refLvl = lvl;
  return k;
}

function prEnc(n: i32, withRet: bool): void {
  const name = fa(n);
  const f = fb(n);
  if (f == 0) {
    pr(name);
    return;
  }
  // the arguments of a function template are what T_ means in its signature and name
  let targs = 0;
  let m = name;
  for (let guard = 0; guard < 1024; guard++) {
    const k = kindOf(m);
    if (k == N_LOCAL || k == N_DEFARG) m = fb(m);
    else if (k == N_NAMEQUAL) m = fa(m);
    else break;
  }
  if (kindOf(m) == N_TEMPLATE) targs = fb(m);
  const outer = tDepth;
  let old = 0;
  if (targs != 0) old = tPush(targs);
  const ret = withRet ? fa(f) : 0;
  if (ret != 0) {
    prLeft(ret);
    if (!hasParenDecl(ret, tDepth)) putc(0x20);
  }
  // c++filt prints the name itself in the enclosing scope (a T_ among the function's own
  // template arguments is an error there); only a conversion operator's type sees them
  const inner = tDepth;
  tDepth = outer;
  pr(name);
  tDepth = inner;
  prParams(fb(f));
  emitQuals(fc(f), false, 0);
  if (ret != 0) prRight(ret);
  if (targs != 0 && !failed) tPop(old);
}

// Parameter list and qualifiers of a function type reached through `f` (possibly wrapped in
// qualifiers and template parameters): `(int) const &`.
function prFuncRight(f: i32): void {
  let r = resolve(f, tDepth);
  let l = rLvl;
  let wrap0 = 0;
  let wrap1 = 0; // up to two qualifier wrappers (more only via hostile template cycles)
  let nwrap = 0;
  while (r != 0 && kindOf(r) == N_QUAL) {
    if (nwrap == 0) wrap0 = fb(r);
    else if (nwrap == 1) wrap1 = fb(r);
    else {
      failed = true;
      return;
    }
    nwrap++;
    r = resolve(fa(r), rLvl);
    l = rLvl;
  }
  if (r == 0) return;
  if (kindOf(r) != N_FUNC) {
    failed = true;
    return;
  }
  const save = tDepth;
  tDepth = l;
  prParams(fb(r));
  const own = fc(r);
  emitQuals(own & ~3, false, 0);
  if (nwrap > 1) emitQuals(wrap1, false, 0);
  if (nwrap > 0) emitQuals(wrap0, false, 0);
  emitQuals(own & 3, false, 0);
  prRight(fa(r));
  tDepth = save;
}

function prLiteral(n: i32): void {
  const t = fa(n);
  const neg = kindOf(n) == N_LITNEG;
  const p = <usize>fb(n);
  const len = fc(n);
  let suffix = "";
  let float = false;
  if (kindOf(t) == N_BUILTIN) {
    const code = fa(t);
    switch (code) {
      case 0x69: // int
        if (neg) putc(0x2d);
        emitBytes(p, len);
        return;
      case 0x6a:
        suffix = "u";
        break;
      case 0x6c:
        suffix = "l";
        break;
      case 0x6d:
        suffix = "ul";
        break;
      case 0x78:
        suffix = "ll";
        break;
      case 0x79:
        suffix = "ull";
        break;
      case 0x62: // bool
        if (!neg && len == 1 && load<u8>(p) == 0x30) {
          emitS("false");
          return;
        }
        if (!neg && len == 1 && load<u8>(p) == 0x31) {
          emitS("true");
          return;
        }
        break;
      case 0x66: case 0x64: case 0x65: case 0x67:
        float = true;
        break;
    }
    if (suffix.length > 0) {
      if (neg) putc(0x2d);
      emitBytes(p, len);
      emitS(suffix);
      return;
    }
  }
  prIn(0x28, t, 0x29);
  if (neg) putc(0x2d);
  if (float) putc(0x5b);
  emitBytes(p, len);
  if (float) putc(0x5d);
}

// Finds the argument pack a pack expansion pattern refers to (0 if none).
function findPack(n: i32, lvl: i32, depth: i32): i32 {
  if (n == 0 || depth > MAX_PRINT_DEPTH || failed) return 0;
  if (++work > workMax) {
    failed = true;
    return 0;
  }
  const k = kindOf(n);
  switch (k) {
    case N_TPARAM: {
      if (inLambda != 0 || lvl <= 0) return 0;
      const args = load<i32>(tstkBase + (<usize>(lvl - 1) << 2));
      if (fa(n) >= fb(args)) return 0;
      const a = listAt(args, fa(n));
      return kindOf(a) == N_LIST ? a : 0;
    }
    case N_LIST: {
      const cnt = fb(n);
      for (let i = 0; i < cnt; i++) {
        const r = findPack(listAt(n, i), lvl, depth + 1);
        if (r != 0) return r;
      }
      return 0;
    }
    case N_NESTED: case N_TEMPLATE: case N_FUNC: case N_ARRAY: case N_PTRMEM: case N_ENC:
    case N_LOCAL: case N_ABITAG: case N_VQUAL: case N_VECTOR: {
      const r = findPack(fa(n), lvl, depth + 1);
      if (r != 0) return r;
      return findPack(fb(n), lvl, depth + 1);
    }
    case N_PACKEXP:
      return 0; // an inner expansion owns its pack (c++filt prints the outer as `(...)...`)
    case N_QUAL: case N_PTR: case N_LREF: case N_RREF: case N_COMPLEX: case N_IMAG: case N_NAMEQUAL:
    case N_CONV: case N_EXTNAME: case N_LITERAL: case N_LITNEG: case N_DECLTYPE:
      return findPack(fa(n), lvl, depth + 1);
    case N_UNARY:
      return findPack(fb(n), lvl, depth + 1);
    case N_BINARY: case N_NAMEDCAST: {
      const r = findPack(fb(n), lvl, depth + 1);
      if (r != 0) return r;
      return findPack(fc(n), lvl, depth + 1);
    }
    case N_TERNARY: {
      let r = findPack(fa(n), lvl, depth + 1);
      if (r == 0) r = findPack(fb(n), lvl, depth + 1);
      if (r == 0) r = findPack(fc(n), lvl, depth + 1);
      return r;
    }
    case N_CALL: case N_CAST: case N_INITLIST: case N_NEW: {
      const r = findPack(fa(n), lvl, depth + 1);
      if (r != 0) return r;
      return findPack(fb(n), lvl, depth + 1);
    }
  }
  return 0;
}

function prLeftInner(n: i32): void {
  // c++filt prints a cv-qualifier once when a qualified template argument is qualified
  // again (`T const&` with T = `X const` prints `X const&`)
  const pend = pendQ;
  pendQ = 0;
  switch (kindOf(n)) {
    case N_NAME:
      emitBytes(<usize>fa(n), fb(n));
      break;
    case N_LIT:
    case N_STDSUB:
      emitS(strOf(fa(n)));
      break;
    case N_BUILTIN:
      emitS(builtinText(fa(n)));
      break;
    case N_FLOATN:
      emitS("_Float");
      emitBytes(<usize>fa(n), fb(n));
      if (fc(n) != 0) putc(0x78);
      break;
    case N_NESTED:
      pr(fa(n));
      emitS("::");
      pr(fb(n));
      break;
    case N_TEMPLATE: {
      // a template is printed like a plain name: no pending declarators inside
      const saveMods = modDepth;
      const saveLeak = leak;
      const saveTmpl = curTmpl;
      modDepth = 0;
      leak = false;
      curTmpl = fb(n);
      pr(fa(n));
      if (lastc() == 0x3c) putc(0x20);
      putc(0x3c);
      prList(fb(n));
      if (lastc() == 0x3e) putc(0x20);
      putc(0x3e);
      modDepth = saveMods;
      leak = saveLeak;
      curTmpl = saveTmpl;
      break;
    }
    case N_LIST:
      prList(n);
      break;
    case N_QUAL: {
      const c = fa(n);
      if (isFuncish(c, tDepth)) {
        if (fc(n) == 0) {
          failed = true;
          break;
        }
        prLeft(c); // function qualifiers follow the parameter list
      } else {
        const q = fb(n);
        pendQ = qSet(q) | pend;
        modDepth++;
        prLeft(c);
        modDepth--;
        emitQuals(q, true, pend);
      }
      break;
    }
    case N_PTR:
    case N_LREF:
    case N_RREF: {
      const tok = isRefToParam(n) ? scopeEnter(n) : -1;
      const k = collapseRef(n);
      const c = refChild;
      const lvl = refLvl;
      const paren = isParenTarget(c, lvl);
      modDepth++;
      prLeftAt(c, lvl);
      modDepth--;
      if (paren) {
        // c++filt: always " (" before an array declarator, a space before a function one
        // unless after '(' or '*'
        if (kindOf(unwrapQual(c, lvl)) == N_ARRAY) putc(0x20);
        else spaceBeforeParen();
        putc(0x28);
      }
      if (k == N_PTR) putc(0x2a);
      else if (k == N_LREF) putc(0x26);
      else emitS("&&");
      scopeLeave(tok);
      break;
    }
    case N_COMPLEX:
    case N_IMAG:
      if (isParenTarget(fa(n), tDepth)) {
        failed = true; // not C++; c++filt garbles it
        break;
      }
      modDepth++;
      pr(fa(n));
      modDepth--;
      emitS(kindOf(n) == N_COMPLEX ? " _Complex" : " _Imaginary");
      break;
    case N_FUNC: {
      if (leak) {
        failed = true;
        break;
      }
      const r = fa(n);
      prLeft(r);
      if (!hasParenDecl(r, tDepth)) putc(0x20);
      break;
    }
    case N_ARRAY:
      if (leak) {
        failed = true;
        break;
      }
      prLeft(fa(n));
      break;
    case N_PTRMEM: {
      const m = fb(n);
      modDepth++;
      if (isParenTarget(m, tDepth)) {
        prLeft(m);
        if (lastc() != 0x20) putc(0x20);
        putc(0x28);
      } else {
        prLeft(m);
        putc(0x20);
      }
      modDepth--;
      pr(fa(n));
      emitS("::*");
      break;
    }
    case N_ENC:
      prEnc(n, true);
      break;
    case N_SPECIAL:
      emitS(strOf(fa(n)));
      pr(fb(n));
      break;
    case N_CTORVT:
      emitS("construction vtable for ");
      pr(fb(n));
      emitS("-in-");
      pr(fa(n));
      break;
    case N_CTOR:
    case N_VENDORTYPE:
      pr(fa(n));
      break;
    case N_DTOR:
      putc(0x7e);
      pr(fa(n));
      break;
    case N_OPER: {
      const s = strOf(fa(n));
      emitS("operator");
      if (isLower(s.charCodeAt(0))) putc(0x20);
      emitS(s);
      break;
    }
    case N_CONV: {
      // a conversion's type may name the arguments of the template being printed
      emitS("operator ");
      const save = curTmpl;
      let old = 0;
      if (save != 0) old = tPush(save);
      curTmpl = 0;
      pr(fa(n));
      curTmpl = save;
      if (save != 0 && !failed) tPop(old);
      break;
    }
    case N_LAMBDA: {
      emitS("{lambda(");
      const saveLeak = leak;
      if (modDepth > 0) leak = true;
      inLambda++;
      prList(fa(n));
      inLambda--;
      leak = saveLeak;
      emitNumbered(")#", fb(n));
      break;
    }
    case N_UNNAMED:
      emitNumbered("{unnamed type#", fa(n));
      break;
    case N_LOCAL:
      prEnc(fa(n), false);
      emitS("::");
      pr(fb(n));
      break;
    case N_LITERAL:
    case N_LITNEG:
      prLiteral(n);
      break;
    case N_TPARAM: {
      if (inLambda != 0) {
        emitS("auto:");
        emitNum(fa(n) + 1);
      } else {
        const r = resolve(n, tDepth);
        pendQ = pend;
        if (r != 0) prLeftAt(r, rLvl);
      }
      break;
    }
    case N_PACKEXP: {
      const pat = fa(n);
      const pack = findPack(pat, tDepth, 0);
      if (pack == 0) {
        // no argument pack involved: print the pattern followed by "..."
        prSub(pat);
        emitS("...");
      } else {
        // like c++filt, the index stays at the last element afterwards (a later T_ that
        // names the pack outside an expansion prints that element)
        const len = fb(pack);
        for (let i = 0; i < len; i++) {
          packIdx = i;
          pr(pat);
          if (i + 1 < len) emitS(", ");
        }
      }
      break;
    }
    case N_ABITAG:
      pr(fa(n));
      prAfter("[abi:", fb(n), 0x5d);
      break;
    case N_VQUAL:
      modDepth++;
      prLeft(fa(n));
      modDepth--;
      putc(0x20);
      pr(fb(n));
      break;
    case N_CLONE:
      pr(fa(n));
      emitS(" [clone ");
      emitBytes(<usize>fb(n), fc(n));
      putc(0x5d);
      break;
    case N_VECTOR:
      pr(fa(n));
      prAfter(" __vector(", fb(n), 0x29);
      break;
    case N_EXTNAME:
      prEnc(fa(n), true);
      break;
    case N_OPLIT:
      emitS('operator"" ');
      pr(fa(n));
      break;
    case N_VENDOROP:
      emitS("operator ");
      pr(fa(n));
      break;
    case N_DEFARG:
      emitNumbered("{default arg#", fa(n));
      emitS("::");
      pr(fb(n));
      break;
    case N_REFTEMP:
      emitS("reference temporary #");
      if (fc(n) > 0) emitBytes(<usize>fb(n), fc(n));
      else putc(0x30);
      emitS(" for ");
      pr(fa(n));
      break;
    case N_NAMEQUAL:
      pr(fa(n));
      emitQuals(fb(n), false, 0);
      break;
    case N_BINDING:
      prListIn(0x5b, fa(n), 0x5d);
      break;
    case N_UNARY:
      prUnary(n);
      break;
    case N_BINARY: {
      const op = strOf(fa(n));
      // c++filt wraps `>` so it cannot close a template argument list
      const gt = op.length == 1 && op.charCodeAt(0) == 0x3e;
      if (gt) putc(0x28);
      prSub(fb(n));
      if (op.length == 2 && op.charCodeAt(0) == 0x5b) {
        prIn(0x5b, fc(n), 0x5d);
      } else {
        emitS(op);
        prSub(fc(n));
      }
      if (gt) putc(0x29);
      break;
    }
    case N_TERNARY:
      prSub(fa(n));
      putc(0x3f);
      prSub(fb(n));
      emitS(" : ");
      prSub(fc(n));
      break;
    case N_CALL: {
      // a called function prints by name only
      let f = fa(n);
      if (kindOf(f) == N_EXTNAME && fb(fa(f)) != 0) f = fa(fa(f));
      prSub(f);
      prListIn(0x28, fb(n), 0x29);
      break;
    }
    case N_CAST:
      prIn(0x28, fa(n), 0x29);
      if (fc(n) != 0) prListIn(0x28, fb(n), 0x29);
      else prSub(fb(n));
      break;
    case N_NAMEDCAST:
      emitS(strOf(fa(n)));
      putc(0x3c);
      pr(fb(n));
      prAfter(">(", fc(n), 0x29);
      break;
    case N_FPARAM:
      emitNumbered("{parm#", fa(n));
      break;
    case N_DECLTYPE:
      prAfter("decltype (", fa(n), 0x29);
      break;
    case N_INITLIST:
      if (fa(n) != 0) pr(fa(n));
      prListIn(0x7b, fb(n), 0x7d);
      break;
    case N_SIZEOFPACK: {
      // c++filt prints the length of the pack, 0 when the parameter is not a pack
      const lvl = tDepth;
      if (lvl <= 0) {
        failed = true;
        break;
      }
      const args = load<i32>(tstkBase + (<usize>(lvl - 1) << 2));
      const idx = fa(fa(n));
      if (idx >= fb(args)) {
        failed = true;
        break;
      }
      emitNum(kindOf(listAt(args, idx)) == N_LIST ? fb(listAt(args, idx)) : 0);
      break;
    }
    case N_NULLARY:
      emitS(strOf(fa(n)));
      break;
    case N_NEW: {
      emitS("new"); // c++filt prints new[] as new too
      if (fb(fa(n)) > 0) {
        emitS(" (");
        prList(fa(n));
        putc(0x29);
      }
      putc(0x20);
      pr(fb(n));
      const init = fc(n);
      if (init != 0) {
        if (kindOf(init) == N_LIST) prListIn(0x28, init, 0x29);
        else pr(init);
      }
      break;
    }
    default:
      failed = true;
  }
}

// Operand of an operator: parenthesised unless it is a plain (qualified) name, a function
// parameter or a braced list.
function isSimpleExpr(n: i32): bool {
  const k = kindOf(n);
  if (k == N_NAME || k == N_NESTED || k == N_FPARAM || k == N_INITLIST) return true;
  if (k == N_LIT) return fa(n) == strp("(anonymous namespace)");
  if (k == N_EXTNAME) {
    const e = fa(n);
    if (fb(e) != 0) return false;
    const nk = kindOf(fa(e));
    return nk == N_NAME || nk == N_NESTED;
  }
  return false;
}

function prSub(n: i32): void {
  if (isSimpleExpr(n)) pr(n);
  else prIn(0x28, n, 0x29);
}

function prUnary(n: i32): void {
  const form = fc(n);
  let e = fb(n);
  if (form == U_POSTFIX) {
    prSub(e);
    emitS(strOf(fa(n)));
    return;
  }
  emitS(strOf(fa(n)));
  if (form == U_GLOBAL) {
    pr(e);
    return;
  }
  if (form == U_TYPE) {
    prIn(0x28, e, 0x29);
    return;
  }
  // &A::f names the member function without its parameter list, as c++filt does, unless the
  // function is cv- or ref-qualified: then the whole signature is printed, &(A::f() const)
  if (strOf(fa(n)).charCodeAt(0) == 0x26 && kindOf(e) == N_EXTNAME) {
    const enc = fa(e);
    if (fb(enc) != 0 && kindOf(fa(enc)) == N_NESTED && fc(fb(enc)) == 0) e = fa(enc);
  }
  prSub(e);
}

function prRightInner(n: i32): void {
  switch (kindOf(n)) {
    case N_QUAL: {
      const c = fa(n);
      if (isFuncish(c, tDepth)) prFuncRight(n);
      else prRight(c);
      break;
    }
    case N_PTR:
    case N_LREF:
    case N_RREF: {
      const tok = isRefToParam(n) ? scopeEnter(n) : -1;
      collapseRef(n);
      const c = refChild;
      const lvl = refLvl;
      if (isParenTarget(c, lvl)) putc(0x29);
      prRightAt(c, lvl);
      scopeLeave(tok);
      break;
    }
    case N_FUNC:
      prFuncRight(n);
      break;
    case N_ARRAY:
      if (lastc() != 0x5d) putc(0x20);
      putc(0x5b);
      if (fb(n) != 0) pr(fb(n));
      putc(0x5d);
      prRight(fa(n));
      break;
    case N_PTRMEM: {
      const m = fb(n);
      if (isParenTarget(m, tDepth)) putc(0x29);
      prRight(m);
      break;
    }
    case N_TPARAM:
      if (inLambda == 0) {
        const r = resolve(n, tDepth);
        if (r != 0) prRightAt(r, rLvl);
      }
      break;
    case N_VQUAL:
      prRight(fa(n));
      break;
  }
}

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
  ip = src + 2;
  iend = src + <usize>len;
  failed = false;
  nNodes = 1; // node 0 means "none"
  nList = 0;
  nSubs = 0;
  stkTop = 0;
  pDepth = 0;
  inConv = 0;
  lastName = 0;

  let enc = parseEncoding();
  if (enc == 0 || failed) return -1;
  // GCC clone suffixes: .cold, .isra.0, .constprop.1, ...
  while (peek() == 0x2e) {
    const d = peek1();
    if (!(isLower(d) || d == 0x5f || isDigit(d))) break;
    const start = ip;
    ip += 2;
    while (true) {
      const e = peek();
      if (isLower(e) || e == 0x5f || isDigit(e)) ip++;
      else break;
    }
    while (peek() == 0x2e && isDigit(peek1())) {
      ip += 2;
      while (isDigit(peek())) ip++;
    }
    enc = mk(N_CLONE, enc, <i32>start, <i32>(ip - start));
    if (enc == 0) return -1;
  }
  if (ip != iend) return -1;

  outBase = out;
  oCap = outCap;
  outPos = 0;
  lastCh = 0;
  sepPending = 0;
  sepFlushes = 0;
  pendQ = 0;
  modDepth = 0;
  leak = false;
  curTmpl = 0;
  prDepth = 0;
  work = 0;
  workMax = outCap > 0x1000000 ? 0x40000000 : <i32>(outCap << 6) + 65536;
  tDepth = 0;
  packIdx = 0;
  inLambda = 0;
  scopeCount = 0;
  swapTop = 0;
  pr(enc);
  if (failed) return -1;
  return <i32>outPos;
}
