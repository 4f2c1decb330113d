/**
 * Chrome JSON: the vendor arguments of an event (model/args.ts) inside its `args` object, after the normalized ones —
 * e.g. Synapse's `"recipeId":3,"recipeName":"…","streamHandle":"0x…","dataType":"bf16"`, as the Gaudi PyTorch bridge
 * adds them through Kineto. Numbers stay numbers; a non-finite double is written as a string ("nan", "inf", "-inf"),
 * as Kineto's metadata serializer does, so the JSON stays valid.
 */
import { Ev } from "../model/event";
import * as A from "../model/args";
import * as O from "./out";

/** Writes `,"key":value` for every vendor argument of `e` (nothing when it has none). */
export function chromeArgs(e: Ev): void {
  if (e.argsLen == 0) return;
  let a = e.argsPtr;
  const end = a + e.argsLen;
  while (a < end) {
    O.need(64);
    O.byte(44);
    O.jsonString(A.argKey(a), A.argKeyLen(a));
    O.need(64);
    O.byte(58);
    const t = A.argType(a);
    const v = A.argValue(a);
    if (t == A.ARG_U64) O.u64dec(load<u64>(v));
    else if (t == A.ARG_HEX) hex(load<u64>(v));
    else if (t == A.ARG_F64) {
      const d = load<f64>(v);
      if (isNaN(d)) O.ascii('"nan"');
      else if (!isFinite(d)) O.ascii(d > 0 ? '"inf"' : '"-inf"');
      else O.fixed(d, 9);
    } else O.jsonString(v, A.argValueLen(a));
    a = A.argNext(a);
  }
}

/** `"0x…"`, lower-case hex without leading zeros. */
function hex(v: u64): void {
  O.ascii('"0x');
  let shift: i32 = 60;
  while (shift > 0 && ((v >> <u64>shift) & 0xf) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) {
    const d = <u32>((v >> <u64>shift) & 0xf);
    O.byte(d < 10 ? 48 + d : 87 + d);
  }
  O.byte(34);
}
