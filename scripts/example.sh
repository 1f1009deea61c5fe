#!/usr/bin/env bash
# The example of a user's own project, Examples/NotesApp: a package of its own
# that depends on this one by path. Builds it once (its executables and its
# tests), runs its scenarios with the groupsim built from this repository, then
# its own tests (GroupSimTesting), one of which checks that the mistake in
# Examples/NotesApp/catches/ fails, for the right reason.
# Arguments go to `groupsim run`, e.g. --junit "$PWD/example.xml" (a relative
# path is taken from Examples/NotesApp).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "==> building groupsim (the runner starts its built-in roles from groupsim's folder)"
for product in groupsim main-app widget intent-extension; do swift build --product "$product"; done
groupsim="$PWD/.build/debug/groupsim"
cd Examples/NotesApp
echo "==> building Examples/NotesApp and its tests"
swift build --build-tests
echo "==> running Examples/NotesApp/scenarios"
"$groupsim" run scenarios "$@"
echo "==> testing Examples/NotesApp"
swift test --skip-build
