/**
 * The printer's expressions: literals (`5u`, `(char)65`, `true`, `(float)[...]`), operands of operators (in
 * parentheses unless plain names), and unary operators in their prefix, postfix, `sizeof (type)` and `::` forms,
 * with c++filt's printing of `&A::f`.
 */
import {
  N_BUILTIN, N_EXTNAME, N_FPARAM, N_INITLIST, N_LIT, N_LITNEG, N_NAME, N_NESTED, U_GLOBAL, U_POSTFIX, U_TYPE, fa, fb,
  fc, kindOf, strOf, strp
} from "./nodes";
import { emitBytes, emitS, putc } from "./print_state";
import { pr, prIn } from "./print";

/** A literal (N_LITERAL, N_LITNEG): integers with their suffix, bools as words, others as `(type)value`. */
export function prLiteral(n: i32): void {
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

/** Prints operand `n` of an operator, in parentheses unless it is simple (see isSimpleExpr). */
export function prSub(n: i32): void {
  if (isSimpleExpr(n)) pr(n);
  else prIn(0x28, n, 0x29);
}

/** Prints an N_UNARY node in its form (U_PREFIX, U_POSTFIX, U_TYPE, U_GLOBAL). */
export function prUnary(n: i32): void {
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
