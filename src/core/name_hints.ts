/**
 * Hints that tell apart names shown alike: kernels whose short names are the same (the viewer's shortName drops the
 * template list, and PyTorch launches one `at::native::vectorized_elementwise_kernel` per operator) or whose names cut
 * for a text table are the same (`rawtrace stats`, `diff`: PyTorch's optimizer kernels share their first 120
 * characters). For each name of such a group: the first word of its template arguments that no other name of its
 * group has (`mse_kernel_cuda`, `FillFunctor`, `MeanOps`, `multiplies`), else its template arguments themselves.
 * The viewer shows the hint under the short name; the CLI after the cut name, in brackets.
 */

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
 * For each of `names` (full, demangled), a hint when another of `names` is shown the same (`shown`: the viewer's short
 * name, the CLI's cut), else null. Deterministic: it depends only on the names given, in any order.
 */
export function nameHints(names: readonly string[], shown: (name: string) => string): Array<string | null> {
  const groups = new Map<string, number[]>();
  names.forEach((name, i) => {
    const key = shown(name);
    const members = groups.get(key);
    if (members) members.push(i);
    else groups.set(key, [i]);
  });
  const out: Array<string | null> = names.map(() => null);
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    // In how many of the group's names each word appears: a word in one alone tells that one apart (linear in the
    // group's words, whatever its size: `stats --top` may list hundreds of one template's instances).
    const own = members.map((i) => new Set(words(templateArgs(names[i]))));
    const seen = new Map<string, number>();
    for (const set of own) for (const w of set) seen.set(w, (seen.get(w) ?? 0) + 1);
    members.forEach((i, k) => {
      const unique = [...own[k]].find((w) => w.length >= 3 && !COMMON.has(w) && seen.get(w) === 1);
      out[i] = unique ?? (templateArgs(names[i]) || names[i]);
    });
  }
  return out;
}
