/**
 * What template parameters (`T_`) mean while printing: the stack of template-argument scopes (a function
 * template's encoding pushes its arguments), the scopes that c++filt keeps for a reference to a template parameter
 * first printed elsewhere, resolving a parameter to the argument it denotes, and finding the argument pack a pack
 * expansion walks.
 */
import {
  MAX_PRINT_DEPTH, N_ABITAG, N_ARRAY, N_BINARY, N_CALL, N_CAST, N_COMPLEX, N_CONV, N_DECLTYPE, N_ENC, N_EXTNAME,
  N_FUNC, N_IMAG, N_INITLIST, N_LIST, N_LITERAL, N_LITNEG, N_LOCAL, N_LREF, N_NAMEDCAST, N_NAMEQUAL, N_NESTED, N_NEW,
  N_PACKEXP, N_PTR, N_PTRMEM, N_QUAL, N_RREF, N_TEMPLATE, N_TERNARY, N_TPARAM, N_UNARY, N_VECTOR, N_VQUAL, SCOPE_CAP,
  SWAP_CAP, TSTK_CAP, fa, fb, fc, kindOf, listAt, scopeBase, swapBase, tstkBase
} from "./nodes";
import * as P from "./parse_state";
import * as O from "./print_state";

// Template-argument scopes: printing a function template's encoding makes its arguments the
// meaning of T_; printing an argument pops one scope (it may itself name an outer parameter).
/** Makes argument list `args` the innermost scope; returns what its slot held, for {@link tPop}. */
export function tPush(args: i32): i32 {
  if (O.tDepth >= TSTK_CAP) {
    P.failed = true;
    return 0;
  }
  const slot = tstkBase + (<usize>O.tDepth << 2);
  const old = load<i32>(slot);
  store<i32>(slot, args);
  O.tDepth++;
  return old;
}

/** Leaves the innermost scope, giving its slot back `old` (from {@link tPush}). */
export function tPop(old: i32): void {
  O.tDepth--;
  store<i32>(tstkBase + (<usize>O.tDepth << 2), old);
}

// c++filt (libiberty's d_saved_scope): a reference to a template parameter (`OT_`) remembers
// the template scopes in effect when it is first printed; printed again through a substitution,
// from outside itself, its parameter means what it meant there, not what it means here.
/** References whose first scopes are saved (at most SCOPE_CAP). */
export let scopeCount: i32 = 0;
/** Restored scopes in effect, each over a saved stack (at most SWAP_CAP). */
export let swapTop: i32 = 0;
const scopeKey = memory.data(SCOPE_CAP * 4); // the reference's template-parameter node
const scopeLvl = memory.data(SCOPE_CAP * 4); // tDepth when first printed
const scopeActive = memory.data(SCOPE_CAP * 4); // prints of the reference in progress
const swapLvl = memory.data(SWAP_CAP * 4);
const swapLen = memory.data(SWAP_CAP * 4);

/**
 * Before printing a half of reference `n` to a template parameter: returns a token for
 * {@link scopeLeave} (-1: nothing to undo), the index of its scope, + SCOPE_CAP when restored.
 */
export function scopeEnter(n: i32): i32 {
  const sub = fa(n);
  let i = 0;
  while (i < scopeCount && load<i32>(scopeKey + (<usize>i << 2)) != sub) i++;
  const active = scopeActive + (<usize>i << 2);
  if (i == scopeCount) {
    if (scopeCount == SCOPE_CAP) return -1;
    scopeCount++;
    store<i32>(scopeKey + (<usize>i << 2), sub);
    store<i32>(scopeLvl + (<usize>i << 2), O.tDepth);
    memory.copy(scopeBase + (<usize>(i * TSTK_CAP) << 2), tstkBase, <usize>O.tDepth << 2);
    store<i32>(active, 1);
    return i;
  }
  // beneath itself (or no room to restore): the scopes in effect stay
  if (load<i32>(active) > 0 || swapTop == SWAP_CAP) {
    store<i32>(active, load<i32>(active) + 1);
    return i;
  }
  const lvl = load<i32>(scopeLvl + (<usize>i << 2));
  const len = lvl > O.tDepth ? lvl : O.tDepth;
  memory.copy(swapBase + (<usize>(swapTop * TSTK_CAP) << 2), tstkBase, <usize>len << 2);
  store<i32>(swapLvl + (<usize>swapTop << 2), O.tDepth);
  store<i32>(swapLen + (<usize>swapTop << 2), len);
  swapTop++;
  memory.copy(tstkBase, scopeBase + (<usize>(i * TSTK_CAP) << 2), <usize>lvl << 2);
  O.tDepth = lvl;
  store<i32>(active, 1);
  return i + SCOPE_CAP;
}

/** After printing a half of a reference: undoes {@link scopeEnter} for its token `tok`. */
export function scopeLeave(tok: i32): void {
  if (tok < 0) return;
  const i = tok % SCOPE_CAP;
  const active = scopeActive + (<usize>i << 2);
  store<i32>(active, load<i32>(active) - 1);
  if (tok < SCOPE_CAP) return;
  swapTop--;
  const len = load<i32>(swapLen + (<usize>swapTop << 2));
  memory.copy(tstkBase, swapBase + (<usize>(swapTop * TSTK_CAP) << 2), <usize>len << 2);
  O.tDepth = load<i32>(swapLvl + (<usize>swapTop << 2));
}

/** A reference whose referent is a template parameter: c++filt keeps the scope it was first printed in. */
// @ts-ignore: decorator
@inline export function isRefToParam(n: i32): bool {
  const k = kindOf(n);
  return (k == N_LREF || k == N_RREF) && kindOf(fa(n)) == N_TPARAM && O.inLambda == 0;
}

/**
 * Follows template parameters to the argument they denote; sets rLvl to the scope level in
 * which the result must be printed. Returns 0 (and fails) when a parameter has no argument.
 */
export function resolve(n: i32, lvl: i32): i32 {
  while (n != 0 && kindOf(n) == N_TPARAM && O.inLambda == 0) {
    if (lvl <= 0) {
      P.failed = true;
      O.rLvl = 0;
      return 0;
    }
    const args = load<i32>(tstkBase + (<usize>(lvl - 1) << 2));
    const idx = fa(n);
    if (idx >= fb(args)) {
      P.failed = true;
      O.rLvl = 0;
      return 0;
    }
    let a = listAt(args, idx);
    if (kindOf(a) == N_LIST) {
      if (O.packIdx >= fb(a)) {
        P.failed = true;
        O.rLvl = 0;
        return 0;
      }
      a = listAt(a, O.packIdx);
    }
    n = a;
    lvl--;
  }
  O.rLvl = lvl;
  return n;
}

/** Finds the argument pack a pack expansion pattern refers to (0 if none). */
export function findPack(n: i32, lvl: i32, depth: i32): i32 {
  if (n == 0 || depth > MAX_PRINT_DEPTH || P.failed) return 0;
  if (++O.work > O.workMax) {
    P.failed = true;
    return 0;
  }
  const k = kindOf(n);
  switch (k) {
    case N_TPARAM: {
      if (O.inLambda != 0 || lvl <= 0) return 0;
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
