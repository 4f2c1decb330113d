#!/usr/bin/env bash
# Installs the CUPTI and CUDA runtime headers used to build the CUPTI fixtures (and later the CUPTI collector)
# into .cache/cuda/<tag>/include, from NVIDIA's wheels on PyPI. Only the include folders are unpacked; nothing is
# installed into any Python environment. Pinned versions and sha256 hashes; idempotent: a tag whose folder already
# holds the same pinned set is skipped without touching the network, so a second run works offline.
#
#   scripts/cuda-headers.sh            # all tags: cu118 cu12 cu13 cu135
#   scripts/cuda-headers.sh cu13       # only the named tags
#
# Environment: RAWTRACE_CUDA_CACHE overrides the cache folder (default <repo>/.cache/cuda). pip's own settings
# (PIP_INDEX_URL, proxies) apply as usual.
#
# Which wheel ships what (checked by listing the wheels):
#   nvidia-cuda-cupti*   : cupti*.h, cupti_activity.h, cupti_*_cbid.h, cupti_version.h, Openacc/, Openmp/
#   nvidia-cuda-runtime* : cuda.h (cupti_activity.h includes it), cuda_runtime_api.h (CUDART_VERSION), driver_types.h,
#                          builtin_types.h (cupti_callbacks.h includes it), device_types.h
#   crt/host_defines.h   : included by device_types.h; shipped by nvidia-cuda-nvcc-cu11/-cu12 (the 20-40 MB nvcc
#                          wheels: only their include folder is unpacked) and, for CUDA 13, by the small nvidia-cuda-crt
# CUDA 11/12 wheels unpack to nvidia/cuda_cupti/include and nvidia/cuda_runtime/include; the CUDA 13 wheels (no -cuXX
# suffix) both unpack to nvidia/cu13/include. Each tag's headers are merged into one include folder.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${RAWTRACE_CUDA_CACHE:-$ROOT/.cache/cuda}"
# shellcheck source=scripts/wheel-cache.sh
source "$ROOT/scripts/wheel-cache.sh"

ALL_TAGS="cu118 cu12 cu13 cu135"

# tag -> "requirement sha256" pairs, one per line. The wheels are pure header/library payloads (py3-none); the
# x86_64 builds are pinned so every host, whatever its architecture, unpacks the same bytes.
wheels_for() {
  case "$1" in
    cu118) cat <<'EOF'
nvidia-cuda-cupti-cu11==11.8.87 4191a17913a706b5098681280cd089cd7d8d3df209a6f5cb79384974a96d24f2
nvidia-cuda-runtime-cu11==11.8.89 92d04069a987e1fbc9213f8376d265df0f7bb42617d44f5eda1f496acea7f2d1
nvidia-cuda-nvcc-cu11==11.8.89 f8e1e995166c884f2f5bf94975d7abb89175363b8712f7f81cd38d0df1b2cd85
EOF
    ;;
    cu12) cat <<'EOF'
nvidia-cuda-cupti-cu12==12.9.79 096bcf334f13e1984ba36685ad4c1d6347db214de03dbb6eebb237b41d9d934f
nvidia-cuda-runtime-cu12==12.9.79 25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3
nvidia-cuda-nvcc-cu12==12.9.86 5d6a0d32fdc7ea39917c20065614ae93add6f577d840233237ff08e9a38f58f0
EOF
    ;;
    # CUDA 13.0 Update 1: CUPTI 13.0.85 is the 13.0 release whose cupti_version.h says CUPTI_API_VERSION 130001
    # (13.0.48, the GA, says 130000); cudart 13.0.88 is the runtime of the same update.
    cu13) cat <<'EOF'
nvidia-cuda-cupti==13.0.85 4eb01c08e859bf924d222250d2e8f8b8ff6d3db4721288cf35d14252a4d933c8
nvidia-cuda-runtime==13.0.88 422a38f7c739ecbdd3a4b6ec7ed0a1d74db43d8e9bc26685f3d845638922b178
nvidia-cuda-crt==13.0.88 2c8043c7c9e02492716426e9919fc78d2c5b3b2a7a768a88e952676b08aa55a4
EOF
    ;;
    # CUDA 13.5: CUPTI 13.5.25 and cudart/crt 13.5.37, the newest 13.x wheels when this tag was pinned.
    cu135) cat <<'EOF'
nvidia-cuda-cupti==13.5.25 9dcca41c12a734192b14e7128ae116bc9ce1b9da686e2ebf48ae7a4415f76650
nvidia-cuda-runtime==13.5.37 df2b79a8852f10d1fef8c848489c49eebb5754051bf870202a862831412b179d
nvidia-cuda-crt==13.5.37 e898b7f73d3035fa89915a3f7bf3b54a73e90249746111aed295822c4729bb29
EOF
    ;;
    *) echo "cuda-headers: unknown tag '$1' (known: $ALL_TAGS)" >&2; return 1 ;;
  esac
}

PLATFORMS=(--platform manylinux2010_x86_64 --platform manylinux_2_12_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_25_x86_64
  --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64)

# Prints "tag: CUPTI_API_VERSION n, CUDART_VERSION n, wheels ..." for an installed tag.
describe() {
  local tag="$1" inc="$CACHE/$1/include" api rt
  api="$(sed -n 's/^#define CUPTI_API_VERSION[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p' "$inc/cupti_version.h" | head -n1)"
  rt="$(sed -n 's/^#define CUDART_VERSION[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p' "$inc/cuda_runtime_api.h" | head -n1)"
  echo "cuda-headers: $tag: CUPTI_API_VERSION ${api:-?}, CUDART_VERSION ${rt:-?}, from $(cut -d' ' -f1 "$CACHE/$tag/WHEELS" | tr '\n' ' ')-> $inc"
}

install_tag() {
  local tag="$1" spec dest tmp
  spec="$(wheels_for "$tag")"
  dest="$CACHE/$tag"
  if [[ -f "$dest/WHEELS" && "$(cat "$dest/WHEELS")" == "$spec" && -f "$dest/include/cupti_activity.h" \
        && -f "$dest/include/cuda.h" && -f "$dest/include/crt/host_defines.h" ]]; then
    echo "cuda-headers: $tag present, skipped"
    describe "$tag"
    return 0
  fi
  wheel_tools cuda-headers
  wheel_tmp "$CACHE" "$tag"
  tmp="$WHEEL_TMP"
  local req="$tmp/requirements.txt"
  while read -r r h; do echo "$r --hash=sha256:$h"; done <<<"$spec" >"$req"
  echo "cuda-headers: $tag: downloading $(cut -d' ' -f1 <<<"$spec" | tr '\n' ' ')"
  python3 -m pip download --disable-pip-version-check --quiet --no-deps --only-binary=:all: "${PLATFORMS[@]}" \
    --require-hashes -r "$req" -d "$tmp/wheels"

  # Only nvidia/<pkg>/include/** of each wheel, merged into one folder.
  wheel_unpack cuda-headers include "$tmp/wheels" "$tmp/new/include"
  for h in cupti_activity.h cupti_version.h cupti_runtime_cbid.h cupti_driver_cbid.h cuda.h cuda_runtime_api.h \
           crt/host_defines.h; do
    [[ -f "$tmp/new/include/$h" ]] || { echo "cuda-headers: $tag: $h missing from the wheels" >&2; return 1; }
  done
  printf '%s\n' "$spec" >"$tmp/new/WHEELS"
  wheel_publish "$tmp" "$dest"
  describe "$tag"
}

tags=("$@")
[[ ${#tags[@]} -gt 0 ]] || read -r -a tags <<<"$ALL_TAGS"
for t in "${tags[@]}"; do install_tag "$t"; done
