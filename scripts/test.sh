#!/usr/bin/env bash
# Runs every test suite (uvu tests of the core, the C writer and collectors, Python interop with the real clients,
# and browser tests — each driven from a test/**/*.test.ts file) and ends with one line "N passed, N failed".
# Each test file runs in its own process so one crashing file cannot hide the others' results; uvu's own exit
# code is not trusted (it can exit 0 after a hook error), the counts are parsed from its summary instead.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
# The real traces some tests derive their inputs from (README "Set-up"): said up front, not only as ENOENT failures.
[ -d ../shared/data/real ] || echo "!! ../shared/data/real (the reference traces beside this checkout) is missing: the tests that read it will fail"

strip_ansi() { sed -e 's/\x1b\[[0-9;]*m//g'; }
passed=0
failed=0
failed_files=()
mapfile -t files < <(find test -name '*.test.ts' -not -path '*/node_modules/*' | sort)
for f in "${files[@]}"; do
  log=$(mktemp)
  # Anchored at both ends: uvu matches the pattern against the path under the folder, and an unanchored
  # "hta\.test\.ts$" also ran fidelity_steps_hta.test.ts (and merge, xspace_merge), twice per run, counted twice.
  node --import tsx node_modules/uvu/bin.js "$(dirname "$f")" "^$(basename "$f" | sed 's/\./\\./g')\$" --no-color >"$log" 2>&1
  rc=$?
  out=$(strip_ansi <"$log")
  cat "$log"
  rm -f "$log"
  total=$(printf '%s\n' "$out" | sed -n 's/^ *Total: *\([0-9]*\).*/\1/p' | tail -1)
  ok=$(printf '%s\n' "$out" | sed -n 's/^ *Passed: *\([0-9]*\).*/\1/p' | tail -1)
  if [ -z "$total" ] || [ -z "$ok" ]; then
    echo "!! $f: no test summary (crashed at import or exited early, rc=$rc)"
    failed=$((failed + 1))
    failed_files+=("$f")
    continue
  fi
  bad=$((total - ok))
  if [ "$bad" -eq 0 ] && [ "$rc" -ne 0 ]; then bad=1; fi
  if [ "$total" -eq 0 ]; then echo "!! $f: ran no test"; bad=1; fi
  passed=$((passed + ok))
  failed=$((failed + bad))
  [ "$bad" -gt 0 ] && failed_files+=("$f")
done
if [ ${#failed_files[@]} -gt 0 ]; then
  echo "failing files:"
  printf '  %s\n' "${failed_files[@]}"
fi
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
