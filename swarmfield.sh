#!/usr/bin/env bash
# swarmfield set-up and run script. On a fresh Debian/Ubuntu machine:
#   ./swarmfield.sh demo    build, then run server + bot + viewer on the generated city
#   ./swarmfield.sh test    build, then run the test suite (ctest)
#   ./swarmfield.sh build   install packages and build only
#   ./swarmfield.sh bench   build the benchmarks and run them
#   ./swarmfield.sh load    build, then a server load test: 100k agents, bots, verdict (--help)
# Environment: BUILD_DIR (default build), BUILD_TYPE (default RelWithDebInfo),
#   SWARMFIELD_SANITIZE=1 for an ASan/UBSan build, JOBS (default: nproc),
#   SWARMFIELD_TEST_ARGS extra ctest arguments (e.g. "-L scen-full").
set -euo pipefail
export SWARMFIELD_CALLER_PWD=$PWD  # demo options with relative paths are the caller's
cd "$(dirname "$0")"
ROOT=$(pwd)
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
JOBS=${JOBS:-$(nproc)}

PACKAGES=(build-essential cmake pkg-config git libasio-dev libflatbuffers-dev flatbuffers-compiler
          libspdlog-dev doctest-dev libzstd-dev libsdl2-dev libcli11-dev libtomlplusplus-dev
          libbenchmark-dev libpng-dev libsodium-dev libcpp-httplib-dev nlohmann-json3-dev liblua5.4-dev python3-prometheus-client python3-yaml xvfb xauth
          qemu-user libboost-dev nodejs chromium)

say() { printf '\033[1m[swarmfield]\033[0m %s\n' "$*"; }

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  # npm: Debian's package where node came from Debian; NodeSource's nodejs has it built in (and
  # conflicts with Debian's npm), so only when the command is missing.
  command -v npm >/dev/null || missing+=(npm)
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing Debian packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# build [TARGET...]: configure, then build everything or only the named targets.
build() {
  install_packages
  local extra=()
  [ "${SWARMFIELD_SANITIZE:-0}" = 1 ] && extra+=(-DSWARMFIELD_SANITIZE=ON)
  [ "${SWARMFIELD_BENCH:-0}" = 1 ] && extra+=(-DSWARMFIELD_BUILD_BENCH=ON)
  # ccache, when installed, makes rebuilds in several checkouts cheap (optional, never required).
  command -v ccache >/dev/null && extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  say "configuring ($BUILD_TYPE) in $BUILD_DIR/"
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${extra[@]}" >/dev/null
  if [ $# -gt 0 ]; then
    say "building $* with $JOBS jobs"
    local targets=()
    for t in "$@"; do targets+=(--target "$t"); done
    cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
  else
    say "building with $JOBS jobs"
    cmake --build "$BUILD_DIR" -j "$JOBS"
  fi
}

cmd=${1:-help}
shift || true
case "$cmd" in
  build) build ;;
  test)
    case " $* " in
      *" -h "*|*" --help "*)
        echo "usage: ./swarmfield.sh test [CTEST_ARGS...]: builds, then runs the test suite with ctest -j 2,"
        echo "  passing CTEST_ARGS on (e.g. -R NAME, -L LABEL, --repeat until-fail:3; see ctest --help)."
        echo "  SWARMFIELD_TEST_ARGS adds arguments too. The README's Tests section lists the labels."
        exit 0 ;;
    esac
    build
    say "running tests"
    # shellcheck disable=SC2086
    (cd "$BUILD_DIR" && ctest --output-on-failure -j 2 --timeout 600 ${SWARMFIELD_TEST_ARGS:-} "$@")
    ;;
  demo)
    # Check the options (and answer --help) before spending minutes on a build.
    SWARMFIELD_DEMO_CHECK_ONLY=1 "$ROOT/scripts/demo.sh" "$BUILD_DIR/bin" "$@"
    case " $* " in *" -h "*|*" --help "*) exit 0 ;; esac
    # Only the programs the demo runs: the tests' 70-odd programs are most of a full build.
    web=()  # the browser page, where node and npm are (cmake/SwarmfieldWeb.cmake)
    command -v npm >/dev/null && command -v node >/dev/null && web=(swarmfield_web)
    build swarmfield-server swarmfield-viewer swarmfield-bot "${web[@]}"
    exec "$ROOT/scripts/demo.sh" "$BUILD_DIR/bin" "$@"
    ;;
  bench)
    # Check the options (and answer --help) before spending minutes on a build.
    SWARMFIELD_BENCH_CHECK_ONLY=1 "$ROOT/scripts/bench.sh" "$BUILD_DIR/bin" "$@"
    case " $* " in *" -h "*|*" --help "*) exit 0 ;; esac
    SWARMFIELD_BENCH=1 build
    exec "$ROOT/scripts/bench.sh" "$BUILD_DIR/bin" "$@"
    ;;
  load)
    # Check the options (and answer --help) before spending minutes on a build.
    SWARMFIELD_LOAD_CHECK_ONLY=1 "$ROOT/scripts/server_load.sh" "$@"
    case " $* " in *" -h "*|*" --help "*) exit 0 ;; esac
    build swarmfield-server swarmfield-bot swarmfield-viewer
    case "$BUILD_DIR" in /*) bin="$BUILD_DIR/bin" ;; *) bin="$ROOT/$BUILD_DIR/bin" ;; esac
    exec "$ROOT/scripts/server_load.sh" --bin "$bin" "$@"
    ;;
  help|-h|--help) sed -n '2,10p' "$0" ;;
  *) echo "unknown command '$cmd'; try: $0 help" >&2; exit 2 ;;
esac
