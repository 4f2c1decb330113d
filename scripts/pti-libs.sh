#!/usr/bin/env bash
# Caches the real Intel PTI libraries (the `intel-pti` wheels on PyPI) and the Intel compiler runtime libraries their
# core needs (`intel-cmplr-lib-rt`) into .cache/pti/, for the ABI truth test test/collectors/pti_abi.test.ts. Only
# the wheels' data/lib folders are unpacked; nothing is installed into any Python environment. Pinned versions and
# sha256 hashes; idempotent: a folder that already holds the same pinned wheel is skipped without the network, so a
# second run works offline.
#
#   scripts/pti-libs.sh              # every pinned version + the compiler runtime
#   scripts/pti-libs.sh 1.2.0        # only the named PTI versions (+ the compiler runtime)
#
# Layout: .cache/pti/<version>/lib/libpti_view.so (+ libpti.so beside it up to 0.17, lib/pti/libpti.so from 1.0),
#         .cache/pti/cmplr/lib/ (libsvml, libirng, libimf, libintlc.so.5, libxptifw.so, ...).
# The wheels carry no Level Zero loader: the test builds a stand-in (docs/collectors/xpu.md, ABI truth).
#
# Environment: RAWTRACE_PTI_CACHE overrides the cache folder (default <repo>/.cache/pti). pip's own settings
# (PIP_INDEX_URL, proxies) apply as usual.
# Exit status: 0 done; 3 the package index cannot be reached (the caller may skip, saying so); 1 anything else.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${RAWTRACE_PTI_CACHE:-$ROOT/.cache/pti}"
# shellcheck source=scripts/wheel-cache.sh
source "$ROOT/scripts/wheel-cache.sh"

# One pre-0.18 generation (v1 records: 0.12.4 is the oldest wheel with the core libpti.so; 0.11.0's wheel has none),
# the last v1 release (0.17.0, the first with the communication view) and the newest _v2 release.
ALL_VERSIONS="0.12.4 0.17.0 1.2.0"
CMPLR="intel-cmplr-lib-rt==2026.2.0 9f713083073a820d2496a6da8e8d4f3482aba6640f74521d25ea48dcebe72748"

spec_for() {
  case "$1" in
    0.12.4) echo "intel-pti==0.12.4 b1a31db985ef6876af632c0ddc5dbd7332e379fec89b0ff7dc81798dd0061bc3" ;;
    0.17.0) echo "intel-pti==0.17.0 1a3327b8683af72e60e1ea8f754160fb12ffb8a15e57941f7e3672bcc540e2fc" ;;
    1.2.0)  echo "intel-pti==1.2.0 4cba1d71816f6b3f4283d55c5bc45f09532647e9c5ca8b3a4f136092fa8e3c94" ;;
    cmplr)  echo "$CMPLR" ;;
    *) echo "pti-libs: unknown version '$1' (pinned: $ALL_VERSIONS)" >&2; return 1 ;;
  esac
}

index_reachable() {
  python3 - "${PIP_INDEX_URL:-https://pypi.org/simple}" <<'PY'
import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1].rstrip("/") + "/intel-pti/", timeout=20).read(1)
except Exception as e:
    print(f"pti-libs: {sys.argv[1]} unreachable: {e}", file=sys.stderr)
    sys.exit(1)
PY
}

# install <name>: downloads the pinned wheel into a temp folder, unpacks its */data/lib/** into <cache>/<name>/lib.
install_one() {
  local name="$1" spec dest tmp
  spec="$(spec_for "$name")"
  dest="$CACHE/$name"
  if [[ -f "$dest/WHEEL" && "$(cat "$dest/WHEEL")" == "$spec" && -d "$dest/lib" ]]; then
    echo "pti-libs: $name present, skipped"
    return 0
  fi
  wheel_tools pti-libs
  wheel_tmp "$CACHE" "$name"
  tmp="$WHEEL_TMP"
  read -r req hash <<<"$spec"
  echo "$req --hash=sha256:$hash" >"$tmp/requirements.txt"
  echo "pti-libs: $name: downloading $req"
  if ! python3 -m pip download --disable-pip-version-check --quiet --no-deps --only-binary=:all: \
       --platform manylinux_2_28_x86_64 --require-hashes -r "$tmp/requirements.txt" -d "$tmp/wheels"; then
    if ! index_reachable; then exit 3; fi
    echo "pti-libs: $name: pip download failed" >&2
    return 1
  fi
  wheel_unpack pti-libs lib "$tmp/wheels" "$tmp/new/lib"
  printf '%s\n' "$spec" >"$tmp/new/WHEEL"
  wheel_publish "$tmp" "$dest"
  echo "pti-libs: $name -> $dest/lib"
}

versions=("$@")
[[ ${#versions[@]} -gt 0 ]] || read -r -a versions <<<"$ALL_VERSIONS"
install_one cmplr
for v in "${versions[@]}"; do install_one "$v"; done
