#!/usr/bin/env bash
# Formats the Swift sources with swift-format (it ships with the toolchain) by
# the checked-in .swift-format; `--check` changes nothing and fails, naming
# file:line, where a file differs from its formatted self (CI runs that).
# Left out: the package manifests (their shape is read by people first) and
# Tests/ExamplesTests/ImportFixtures (compiled by tests exactly as written).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.swift' | grep -v -e '(^|/)Package\.swift$' -E | grep -v '/ImportFixtures/')
if [[ "${1:-}" == "--check" ]]; then
    swift format lint --strict --parallel "${files[@]}"
else
    swift format format --in-place --parallel "${files[@]}"
fi
