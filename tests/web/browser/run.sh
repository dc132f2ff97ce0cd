#!/bin/sh
# The page in headless Chromium against a real server (page_test.mjs). Usage:
# run.sh BIN_DIR WEB_DIR NODE_MODULES OUT_DIR. Skipped (tests/support/skip.sh) where node is
# missing; page_test.mjs itself skips (or, under SWARMFIELD_REQUIRE_ALL=1, fails) without
# Chromium, the built page or playwright-core.
set -u
. "$(dirname "$0")/../../support/skip.sh"
node=$(command -v node || true)
[ -n "$node" ] || skip_test "node not installed (Debian package nodejs)"
exec "$node" "$(dirname "$0")/page_test.mjs" --bin "$1" --web "$2" --modules "$3" --out "$4"
