#!/usr/bin/env bash
# Runs the benchmarks on a release build. Results for this repository's
# reference machine are kept in benchmarks/results.md.
#
# Usage: scripts/bench.sh [--smoke] [BENCHMARK ...]
#   BENCHMARK   propagation burst start-to-ready foundation codec control cloud curves (default: all)
#   --smoke     tiny counts, seconds in all: checks that each benchmark runs
#               to its end (CI runs it); the numbers mean nothing. Every
#               benchmark is run, and the script fails naming those that did not.
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
names=()
for argument in "$@"; do
  case "$argument" in
    --smoke) smoke=1 ;;
    -h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "usage: scripts/bench.sh [--smoke] [BENCHMARK ...]" >&2; exit 2 ;;
    *) names+=("$argument") ;;
  esac
done
[ ${#names[@]} -gt 0 ] || names=(propagation burst start-to-ready foundation codec control cloud curves)

source scripts/setup.sh
swift build -c release
bench=.build/release/groupsim-bench

# The counts of a smoke run, per benchmark.
smoke_arguments() {
  case "$1" in
    propagation) echo "--changes 5 --warmup 1 --keys 5" ;;
    burst) echo "--sets 50" ;;
    start-to-ready) echo "--runs 1" ;;
    foundation) echo "--keys 10 --rounds 1 --calls 1000 --sync-calls 5" ;;
    codec) echo "--keys 10 --rounds 1 --calls 10" ;;
    control) echo "--keys 10 --rounds 1 --calls 1000 --requests 20" ;;
    cloud) echo "--changes 5 --warmup 1" ;;
    # Every curve at its two smallest sizes; the suite is one scenario, the output a scratch folder.
    curves) echo "--quick --changes 3 --warmup 1 --scenarios scenarios/global-domain.yaml --output $(mktemp -d)" ;;
    *) echo "error: no smoke counts for benchmark '$1'; add them to scripts/bench.sh" >&2; return 1 ;;
  esac
}

failed=()
for name in "${names[@]}"; do
  echo "==> $name"
  if [ "$smoke" = 1 ]; then
    arguments=$(smoke_arguments "$name") || { failed+=("$name"); continue; }
    status=0
    # shellcheck disable=SC2086 # the counts are words
    "$bench" "$name" $arguments || status=$?
    if [ "$status" != 0 ]; then failed+=("$name (status $status)"); fi
  else
    "$bench" "$name"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "error: these benchmarks did not run to their end: ${failed[*]}" >&2
  exit 1
fi
if [ "$smoke" = 1 ]; then echo "smoke: ${#names[@]} benchmark(s) ran to their end"; fi
