#!/usr/bin/env bash
# Runs the scenario suite (the product's main job): installs what is missing,
# builds, then runs the scenarios. Until the scenario runner lands this is an
# end-to-end smoke check of the tool against a fresh simulation root.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "==> building"
swift build
bin=.build/debug/groupsim
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
export GROUPSIM_ROOT="$root"
check() { if [ "$2" != "$3" ]; then echo "FAIL $1: expected '$3', got '$2'"; exit 1; fi; echo "ok   $1"; }
$bin defaults write group.com.example.shared greeting hello
check "write then read" "$($bin defaults read group.com.example.shared greeting)" hello
$bin defaults write group.com.example.shared visits -int-add 2
$bin defaults write group.com.example.shared visits -int-add 3
check "atomic counter" "$($bin defaults read group.com.example.shared visits)" 5
check "value type" "$($bin defaults read-type group.com.example.shared visits)" "Type is integer"
check "container path" "$($bin container group.com.example.shared)" "$root/devices/iPhone/Containers/Shared/AppGroup/group.com.example.shared"
echo "smoke check: 4 passed, 0 failed"
