#!/usr/bin/env bash
# Builds bench/kineto/kineto_writer.cpp against Kineto's own sources: Kineto's CUPTI activity wrappers and its
# ChromeTraceLogger, driven with the records of a .rawtrace CUDA dump, so that Kineto's JSON writer and rawtrace
# convert the same records side by side on one machine, no GPU needed (bench/kineto/compare.sh runs both).
#
#   KINETO_SRC=<pytorch/kineto checkout> FMT_SRC=<fmtlib/fmt checkout> bash bench/kineto/build.sh
#
# Measured with pytorch/kineto at 114171dfba6867d2a898634670d9a3197dbb9595 (the revision of
# ../shared/reference/anchor-figures.md) and fmt at 40626af88bd7df9a5fb80be7b25ac85b122d6c21 (that revision's
# libkineto/third_party/fmt submodule). Neither is fetched here: this is a measuring tool for developers, not part
# of the product or its tests. The CUDA 13.0 headers come from scripts/cuda-headers.sh (PyPI wheels). Kineto is
# compiled as its CMake Release build compiles it (-O3 -DNDEBUG, C++20, HAS_CUPTI), only the sources its JSON path
# needs; libcupti and libcudart are not linked: the few calls that path makes are answered by cuda_stubs.cpp and by
# kineto_writer.cpp from the dump's own tables. Output: build/kineto/kineto_writer.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${KINETO_SRC:?set KINETO_SRC to a pytorch/kineto checkout}"
: "${FMT_SRC:?set FMT_SRC to an fmtlib/fmt checkout}"
K="$KINETO_SRC/libkineto"
[ -f "$K/src/output_json.cpp" ] || { echo "build.sh: $K/src/output_json.cpp not found (KINETO_SRC is the repository's root)" >&2; exit 2; }
[ -f "$FMT_SRC/include/fmt/format.h" ] || { echo "build.sh: $FMT_SRC/include/fmt/format.h not found" >&2; exit 2; }
bash "$ROOT/scripts/cuda-headers.sh" cu13 >/dev/null
CUDA_INC="${RAWTRACE_CUDA_CACHE:-$ROOT/.cache/cuda}/cu13/include"
OUT="$ROOT/build/kineto"
mkdir -p "$OUT/obj"
FLAGS=(-O3 -DNDEBUG -std=c++20 -DHAS_CUPTI -DKINETO_NAMESPACE=libkineto -DFMT_HEADER_ONLY
  -I"$K/include" -I"$K/src" -I"$FMT_SRC/include" -I"$K/third_party/dynolog_headers" -I"$CUDA_INC")
# Kineto's JSON path: the logger, the activity wrappers' helpers (names, demangling, cbid tables, occupancy), the
# logging and config they use.
SRCS="output_json GenericTraceActivity Demangle cupti_strings CuptiCbidRegistry DeviceProperties DeviceUtil Logger
  ILoggerObserver ThreadUtil Config AbstractConfig ActivityType CuptiTimestamp KernelRegistry ApproximateClock"
for s in $SRCS; do
  [ "$OUT/obj/$s.o" -nt "$K/src/$s.cpp" ] || g++ "${FLAGS[@]}" -c "$K/src/$s.cpp" -o "$OUT/obj/$s.o" &
done
g++ "${FLAGS[@]}" -c "$ROOT/bench/kineto/kineto_writer.cpp" -o "$OUT/obj/kineto_writer.o" &
g++ "${FLAGS[@]}" -c "$ROOT/bench/kineto/cuda_stubs.cpp" -o "$OUT/obj/cuda_stubs.o" &
fail=0
for job in $(jobs -p); do wait "$job" || fail=1; done
[ "$fail" = 0 ] || { echo "build.sh: compilation failed" >&2; exit 1; }
g++ -O3 -o "$OUT/kineto_writer" "$OUT"/obj/*.o -lpthread
echo "$OUT/kineto_writer"
