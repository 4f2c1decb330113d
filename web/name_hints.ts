/**
 * Hints that tell apart kernels whose short names are the same (web/model.ts shortName drops the template list, and
 * PyTorch launches one `at::native::vectorized_elementwise_kernel` per operator): for each such name, the first word
 * of its template arguments that no other name of its group has (`mse_kernel_cuda`, `FillFunctor`, `MeanOps`), else
 * its template arguments themselves. The summary and the range aggregate show the hint under the short name; the
 * tooltip keeps the full name.
 */
import { shortName } from "./model.js";

/** Words too common in C++ kernel names to tell two apart. */
const COMMON = new Set([
  "at", "native", "void", "const", "operator", "lambda", "anonymous", "namespace", "detail", "std", "c10", "cuda",
  "hip", "xpu", "float", "double", "int", "unsigned", "signed", "char", "long", "short", "bool", "true", "false",
  "half", "Half", "BFloat16", "Array", "TensorIteratorBase", "TensorIterator", "func_wrapper_t", // PyTorch reduce ops wrap theirs
]);

/** What follows a name's short name: its template arguments (from the first `<`), up to its parameter list. */
function templateArgs(full: string): string {
  const lt = full.indexOf("<");
  if (lt < 0) return "";
  let depth = 0;
  for (let i = lt; i < full.length; i++) {
    if (full[i] === "<") depth++;
    else if (full[i] === ">" && --depth === 0) return full.slice(lt + 1, i).trim();
  }
  return full.slice(lt + 1).trim();
}

const words = (s: string): string[] => s.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [];

/**
 * For each of `names` (full, demangled), a hint when another of `names` has the same short name, else null.
 * Deterministic: it depends only on the names given, in any order.
 */
export function nameHints(names: readonly string[]): Array<string | null> {
  const shorts = names.map(shortName);
  const groups = new Map<string, number[]>();
  shorts.forEach((s, i) => groups.set(s, [...(groups.get(s) ?? []), i]));
  const out: Array<string | null> = names.map(() => null);
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const sets = members.map((i) => new Set(words(templateArgs(names[i]))));
    members.forEach((i, k) => {
      const own = words(templateArgs(names[i]));
      const unique = own.find((w) => w.length >= 3 && !COMMON.has(w) && sets.every((set, j) => j === k || !set.has(w)));
      out[i] = unique ?? (templateArgs(names[i]) || names[i]);
    });
  }
  return out;
}

/** Puts `hint` (from {@link nameHints}) under the name in a table cell, on a line of its own; nothing for null. */
export function appendHint(td: HTMLElement, hint: string | null): void {
  if (hint === null) return;
  const sub = document.createElement("span");
  sub.className = "name-hint";
  sub.textContent = hint;
  td.append(sub);
}
