#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regenerates src/gen/xplane_pb.ts from proto/xplane.proto with protoc-gen-es (target=ts, .js import extensions).
# Needs protoc (Debian: apt-get install -y protobuf-compiler; installed here when missing and running as root) and
# the @bufbuild/protoc-gen-es devDependency. The generated file is committed; run this after editing the .proto.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v protoc >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "gen-proto: installing protobuf-compiler" >&2
    apt-get update -qq >/dev/null && apt-get install -y -qq protobuf-compiler >/dev/null
  else
    echo "gen-proto: protoc not found (Debian: apt-get install -y protobuf-compiler)" >&2
    exit 1
  fi
fi
plugin=node_modules/.bin/protoc-gen-es
if [ ! -x "$plugin" ]; then
  echo "gen-proto: $plugin not found (npm install: @bufbuild/protoc-gen-es is a devDependency)" >&2
  exit 1
fi
mkdir -p src/gen
protoc --plugin=protoc-gen-es="$plugin" --es_out=src/gen --es_opt=target=ts,import_extension=js -I proto proto/xplane.proto
echo "gen-proto: wrote src/gen/xplane_pb.ts" >&2
