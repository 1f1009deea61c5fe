#!/usr/bin/env bash
# Runs the benchmarks on a release build. Results for this repository's
# reference machine are kept in benchmarks/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
swift build -c release
bench=.build/release/groupsim-bench
for name in "${@:-propagation burst start-to-ready foundation control cloud}"; do
  for one in $name; do
    echo "==> $one"
    "$bench" "$one"
  done
done
