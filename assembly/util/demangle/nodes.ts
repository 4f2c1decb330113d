/**
 * The demangler's node graph (see ../demangle.ts): the fixed capacities, the scratch tables that hold the nodes,
 * lists, substitution candidates and template scopes (allocated once per heap generation, reused by every call),
 * the node kinds with the meaning of their fields, qualifier words, and the readers of node fields. The parser
 * (parse_*.ts) builds the graph, the printer (print*.ts, scope.ts) walks it.
 */

// ---------------------------------------------------------------------------------------------
// Limits and scratch tables

/** nodes, 16 bytes each */
export const NODE_CAP: i32 = 16384;
/** list element slots */
export const LIST_CAP: i32 = 16384;
/** substitution candidates */
export const SUB_CAP: i32 = 4096;
/** temporary stack used while collecting list elements */
export const STK_CAP: i32 = 4096;
/** template-argument scopes while printing */
export const TSTK_CAP: i32 = 256;
/** saved template scopes of references to template parameters */
export const SCOPE_CAP: i32 = 32;
/** nested restores of a saved scope */
export const SWAP_CAP: i32 = 8;
/** Deepest recursion of the parser's productions (and bound of its loops over node chains). */
export const MAX_PARSE_DEPTH: i32 = 256;
/** Deepest recursion of the printer (and bound of its loops over node chains). */
export const MAX_PRINT_DEPTH: i32 = 512;

let scratch: usize = 0;
/** NODE_CAP nodes of 16 bytes: kind, a, b, c (node 0 means "none"). */
export let nodeBase: usize = 0;
/** LIST_CAP list element slots (node ids) of N_LIST nodes. */
export let listBase: usize = 0;
/** SUB_CAP substitution candidates (node ids), in the order `S_`, `S0_`, ... name them. */
export let subBase: usize = 0;
/** STK_CAP temporaries (node ids) collected before they become a list. */
export let stkBase: usize = 0;
/** TSTK_CAP template-argument lists (N_LIST ids), one per scope in effect while printing. */
export let tstkBase: usize = 0;
/** SCOPE_CAP snapshots of TSTK_CAP entries */
export let scopeBase: usize = 0;
/** SWAP_CAP saved stacks of TSTK_CAP entries */
export let swapBase: usize = 0;

/** Forgets the scratch tables; call after heap.reset() (the next call allocates them again). */
export function demangleReset(): void {
  scratch = 0;
}

/** One allocation per heap generation (the stub runtime never frees; heap.reset() rewinds it between files). */
export function initScratch(): void {
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

/** a=ptr b=len: identifier bytes from the input */
export const N_NAME: i32 = 1;
/** a=AS string: fixed text */
export const N_LIT: i32 = 2;
/** a=code (char, or 256+char for D-types) */
export const N_BUILTIN: i32 = 3;
/** a=ptr b=len (digits) c=1 for the `x` suffix: _FloatN / _FloatNx */
export const N_FLOATN: i32 = 4;
/** a=scope b=name */
export const N_NESTED: i32 = 5;
/** a=name b=args list */
export const N_TEMPLATE: i32 = 6;
/** a=start b=count (also used for argument packs) */
export const N_LIST: i32 = 7;
/** a=type b=qualifier word c=1 for function qualifiers (K F...E) */
export const N_QUAL: i32 = 8;
/** a=pointee */
export const N_PTR: i32 = 9;
/** a=referent: lvalue reference `&` */
export const N_LREF: i32 = 10;
/** a=referent: rvalue reference `&&` */
export const N_RREF: i32 = 11;
/** a=type: `_Complex` */
export const N_COMPLEX: i32 = 12;
/** a=type: `_Imaginary` */
export const N_IMAG: i32 = 13;
/** a=return type (0: none) b=params list c=qualifier word */
export const N_FUNC: i32 = 14;
/** a=element b=dimension (0: none) */
export const N_ARRAY: i32 = 15;
/** a=class b=member type */
export const N_PTRMEM: i32 = 16;
/** a=name b=function type (0: data) */
export const N_ENC: i32 = 17;
/** a=AS string prefix b=node */
export const N_SPECIAL: i32 = 18;
/** a=derived b=base */
export const N_CTORVT: i32 = 19;
/** a=name to print */
export const N_CTOR: i32 = 20;
/** a=name to print */
export const N_DTOR: i32 = 21;
/** a=AS string operator symbol */
export const N_OPER: i32 = 22;
/** a=type */
export const N_CONV: i32 = 23;
/** a=signature list b=number */
export const N_LAMBDA: i32 = 24;
/** a=number */
export const N_UNNAMED: i32 = 25;
/** a=encoding b=entity */
export const N_LOCAL: i32 = 26;
/** a=type b=ptr c=len */
export const N_LITERAL: i32 = 27;
/** negative literal, same fields */
export const N_LITNEG: i32 = 28;
/** a=index */
export const N_TPARAM: i32 = 29;
/** a=pattern */
export const N_PACKEXP: i32 = 30;
/** a=name b=tag */
export const N_ABITAG: i32 = 31;
/** a=type b=vendor qualifier name */
export const N_VQUAL: i32 = 32;
/** a=encoding b=ptr c=len */
export const N_CLONE: i32 = 33;
/** a=AS string (full expansion) */
export const N_STDSUB: i32 = 34;
/** a=element b=dimension */
export const N_VECTOR: i32 = 35;
/** a=encoding (external name in a template argument) */
export const N_EXTNAME: i32 = 36;
/** a=name: operator"" suffix */
export const N_OPLIT: i32 = 37;
/** a=name */
export const N_VENDOROP: i32 = 38;
/** a=number b=entity */
export const N_DEFARG: i32 = 39;
/** a=name b=ptr c=len (number text) */
export const N_REFTEMP: i32 = 40;
/** a=name b=qualifier word: a cv/ref-qualified <nested-name> */
export const N_NAMEQUAL: i32 = 41;
/** a=list of names: structured binding `[a, b]` */
export const N_BINDING: i32 = 42;
/** a=name: u <source-name> */
export const N_VENDORTYPE: i32 = 43;
// expressions (template arguments, array bounds, decltype)
/** a=AS string operator b=operand c=form (U_*) */
export const N_UNARY: i32 = 44;
/** a=AS string operator b=left c=right */
export const N_BINARY: i32 = 45;
/** a=condition b=then c=else */
export const N_TERNARY: i32 = 46;
/** a=callee b=argument list */
export const N_CALL: i32 = 47;
/** a=type b=operand (c=1: b is a parenthesised list) */
export const N_CAST: i32 = 48;
/** a=AS string (static_cast, ...) b=type c=operand */
export const N_NAMEDCAST: i32 = 49;
/** a=parameter number (1-based) */
export const N_FPARAM: i32 = 50;
/** a=expression */
export const N_DECLTYPE: i32 = 51;
/** a=type (0: none) b=list */
export const N_INITLIST: i32 = 52;
/** a=template parameter */
export const N_SIZEOFPACK: i32 = 53;
/** a=AS string */
export const N_NULLARY: i32 = 54;
/** a=placement list b=type c=initializer (0, N_LIST for (...), N_INITLIST) */
export const N_NEW: i32 = 55;

/** {@link N_UNARY} form: op operand */
export const U_PREFIX: i32 = 0;
/** {@link N_UNARY} form: operand op */
export const U_POSTFIX: i32 = 1;
/** {@link N_UNARY} form: op (type) */
export const U_TYPE: i32 = 2;
/** {@link N_UNARY} form: ::operand */
export const U_GLOBAL: i32 = 3;

// Qualifier words keep mangled order, because c++filt prints cv-qualifiers innermost first
// (`rK` prints `restrict const`): bits 0-1 hold a ref-qualifier (Q_LREF / Q_RREF), then up
// to ten 3-bit QC_* codes from bit 2 on, in mangled order.
/** Ref-qualifier `&` (bits 0-1 of a qualifier word). */
export const Q_LREF: i32 = 1;
/** Ref-qualifier `&&` (bits 0-1 of a qualifier word). */
export const Q_RREF: i32 = 2;
/** QC_* code `K`: const. */
export const QC_CONST: i32 = 1;
/** QC_* code `V`: volatile. */
export const QC_VOLATILE: i32 = 2;
/** QC_* code `r`: restrict. */
export const QC_RESTRICT: i32 = 3;
/** QC_* code `Do`: noexcept. */
export const QC_NOEXCEPT: i32 = 4;
/** QC_* code `Dx`: transaction_safe. */
export const QC_TXSAFE: i32 = 5;
/** Most QC_* codes a qualifier word holds. */
export const QC_MAX: i32 = 10;

/** Kind (N_*) of node `n`. */
@inline export function kindOf(n: i32): i32 {
  return load<i32>(nodeBase + (<usize>n << 4));
}
/** Field a of node `n`. */
@inline export function fa(n: i32): i32 {
  return load<i32>(nodeBase + (<usize>n << 4), 4);
}
/** Field b of node `n`. */
@inline export function fb(n: i32): i32 {
  return load<i32>(nodeBase + (<usize>n << 4), 8);
}
/** Field c of node `n`. */
@inline export function fc(n: i32): i32 {
  return load<i32>(nodeBase + (<usize>n << 4), 12);
}

/** Number of QC_* codes in qualifier word `q`. */
export function qCount(q: i32): i32 {
  let n = 0;
  while (n < QC_MAX && ((q >>> (2 + 3 * n)) & 7) != 0) n++;
  return n;
}

/** Bit set (1 << code) of the codes in a qualifier word. */
export function qSet(q: i32): i32 {
  let m = 0;
  for (let i = 0; i < QC_MAX; i++) {
    const c = (q >>> (2 + 3 * i)) & 7;
    if (c == 0) break;
    m |= 1 << c;
  }
  return m;
}

/** An AS string (a static literal) as a node field. */
@inline export function strp(s: string): i32 {
  return <i32>changetype<usize>(s);
}
/** The AS string that node field `v` holds (see {@link strp}). */
@inline export function strOf(v: i32): string {
  return changetype<string>(<usize>v);
}

/** Element `i` of list node `l`. */
@inline export function listAt(l: i32, i: i32): i32 {
  return load<i32>(listBase + (<usize>(fa(l) + i) << 2));
}
