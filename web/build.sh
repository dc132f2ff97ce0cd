#!/bin/sh
# Builds the browser spectator into OUT_DIR: index.html, style.css and app.js (one ES module
# bundled by esbuild from src/main.js and the FlatBuffers code flatc generates from the
# protocol's schema). Run by CMake; by hand: web/build.sh build/web
#
# Writes nothing into the source tree but web/node_modules (npm ci, only when it is missing or
# package-lock.json changed since); flatc's output goes to OUT_DIR/../web-gen. Needs node (>= 18),
# npm and flatc (Debian: nodejs, npm, flatbuffers-compiler); the npm registry for the first run.
set -eu

if [ $# -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
schema="$here/../protocol/schema/swarmfield.fbs"
mkdir -p "$1"
out=$(cd "$1" && pwd)
gen="$(dirname "$out")/web-gen"

missing=""
for tool in node npm flatc; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  echo "web/build.sh: missing:$missing (Debian packages: nodejs npm flatbuffers-compiler)" >&2
  exit 1
fi
[ -f "$schema" ] || { echo "web/build.sh: schema not found at $schema" >&2; exit 1; }

# npm ci only when node_modules is missing or was installed from another package-lock.json
# (npm writes node_modules/.package-lock.json; a stamp of ours records the lock it came from).
stamp="$here/node_modules/.swarmfield-lock-stamp"
if [ ! -d "$here/node_modules" ] || [ ! -f "$stamp" ] || ! cmp -s "$here/package-lock.json" "$stamp"; then
  echo "web/build.sh: npm ci"
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$stamp"
fi

rm -rf "$gen"
mkdir -p "$gen"
flatc --ts -o "$gen" "$schema"

# The generated files import 'flatbuffers': NODE_PATH lets esbuild find it in web/node_modules
# from outside the source tree.
NODE_PATH="$here/node_modules" "$here/node_modules/.bin/esbuild" "$here/src/main.js" \
  --bundle --format=esm --target=es2020 --log-level=warning \
  --alias:swarmfield-wire="$gen/swarmfield_generated.ts" \
  --outfile="$out/app.js"
cp "$here/index.html" "$here/style.css" "$out/"
echo "web/build.sh: $out/app.js ($(wc -c < "$out/app.js") bytes), index.html, style.css"
