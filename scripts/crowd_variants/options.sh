# shellcheck shell=bash
# Sourced by misses.sh and piles.sh: their options and checks in one place.
#   crowd_options HELP_LINES ALLOWS_ONLY "$@"
# reads --bin DIR, --out DIR (and --only LIST when ALLOWS_ONLY is 1) into bin, out and only (the
# caller sets their defaults first); --help prints lines HELP_LINES (sed range) of the calling
# script. Then sets py and tool, checks the tool was built and makes OUT.
crowd_options() {
  local help=$1 allows_only=$2
  shift 2
  while [ $# -gt 0 ]; do
    case "$1" in
      --bin|--out|--only)
        [ "$1" != --only ] || [ "$allows_only" = 1 ] || { echo "error: unknown option '$1' (try --help)" >&2; exit 2; }
        [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value" >&2; exit 2; }
        case "$1" in --bin) bin=$2 ;; --out) out=$2 ;; --only) only=$2 ;; esac
        shift 2 ;;
      -h|--help) sed -n "${help}p" "$0"; exit 0 ;;
      *) echo "error: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
  done
  py=/usr/bin/python3
  tool=$bin/swarmfield-tool
  [ -x "$tool" ] || { echo "error: no $tool: build first or give --bin DIR" >&2; exit 2; }
  mkdir -p "$out"
}
