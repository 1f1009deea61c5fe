#!/usr/bin/env bash
# Runs the scenario suite, the product's main job: installs what is missing,
# builds, then runs every scenario in scenarios/ against real app, widget and
# intent-extension processes. Arguments go to `groupsim run` (see
# `groupsim run --help`), e.g. --filter concurrency --repeat 5 --timeline t.html
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "==> building"
swift build
echo "==> running scenarios"
exec .build/debug/groupsim run "$@"
