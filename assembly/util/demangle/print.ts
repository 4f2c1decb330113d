/**
 * The printer: walks the node graph the parser built and writes the demangled name as GNU c++filt prints it. C++
 * declarators print out of order, so every node prints in two halves: the left part (`int (*` of a pointer to
 * function, a name, a template with its arguments, an expression) and the right part (`)(int)`, array bounds,
 * function parameter lists and qualifiers), with reference collapsing, pending qualifiers and template parameters
 * resolved against the scope being printed (scope.ts). Expression operands and literals are print_expr.ts.
 */
import {
  MAX_PRINT_DEPTH, N_ABITAG, N_ARRAY, N_BINARY, N_BINDING, N_BUILTIN, N_CALL, N_CAST, N_CLONE, N_COMPLEX, N_CONV,
  N_CTOR, N_CTORVT, N_DECLTYPE, N_DEFARG, N_DTOR, N_ENC, N_EXTNAME, N_FLOATN, N_FPARAM, N_FUNC, N_IMAG, N_INITLIST,
  N_LAMBDA, N_LIST, N_LIT, N_LITERAL, N_LITNEG, N_LOCAL, N_LREF, N_NAME, N_NAMEDCAST, N_NAMEQUAL, N_NESTED, N_NEW,
  N_NULLARY, N_OPER, N_OPLIT, N_PACKEXP, N_PTR, N_PTRMEM, N_QUAL, N_REFTEMP, N_RREF, N_SIZEOFPACK, N_SPECIAL, N_STDSUB,
  N_TEMPLATE, N_TERNARY, N_TPARAM, N_UNARY, N_UNNAMED, N_VECTOR, N_VENDOROP, N_VENDORTYPE, N_VQUAL, fa, fb, fc, kindOf,
  listAt, qSet, strOf, tstkBase
} from "./nodes";
import * as P from "./parse_state";
import { isLower } from "./parse_state";
import * as O from "./print_state";
import { builtinText, emitBytes, emitNum, emitNumbered, emitQuals, emitS, lastc, putc } from "./print_state";
import { findPack, isRefToParam, resolve, scopeEnter, scopeLeave, tPop, tPush } from "./scope";
import { prLiteral, prSub, prUnary } from "./print_expr";

// Function or array types print inside a parenthesised declarator when pointed/referred to.
function isParenTarget(n: i32, lvl: i32): bool {
  const r = resolve(n, lvl);
  if (r == 0) return false;
  const k = kindOf(r);
  if (k == N_FUNC || k == N_ARRAY) return true;
  if (k == N_QUAL) {
    const c = unwrapQual(fa(r), O.rLvl);
    return c != 0 && (kindOf(c) == N_FUNC || kindOf(c) == N_ARRAY);
  }
  return false;
}

function unwrapQual(n: i32, lvl: i32): i32 {
  let r = resolve(n, lvl);
  for (let guard = 0; r != 0 && kindOf(r) == N_QUAL && guard < 64; guard++) r = resolve(fa(r), O.rLvl);
  return r;
}

function isFuncish(n: i32, lvl: i32): bool {
  const r = resolve(n, lvl);
  if (r == 0) return false;
  const k = kindOf(r);
  if (k == N_FUNC) return true;
  if (k == N_QUAL) {
    const c = unwrapQual(fa(r), O.rLvl);
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
    const l = O.rLvl;
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
  if (P.failed) return false;
  if (O.prDepth >= MAX_PRINT_DEPTH || ++O.work > O.workMax) {
    P.failed = true;
    return false;
  }
  O.prDepth++;
  return true;
}

/** Prints node `n` whole (its left then its right part), one print level deeper; nothing once failed. */
export function pr(n: i32): void {
  if (!enter()) return;
  prLeftInner(n);
  prRightInner(n);
  O.prDepth--;
}

function prLeft(n: i32): void {
  if (!enter()) return;
  prLeftInner(n);
  O.prDepth--;
}

function prRight(n: i32): void {
  if (!enter()) return;
  prRightInner(n);
  O.prDepth--;
}

/** `open` n `close`: a node in brackets (characters). */
@inline export function prIn(open: i32, n: i32, close: i32): void {
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
  const save = O.tDepth;
  O.tDepth = lvl;
  prLeft(n);
  O.tDepth = save;
}

function prRightAt(n: i32, lvl: i32): void {
  const save = O.tDepth;
  O.tDepth = lvl;
  prRight(n);
  O.tDepth = save;
}

// Comma-separated. Empty packs print nothing; like c++filt, only the separators *trailing*
// the last element that printed something are dropped (`f<, int>`, `f(int, , int)`, `f(int)`).
function prList(l: i32): void {
  const cnt = fb(l);
  if (cnt == 0) return;
  const base = O.sepPending;
  const flushes = O.sepFlushes;
  pr(listAt(l, 0));
  for (let i = 1; i < cnt; i++) {
    if (P.failed) return;
    O.sepPending++;
    pr(listAt(l, i));
  }
  // drop this list's own trailing separators (the last appended char was their space)
  const keep = O.sepFlushes != flushes ? 0 : base;
  if (O.sepPending > keep) {
    O.sepPending = keep;
    O.lastCh = 0x20;
  }
}

// A parameter list `(...)`, printed without the declarators pending around its function type.
function prParams(l: i32): void {
  const saveMods = O.modDepth;
  const saveLeak = O.leak;
  O.modDepth = 0;
  O.leak = false;
  prListIn(0x28, l, 0x29);
  O.modDepth = saveMods;
  O.leak = saveLeak;
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
  let lvl = O.tDepth;
  if (k != N_PTR) {
    let sub = c;
    let subLvl = lvl;
    if (kindOf(sub) == N_TPARAM && O.inLambda == 0) {
      sub = resolve(sub, lvl);
      subLvl = O.rLvl;
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
  const outer = O.tDepth;
  let old = 0;
  if (targs != 0) old = tPush(targs);
  const ret = withRet ? fa(f) : 0;
  if (ret != 0) {
    prLeft(ret);
    if (!hasParenDecl(ret, O.tDepth)) putc(0x20);
  }
  // c++filt prints the name itself in the enclosing scope (a T_ among the function's own
  // template arguments is an error there); only a conversion operator's type sees them
  const inner = O.tDepth;
  O.tDepth = outer;
  pr(name);
  O.tDepth = inner;
  prParams(fb(f));
  emitQuals(fc(f), false, 0);
  if (ret != 0) prRight(ret);
  if (targs != 0 && !P.failed) tPop(old);
}

// Parameter list and qualifiers of a function type reached through `f` (possibly wrapped in
// qualifiers and template parameters): `(int) const &`.
function prFuncRight(f: i32): void {
  let r = resolve(f, O.tDepth);
  let l = O.rLvl;
  let wrap0 = 0;
  let wrap1 = 0; // up to two qualifier wrappers (more only via hostile template cycles)
  let nwrap = 0;
  while (r != 0 && kindOf(r) == N_QUAL) {
    if (nwrap == 0) wrap0 = fb(r);
    else if (nwrap == 1) wrap1 = fb(r);
    else {
      P.failed = true;
      return;
    }
    nwrap++;
    r = resolve(fa(r), O.rLvl);
    l = O.rLvl;
  }
  if (r == 0) return;
  if (kindOf(r) != N_FUNC) {
    P.failed = true;
    return;
  }
  const save = O.tDepth;
  O.tDepth = l;
  prParams(fb(r));
  const own = fc(r);
  emitQuals(own & ~3, false, 0);
  if (nwrap > 1) emitQuals(wrap1, false, 0);
  if (nwrap > 0) emitQuals(wrap0, false, 0);
  emitQuals(own & 3, false, 0);
  prRight(fa(r));
  O.tDepth = save;
}

function prLeftInner(n: i32): void {
  // c++filt prints a cv-qualifier once when a qualified template argument is qualified
  // again (`T const&` with T = `X const` prints `X const&`)
  const pend = O.pendQ;
  O.pendQ = 0;
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
      const saveMods = O.modDepth;
      const saveLeak = O.leak;
      const saveTmpl = O.curTmpl;
      O.modDepth = 0;
      O.leak = false;
      O.curTmpl = fb(n);
      pr(fa(n));
      if (lastc() == 0x3c) putc(0x20);
      putc(0x3c);
      prList(fb(n));
      if (lastc() == 0x3e) putc(0x20);
      putc(0x3e);
      O.modDepth = saveMods;
      O.leak = saveLeak;
      O.curTmpl = saveTmpl;
      break;
    }
    case N_LIST:
      prList(n);
      break;
    case N_QUAL: {
      const c = fa(n);
      if (isFuncish(c, O.tDepth)) {
        if (fc(n) == 0) {
          P.failed = true;
          break;
        }
        prLeft(c); // function qualifiers follow the parameter list
      } else {
        const q = fb(n);
        O.pendQ = qSet(q) | pend;
        O.modDepth++;
        prLeft(c);
        O.modDepth--;
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
      O.modDepth++;
      prLeftAt(c, lvl);
      O.modDepth--;
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
      if (isParenTarget(fa(n), O.tDepth)) {
        P.failed = true; // not C++; c++filt garbles it
        break;
      }
      O.modDepth++;
      pr(fa(n));
      O.modDepth--;
      emitS(kindOf(n) == N_COMPLEX ? " _Complex" : " _Imaginary");
      break;
    case N_FUNC: {
      if (O.leak) {
        P.failed = true;
        break;
      }
      const r = fa(n);
      prLeft(r);
      if (!hasParenDecl(r, O.tDepth)) putc(0x20);
      break;
    }
    case N_ARRAY:
      if (O.leak) {
        P.failed = true;
        break;
      }
      prLeft(fa(n));
      break;
    case N_PTRMEM: {
      const m = fb(n);
      O.modDepth++;
      if (isParenTarget(m, O.tDepth)) {
        prLeft(m);
        if (lastc() != 0x20) putc(0x20);
        putc(0x28);
      } else {
        prLeft(m);
        putc(0x20);
      }
      O.modDepth--;
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
      const save = O.curTmpl;
      let old = 0;
      if (save != 0) old = tPush(save);
      O.curTmpl = 0;
      pr(fa(n));
      O.curTmpl = save;
      if (save != 0 && !P.failed) tPop(old);
      break;
    }
    case N_LAMBDA: {
      emitS("{lambda(");
      const saveLeak = O.leak;
      if (O.modDepth > 0) O.leak = true;
      O.inLambda++;
      prList(fa(n));
      O.inLambda--;
      O.leak = saveLeak;
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
      if (O.inLambda != 0) {
        emitS("auto:");
        emitNum(fa(n) + 1);
      } else {
        const r = resolve(n, O.tDepth);
        O.pendQ = pend;
        if (r != 0) prLeftAt(r, O.rLvl);
      }
      break;
    }
    case N_PACKEXP: {
      const pat = fa(n);
      const pack = findPack(pat, O.tDepth, 0);
      if (pack == 0) {
        // no argument pack involved: print the pattern followed by "..."
        prSub(pat);
        emitS("...");
      } else {
        // like c++filt, the index stays at the last element afterwards (a later T_ that
        // names the pack outside an expansion prints that element)
        const len = fb(pack);
        for (let i = 0; i < len; i++) {
          O.packIdx = i;
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
      O.modDepth++;
      prLeft(fa(n));
      O.modDepth--;
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
      const lvl = O.tDepth;
      if (lvl <= 0) {
        P.failed = true;
        break;
      }
      const args = load<i32>(tstkBase + (<usize>(lvl - 1) << 2));
      const idx = fa(fa(n));
      if (idx >= fb(args)) {
        P.failed = true;
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
      P.failed = true;
  }
}

function prRightInner(n: i32): void {
  switch (kindOf(n)) {
    case N_QUAL: {
      const c = fa(n);
      if (isFuncish(c, O.tDepth)) prFuncRight(n);
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
      if (isParenTarget(m, O.tDepth)) putc(0x29);
      prRight(m);
      break;
    }
    case N_TPARAM:
      if (O.inLambda == 0) {
        const r = resolve(n, O.tDepth);
        if (r != 0) prRightAt(r, O.rLvl);
      }
      break;
    case N_VQUAL:
      prRight(fa(n));
      break;
  }
}
