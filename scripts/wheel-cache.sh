# Shared by scripts/cuda-headers.sh and scripts/pti-libs.sh (sourced, not run): the steps of caching a part of
# pinned PyPI wheels in a folder without installing anything — temporary folders removed on exit, the pip check,
# unpacking one part of each wheel (Python's zipfile: no unzip tool), and publishing the result in one rename.

WHEEL_CLEANUP=()
wheel_cleanup() { local d; for d in "${WHEEL_CLEANUP[@]+"${WHEEL_CLEANUP[@]}"}"; do rm -rf "$d"; done; }
trap wheel_cleanup EXIT

# wheel_tools <who>: python3 and its pip are there (else a message naming <who>, status 1).
wheel_tools() {
  command -v python3 >/dev/null || { echo "$1: python3 is required" >&2; return 1; }
  python3 -m pip --version >/dev/null 2>&1 || { echo "$1: python3 -m pip is required" >&2; return 1; }
}

# wheel_tmp <cache> <name>: a new temporary folder inside <cache> in WHEEL_TMP, removed on exit (a variable, not
# output: a command substitution's subshell could not add it to the clean-up list).
wheel_tmp() {
  mkdir -p "$1"
  WHEEL_TMP="$(mktemp -d "$1/.tmp-$2.XXXXXX")"
  WHEEL_CLEANUP+=("$WHEEL_TMP")
}

# wheel_unpack <who> <part> <wheels dir> <out dir>: merges one part of every wheel into <out dir>:
#   include  nvidia/<pkg>/include/**  (NVIDIA's header wheels; __init__.py left out)
#   lib      <pkg>.data/data/lib/**   (shared libraries only, made executable)
wheel_unpack() {
  python3 - "$@" <<'PY'
import pathlib, shutil, sys, zipfile
who, part, src, out = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4])
out.mkdir(parents=True, exist_ok=True)
count = 0
for whl in sorted(src.glob("*.whl")):
    with zipfile.ZipFile(whl) as z:
        for info in z.infolist():
            parts = pathlib.PurePosixPath(info.filename).parts
            if info.is_dir() or len(parts) < 4:
                continue
            if part == "include" and (parts[0] != "nvidia" or parts[2] != "include"):
                continue
            if part == "lib" and (not parts[0].endswith(".data") or parts[1:3] != ("data", "lib")):
                continue
            rel = pathlib.PurePosixPath(*parts[3:])
            if ".." in rel.parts or (part == "include" and rel.name == "__init__.py") or (part == "lib" and ".so" not in rel.name):
                continue
            target = out.joinpath(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with z.open(info) as f, open(target, "wb") as g:
                shutil.copyfileobj(f, g)
            if part == "lib":
                target.chmod(0o755)
            count += 1
print(f"{who}: unpacked {count} {'header files' if part == 'include' else 'libraries'}", file=sys.stderr)
PY
}

# wheel_publish <tmp> <dest>: <tmp>/new becomes <dest> in one rename, so a concurrent or interrupted run never
# leaves a half-filled folder; the old one goes away with <tmp>.
wheel_publish() {
  if [[ -e "$2" ]]; then mv "$2" "$1/old"; fi
  mv "$1/new" "$2"
  rm -rf "$1"
}
