#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a while, in turn.
#   scripts/fuzz.sh                      every fuzzer 10 minutes
#   scripts/fuzz.sh --seconds 3600       every fuzzer an hour
#   scripts/fuzz.sh --only packet,config --jobs 2
#   scripts/fuzz.sh --ctest [--seconds 5]  CI: the ctest smoke runs (label fuzz), N s each
# Corpora grow in out/fuzz/<fuzzer>/ (kept between runs, seeded from the built-in seeds);
# a finding is written to out/fuzz/crash-* (reproduce: build-fuzz/bin/fuzz_X out/fuzz/crash-...)
# and the script exits 1. Needs clang and libclang-rt-14-dev (installed if missing, as
# ./swarmfield.sh does for its packages). Environment: BUILD_DIR (default build-fuzz).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build-fuzz}
SECONDS_EACH=600
ONLY=""
JOBS=1
CTEST=0
ALL=(tcp_message frame_decoder datagram zstd_decompress snapshot_delta snapshot_fragments packet map_parse
     tiled_map png_map bot_script config replay)

usage() {
  sed -n '2,10p' "$0"
  echo "fuzzers: ${ALL[*]}"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "--seconds needs a positive integer" >&2; exit 2; }
               SECONDS_EACH=$2; shift 2 ;;
    --only) [ -n "${2:-}" ] || { echo "--only needs a list, e.g. packet,config" >&2; exit 2; }
            ONLY=$2; shift 2 ;;
    --jobs) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "--jobs needs a positive integer" >&2; exit 2; }
            JOBS=$2; shift 2 ;;
    --ctest) CTEST=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

FUZZERS=("${ALL[@]}")
if [ -n "$ONLY" ]; then
  IFS=, read -r -a FUZZERS <<<"$ONLY"
  for f in "${FUZZERS[@]}"; do
    [[ " ${ALL[*]} " == *" $f "* ]] || { echo "unknown fuzzer '$f'; known: ${ALL[*]}" >&2; exit 2; }
  done
fi

missing=()
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
[ "$CTEST" = 1 ] && [ "$SECONDS_EACH" = 600 ] && SECONDS_EACH=5
CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSWARMFIELD_BUILD_FUZZERS=ON \
  -DSWARMFIELD_BUILD_VIEWER=OFF -DSWARMFIELD_FUZZ_SECONDS="$SECONDS_EACH" "${launcher[@]}" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target swarmfield_fuzzers
if [ "$CTEST" = 1 ]; then
  cd "$BUILD_DIR"
  exec ctest -L fuzz -j "$(nproc)" --output-on-failure
fi
"$BUILD_DIR/bin/swarmfield_fuzz_seed_corpus" "$BUILD_DIR/tests/fuzz/corpus"

seeds_of() {
  case "$1" in
    tcp_message) echo "$BUILD_DIR/tests/fuzz/corpus/tcp" ;;
    frame_decoder) echo "$BUILD_DIR/tests/fuzz/corpus/frames" ;;
    datagram) echo "$BUILD_DIR/tests/fuzz/corpus/datagrams" ;;
    zstd_decompress) echo "$BUILD_DIR/tests/fuzz/corpus/zstd" ;;
    snapshot_delta) echo "$BUILD_DIR/tests/fuzz/corpus/deltas" ;;
    snapshot_fragments) echo "$BUILD_DIR/tests/fuzz/corpus/fragments" ;;
    packet) echo "$BUILD_DIR/tests/fuzz/corpus/packets" ;;
    map_parse) echo "$ROOT/tests/fuzz/corpus/maps" ;;
    tiled_map) echo "$ROOT/tests/fuzz/corpus/tiled" ;;
    png_map) echo "$ROOT/tests/fuzz/corpus/png" ;;
    bot_script) echo "$ROOT/tests/fuzz/corpus/bot" ;;
    config) echo "$ROOT/tests/fuzz/corpus/config" ;;
    replay) echo "$ROOT/tests/fuzz/corpus/replay" ;;
  esac
}

mkdir -p out/fuzz
status=0
for f in "${FUZZERS[@]}"; do
  corpus="out/fuzz/$f"
  mkdir -p "$corpus"
  echo "[fuzz] $f: ${SECONDS_EACH} s, corpus $corpus"
  parallel=()
  [ "$JOBS" -gt 1 ] && parallel=(-fork="$JOBS")
  if ! "$BUILD_DIR/bin/fuzz_$f" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 \
       "${parallel[@]}" -artifact_prefix=out/fuzz/ -print_final_stats=1 \
       "$corpus" "$(seeds_of "$f")" >"out/fuzz/$f.log" 2>&1; then
    echo "[fuzz] $f FAILED: see out/fuzz/$f.log and out/fuzz/crash-*" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "out/fuzz/$f.log" | tail -2 | sed "s/^/[fuzz] $f: /"
  fi
done
exit $status
