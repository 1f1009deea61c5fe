#!/usr/bin/env bash
# Follows README.md's "Testing your own app" as a new user would: its
# Package.swift, its executable, its app manifest and its scenario, taken from
# the README's code blocks as they are written, in a package beside a clone of
# this repository that is NOT named groupsim (a link called gs-clone), so the
# Package.swift spelling the README gives must work wherever the clone is.
# Then the README's commands: build the package, run its scenarios with the
# clone's groupsim. A Swift Testing test that drives the same executable with
# GroupSimTesting is added to the package (the README's Package.swift gains a
# test target) and run too; and a package that depends on a clone by URL
# resolves it by the name the docs give. Every other ```swift block of
# README.md and docs/*.md is a target of the same package (scripts/doc-examples.py),
# so the docs' examples compile with the dependency built once; the docs'
# programs run and their tests run with the README's. Slow (a full build of the
# dependency): CI runs it once. --keep keeps the temporary folder.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
keep=0
[[ "${1:-}" == "--keep" ]] && keep=1
work="$(mktemp -d "${TMPDIR:-/tmp}/groupsim-dependent-XXXXXX")"
cleanup() { if [[ $keep == 1 ]]; then echo "kept: $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT

ln -s "$here" "$work/gs-clone"
mkdir -p "$work/MyApp/Sources/my-app" "$work/MyApp/Sources/MySettings" "$work/MyApp/scenarios" "$work/MyApp/Tests/MyAppTests"

# The README's blocks, in the order the section gives them: Package.swift and main.swift (swift), the manifest
# and the scenario (yaml), and the switch of its top section; a section whose blocks moved or changed kind fails
# here, naming what it found. Beside them, every other swift block of README.md and docs/*.md as a target of its
# own (scripts/doc-examples.py; docs/ci.md, "Examples in the docs are code"), so its dependencies compile once.
python3 "$here/scripts/doc-examples.py" self-test
python3 "$here/scripts/doc-examples.py" package "$work/MyApp" gs-clone
# A library's settings code as it was written for Foundation, only the README's switch (Switch.swift) added to its
# module: public API that names UserDefaults, a default argument of .standard, key-value observing's names.
cat > "$work/MyApp/Sources/MySettings/ThemeStore.swift" <<'SWIFT'
import Foundation

public final class ThemeStore: NSObject {
    public let defaults: UserDefaults
    public private(set) var changes: [NSKeyValueChangeKey: Any] = [:]

    public init(defaults: UserDefaults = .standard) {
        self.defaults = defaults
        super.init()
        defaults.addObserver(self, forKeyPath: "theme", options: [.new], context: nil)
    }

    public var theme: String { defaults.string(forKey: "theme") ?? "light" }

    public func use(_ other: UserDefaults = UserDefaults(suiteName: "group.com.example.myapp")!) -> String? {
        other.string(forKey: "theme")
    }

    public override func observeValue(
        forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?
    ) {
        changes = change ?? [:]
    }
}
SWIFT
cat > "$work/MyApp/Tests/MyAppTests/MyAppTests.swift" <<'SWIFT'
import Foundation
import GroupSimTesting
import Testing

@Test func theThemeIsTheAppGroupsAndItsRegisteredDefault() async throws {
    try await withSimulation { simulation in
        let manifest = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../app.yaml")
        try simulation.install(.file(manifest.standardized.path))
        let app = try await simulation.launch("my-app", arguments: ["-fontSize", "20"])
        try await app.waitForOutput(matching: "^theme=light$")
        #expect(try await app.value(forKey: "fontSize") == "20")
        try app.sendInput("set theme dark")
        try await app.waitForOutput(matching: "^theme=dark$")
        #expect(try await app.value(forKey: "theme", suite: "group.com.example.myapp") == "dark")
    }
}
SWIFT

groupsim="$here/.build/debug/groupsim"
if [[ ! -x "$groupsim" ]]; then
    echo "==> building groupsim and its roles in the clone (README step 1)"
    (cd "$here" && for product in groupsim main-app widget intent-extension; do swift build --product "$product"; done)
fi
cd "$work/MyApp"
echo "==> building the README's package, which depends on $here through $work/gs-clone (README step 2), and the docs' examples"
if ! swift build --build-tests 2>&1 | tee "$work/build.log"; then
    python3 "$here/scripts/doc-examples.py" explain "$work/build.log"
    exit 1
fi
echo "==> running its scenarios with the clone's groupsim (README step 3)"
"$groupsim" run scenarios
echo "==> running the docs' programs, loading their manifests"
python3 "$here/scripts/doc-examples.py" run "$work/MyApp"
echo "==> testing it with GroupSimTesting (the README's test and the docs' tests)"
swift test --skip-build

# By URL, as docs/testing.md spells it: SwiftPM then knows the package by the repository's name (groupsim.git:
# "groupsim"), so `package: "groupsim"` resolves. Loading the package graph checks that (no second full build).
git clone -q --bare "$here" "$work/url/groupsim.git"
mkdir -p "$work/url/ByURL/Sources/ByURL"
cat > "$work/url/ByURL/Package.swift" <<SWIFT
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "ByURL",
    dependencies: [.package(url: "file://$work/url/groupsim.git", revision: "$(git -C "$here" rev-parse HEAD)")],
    targets: [.target(name: "ByURL", dependencies: [.product(name: "GroupSimTesting", package: "groupsim")])]
)
SWIFT
echo 'import GroupSimTesting' > "$work/url/ByURL/Sources/ByURL/ByURL.swift"
echo "==> a package that depends on a clone by URL resolves it as groupsim"
(cd "$work/url/ByURL" && swift package describe >/dev/null)
echo "==> the README's package builds, its scenario passes and its test passes; every example of the docs compiles"
