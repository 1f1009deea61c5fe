#!/usr/bin/env bash
# Instructions per call of the in-process API, counted by callgrind: stable
# on a busy machine, where timings are not. Each operation of
# `groupsim-bench foundation --only OPERATION` runs twice under callgrind,
# with N and 2N calls; the difference of the two totals over N is one
# call's instructions (start-up, preparation and clean-up cancel out; the
# background commits a burst of sets starts are counted, as they are its cost).
#
# Usage: scripts/callgrind.sh [--side groupsim|foundation] [--calls N] [OPERATION ...]
#   OPERATION  string-hit integer-registered miss set set-then-read dictionary set-then-dictionary set-sync,
#              set-without-post post (parts of the set: the library's set under the face, and corelibs' post),
#              encode decode (the binary property list of the 101-key suite: `codec --only`),
#              json-encode json-decode (the sync protocol's push of that suite's 101 records: `codec --only`)
#              (default: all but set-sync)
set -euo pipefail
cd "$(dirname "$0")/.."

side=groupsim
calls=20000
operations=()
while [ $# -gt 0 ]; do
  case "$1" in
    --side) side=${2:?--side needs groupsim or foundation}; shift 2 ;;
    --calls) calls=${2:?--calls needs a number}; shift 2 ;;
    -h|--help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "usage: scripts/callgrind.sh [--side groupsim|foundation] [--calls N] [OPERATION ...]" >&2; exit 2 ;;
    *) operations+=("$1"); shift ;;
  esac
done
[ ${#operations[@]} -gt 0 ] || operations=(string-hit integer-registered miss set set-then-read dictionary)
case "$calls" in ''|*[!0-9]*|0) echo "error: --calls must be a positive whole number, found '$calls'" >&2; exit 2 ;; esac
command -v valgrind >/dev/null || { echo "error: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }

source scripts/setup.sh
swift build -c release --product groupsim-bench >&2
bench=.build/release/groupsim-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The total instructions of one run of OPERATION with $2 calls.
instructions() {
  local operation=$1 count=$2 per_round command=foundation
  per_round=(--calls "$count")
  # set + synchronize() writes the file each call: its own, smaller count.
  [ "$operation" = set-sync ] && per_round=(--sync-calls "$count")
  case "$operation" in encode|decode|json-encode|json-decode) command=codec ;; esac
  valgrind --tool=callgrind --callgrind-out-file="$work/out" \
    "$bench" "$command" --only "$operation" --side "$side" --rounds 1 "${per_round[@]}" \
    >"$work/log" 2>&1 || { cat "$work/log" >&2; echo "error: callgrind run of $operation failed" >&2; return 1; }
  awk '/^(summary|totals):/ { print $2; exit }' "$work/out"
}

echo "| call ($side) | instructions per call |"
echo "|---|---:|"
for operation in "${operations[@]}"; do
  count=$calls
  # Each set + synchronize() is two fsyncs, each codec call a whole suite: fewer of them.
  [ "$operation" = set-sync ] && count=$(( calls / 100 > 0 ? calls / 100 : 1 ))
  case "$operation" in encode|decode|json-encode|json-decode) count=$(( calls / 20 > 0 ? calls / 20 : 1 )) ;; esac
  once=$(instructions "$operation" "$count")
  twice=$(instructions "$operation" $(( count * 2 )))
  echo "| \`$operation\` | $(( (twice - once) / count )) |"
done
