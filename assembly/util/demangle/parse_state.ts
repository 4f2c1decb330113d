/**
 * The parser's state and the primitives every production of the parser (parse_*.ts) builds on: the cursor over the
 * input, the failure flag (the printer sets it too), the counts of the node, list and substitution tables being
 * filled, the depth limit, and the lexical productions (characters, numbers, <source-name>, cv-qualifiers).
 * Other files assign this state through a namespace import (`import * as P from "./parse_state"`, `P.ip++`).
 */
import {
  LIST_CAP, NODE_CAP, N_LIST, N_LIT, N_NAME, QC_CONST, QC_MAX, QC_NOEXCEPT, QC_RESTRICT, QC_TXSAFE, QC_VOLATILE,
  STK_CAP, SUB_CAP, listBase, nodeBase, qCount, stkBase, strp, subBase
} from "./nodes";

// ---------------------------------------------------------------------------------------------
// Parser state

/** cursor into the input */
export let ip: usize = 0;
/** one past the last input byte */
export let iend: usize = 0;
/** Set by anything that gives up (a table full, too deep, output overflow, input refused): not demangled. */
export let failed: bool = false;
/** Nodes in use (node 0 means "none"). */
export let nNodes: i32 = 0;
/** List element slots in use. */
export let nList: i32 = 0;
/** Substitution candidates so far. */
export let nSubs: i32 = 0;
/** Temporaries on the stack (see {@link pushTmp}). */
export let stkTop: i32 = 0;
/** Parse recursion depth (see {@link ascend}). */
export let pDepth: i32 = 0;
/** parsing a conversion operator's type: `T_` must not take template args */
export let inConv: i32 = 0;
/** last source name seen: constructors/destructors print it */
export let lastName: i32 = 0;

/** A new node of kind `k` with fields a, b, c; 0 (and failed) when the node table is full. */
export function mk(k: i32, a: i32, b: i32, c: i32): i32 {
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

// Appends a QC_* code; fails when a hostile input stacks more than QC_MAX of them.
function qAdd(q: i32, code: i32): i32 {
  const n = qCount(q);
  if (n >= QC_MAX) {
    failed = true;
    return q;
  }
  return q | (code << (2 + 3 * n));
}

/** [r] [V] [K] (any order, as c++filt accepts) plus Dx / Do when `fnQuals`. */
export function parseCvSeq(fnQuals: bool): i32 {
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

/** Pushes node `n` on the temporary stack (a list element being collected); false (and failed) when full. */
export function pushTmp(n: i32): bool {
  if (stkTop >= STK_CAP) {
    failed = true;
    return false;
  }
  store<i32>(stkBase + (<usize>stkTop << 2), n);
  stkTop++;
  return true;
}

/** Moves the temporaries pushed since `from` into the list pool. */
export function makeList(from: i32): i32 {
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

/** Appends node `n` to the substitution candidates; false (and failed) when the table is full. */
export function addSub(n: i32): bool {
  if (nSubs >= SUB_CAP) {
    failed = true;
    return false;
  }
  store<i32>(subBase + (<usize>nSubs << 2), n);
  nSubs++;
  return true;
}

/**
 * Recursive productions run one parse depth level deeper and fail past MAX_PARSE_DEPTH:
 *   return ++pDepth <= MAX_PARSE_DEPTH ? ascend(<production>) : tooDeep();
 */
@inline export function ascend(r: i32): i32 {
  pDepth--;
  return r;
}
/** The other half of {@link ascend}: leaves the level and fails (returns 0). */
export function tooDeep(): i32 {
  pDepth--;
  failed = true;
  return 0;
}

/** The byte at the cursor, 0 at the end of the input. */
@inline export function peek(): i32 {
  return ip < iend ? <i32>load<u8>(ip) : 0;
}
/** The byte after the cursor, 0 past the end of the input. */
@inline export function peek1(): i32 {
  return ip + 1 < iend ? <i32>load<u8>(ip + 1) : 0;
}
/** Whether `c` is `0`-`9`. */
@inline export function isDigit(c: i32): bool {
  return <u32>(c - 48) < 10;
}
/** Whether `c` is `A`-`Z`. */
@inline export function isUpper(c: i32): bool {
  return <u32>(c - 65) < 26;
}
/** Whether `c` is `a`-`z`. */
@inline export function isLower(c: i32): bool {
  return <u32>(c - 97) < 26;
}
/** Consumes byte `c` if it is next; whether it was. */
export function expect(c: i32): bool {
  if (ip < iend && <i32>load<u8>(ip) == c) {
    ip++;
    return true;
  }
  return false;
}

/** Non-negative decimal; -1 when there are no digits or the value does not fit in i32. */
export function parseNumber(): i32 {
  if (!isDigit(peek())) return -1;
  let v: i64 = 0;
  while (isDigit(peek())) {
    v = v * 10 + <i64>(peek() - 48);
    if (v > 0x7fffffff) return -1;
    ip++;
  }
  return <i32>v;
}

/** <source-name> ::= <positive length number> <identifier> */
export function parseSourceName(): i32 {
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
