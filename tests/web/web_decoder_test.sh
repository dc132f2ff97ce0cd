#!/bin/sh
# Writes the snapshot vectors with the C++ codec, then runs node's test runner over
# web/test/*.test.mjs with their path in SWARMFIELD_SNAPSHOT_VECTORS.
# Usage: web_decoder_test.sh SNAPSHOT_VECTORS_BINARY WEB_DIR OUT_JSON. Skipped
# (tests/support/skip.sh) where node is missing or older than 20 (its test runner).
set -u
bin=$1
web=$2
out=$3
. "$(dirname "$0")/../support/skip.sh"
node=$(command -v node || true)
[ -n "$node" ] || skip_test "node not installed (Debian package nodejs)"
major=$("$node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$major" -ge 20 ] || skip_test "node $major is older than 20 (node --test)"

"$bin" "$out" || { echo "FAIL: snapshot_vectors could not write $out"; exit 1; }
cd "$web" || exit 1
SWARMFIELD_SNAPSHOT_VECTORS=$out SWARMFIELD_SNAPSHOT_VECTORS_BIN=$bin exec "$node" --test test/*.test.mjs
