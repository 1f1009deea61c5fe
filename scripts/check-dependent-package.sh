#!/usr/bin/env bash
# Builds and tests a throwaway package that depends on this one by path, as a
# user's package does, reaching this clone through a folder that is NOT named
# groupsim (a link called gs-clone): the Package.swift spelling that README.md
# and docs/testing.md give must work wherever the clone is. The package has an
# executable that links SimulatedFoundation and a Swift Testing test that
# launches it with GroupSimTesting. Slow (a full build of the dependency):
# CI runs it once. --keep keeps the temporary folder.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
keep=0
[[ "${1:-}" == "--keep" ]] && keep=1
work="$(mktemp -d "${TMPDIR:-/tmp}/groupsim-dependent-XXXXXX")"
cleanup() { if [[ $keep == 1 ]]; then echo "kept: $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT

ln -s "$here" "$work/gs-clone"
mkdir -p "$work/Notes/Sources/NotesTool" "$work/Notes/Tests/NotesTests"
cat > "$work/Notes/Package.swift" <<'SWIFT'
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Notes",
    dependencies: [
        .package(name: "groupsim", path: "../gs-clone"),
    ],
    targets: [
        .executableTarget(name: "NotesTool", dependencies: [.product(name: "SimulatedFoundation", package: "groupsim")]),
        .testTarget(name: "NotesTests", dependencies: [
            "NotesTool",
            .product(name: "GroupSimTesting", package: "groupsim"),
        ]),
    ]
)
SWIFT
cat > "$work/Notes/Sources/NotesTool/main.swift" <<'SWIFT'
import SimulatedFoundation

// Registers a default, says it is ready (flushed: its standard output is a pipe), then waits for its input to end.
UserDefaults.standard.register(defaults: ["theme": "light"])
print("ready")
fflush(nil)
while readLine() != nil {}
SWIFT
cat > "$work/Notes/Tests/NotesTests/NotesTests.swift" <<'SWIFT'
import GroupSimTesting
import Testing

@Test func theToolRunsAsTheExampleApp() async throws {
    try await withSimulation { simulation in
        try simulation.install(.example)
        let tool = try await simulation.launch("NotesTool", arguments: ["-fontSize", "20"])
        try await tool.waitForOutput(matching: "^ready$")
        #expect(try await tool.effectiveValue(forKey: "theme") == EffectiveValue(value: "light", domain: "NSRegistrationDomain"))
        #expect(try await tool.value(forKey: "fontSize") == "20")
        try await tool.set("theme", "dark")
        #expect(try await tool.value(forKey: "theme") == "dark")
    }
}
SWIFT

cd "$work/Notes"
echo "==> building a package that depends on $here through $work/gs-clone"
swift build --build-tests
echo "==> testing it"
swift test --skip-build
echo "==> the dependent package builds and its test passes"
