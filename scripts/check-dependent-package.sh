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
# resolves it by the name the docs give. Slow (a full build of the
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
# and the scenario (yaml). A section whose blocks moved or changed kind fails here, naming what it found.
python3 - "$here/README.md" "$work/MyApp" <<'PY'
import re, sys
readme, app = sys.argv[1], sys.argv[2]
text = open(readme, encoding="utf-8").read()
start = text.find("\n## Testing your own app\n")
if start < 0:
    sys.exit("README.md has no section '## Testing your own app'")
end = text.find("\n## ", start + 1)
section = text[start:end if end > 0 else len(text)]
blocks = re.findall(r"^```(\w+)\n(.*?)^```", section, flags=re.M | re.S)
swift = [body for kind, body in blocks if kind == "swift"]
yaml = [body for kind, body in blocks if kind == "yaml"]
if len(swift) < 2 or len(yaml) < 2:
    sys.exit(f"README.md's 'Testing your own app' has {len(swift)} swift and {len(yaml)} yaml blocks; expected 2 and 2")
package, main, manifest, scenario = swift[0], swift[1], yaml[0], yaml[1]
if 'path: "../groupsim"' not in package or "\n    ]\n)" not in package:
    sys.exit("README.md's Package.swift no longer depends on path ../groupsim or no longer ends its targets with '    ]\\n)'")
package = package.replace('path: "../groupsim"', 'path: "../gs-clone"')
# A test target beside the README's executable, for the GroupSimTesting test below, and a library module switched
# as the README's "Your settings code, unchanged" says (its public API names UserDefaults; below).
test_target = ('        .testTarget(name: "MyAppTests", dependencies: '
               '["my-app", .product(name: "GroupSimTesting", package: "groupsim")]),\n'
               '        .target(name: "MySettings", dependencies: [.product(name: "SimulatedFoundation", package: "groupsim")]),\n    ]\n)')
package = package.replace("\n    ]\n)", "\n" + test_target, 1)
top = text[text.find("\n## Your settings code, unchanged"):start]
switch = [body for kind, body in re.findall(r"^```(\w+)\n(.*?)^```", top, flags=re.M | re.S) if kind == "swift" and "@_exported import SimulatedFoundation" in body]
if len(switch) != 1:
    sys.exit("README.md's 'Your settings code, unchanged' has no (or several) swift block with '@_exported import SimulatedFoundation'")
files = {"Package.swift": package, "Sources/my-app/main.swift": main, "app.yaml": manifest, "scenarios/theme.yaml": scenario,
         "Sources/MySettings/Switch.swift": switch[0]}
for name, body in files.items():
    with open(f"{app}/{name}", "w", encoding="utf-8") as out:
        out.write(body)
PY
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
echo "==> building the README's package, which depends on $here through $work/gs-clone (README step 2)"
swift build --build-tests
echo "==> running its scenarios with the clone's groupsim (README step 3)"
"$groupsim" run scenarios
echo "==> testing it with GroupSimTesting"
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
echo "==> the README's package builds, its scenario passes and its test passes"
