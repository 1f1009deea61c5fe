#!/usr/bin/env bash
# Runs the test suite: installs what is missing, builds, then runs every test
# (unit tests and the multi-process tests, which start the built executables).
set -euo pipefail
cd "$(dirname "$0")/.."
# setup.sh installs chromium, tmux, ip and strace: the browser, terminal, two-host and folder-flush tests need them.
export GROUPSIM_NEED_CHROMIUM=1 GROUPSIM_NEED_TMUX=1 GROUPSIM_NEED_IP=1 GROUPSIM_NEED_STRACE=1
source scripts/setup.sh
echo "==> building"
swift build --build-tests
echo "==> testing"
swift test --skip-build "$@"
