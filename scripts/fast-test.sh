#!/usr/bin/env bash
# The tests that need no executable, built and run alone in seconds.
#
# SwiftPM on Linux links every test target into one bundle, so `swift test --filter X` first builds the
# whole package (seven executables, NIO) and relinks that bundle after any change. This script instead
# builds a package of its own in .build/fast-test: the fast test targets (FAST below) and the targets
# they depend on, their folders linked to the real ones (nothing is copied, so an edit is seen at once),
# and runs `swift test` there. Only those targets are compiled, and only those depending on a changed
# file are recompiled. The package is written again whenever Package.swift changes.
#
# Usage: scripts/fast-test.sh [swift test options, e.g. --filter StepWriterTests]
# Measured figures: benchmarks/results.md ("Fast tests").
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT="$ROOT/.build/fast-test"
# Test targets whose dependencies are all pure (scripts/package-graph.py --check keeps them so).
FAST="ScenarioModelTests"

if [[ ! -f "$OUT/Package.swift" || "$ROOT/Package.swift" -nt "$OUT/Package.swift" ]]; then
    [[ -d "$ROOT/.build/checkouts" ]] || (cd "$ROOT" && swift package resolve)
    mkdir -p "$OUT"
    (cd "$ROOT" && swift package describe --type json) >"$OUT/describe.json"
    python3 - "$ROOT" "$OUT" "$FAST" <<'PYTHON' || exit 1
import json, os, sys

root, out, fast = sys.argv[1], sys.argv[2], sys.argv[3].split()
text = open(os.path.join(out, "describe.json")).read()
package = json.loads(text[text.index("{"):])
targets = {t["name"]: t for t in package["targets"]}
# The other packages' products a fast target may reach, and the checkout that holds each (.build/checkouts).
PRODUCTS = {"Yams": "Yams"}

needed, queue = [], list(fast)
while queue:
    name = queue.pop()
    if name in needed:
        continue
    if name not in targets:
        sys.exit(f"fast-test: no target named {name} in Package.swift")
    needed.append(name)
    queue.extend(targets[name].get("target_dependencies", []))

lines, packages = [], set()
for name in sorted(needed):
    target = targets[name]
    if target["type"] not in ("library", "test"):
        sys.exit(f"fast-test: {name} is a {target['type']} target; a fast test depends only on library targets")
    products = []
    for product in target.get("product_dependencies", []):
        if product not in PRODUCTS:
            sys.exit(f"fast-test: {name} needs the product {product}; add it to PRODUCTS in scripts/fast-test.sh")
        packages.add(PRODUCTS[product])
        products.append(f'.product(name: "{product}", package: "{PRODUCTS[product]}")')
    link = os.path.join(out, target["path"])
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.islink(link):
        os.remove(link)
    os.symlink(os.path.join(root, target["path"]), link)
    dependencies = ", ".join([f'"{d}"' for d in sorted(target.get("target_dependencies", []))] + products)
    kind = "testTarget" if target["type"] == "test" else "target"
    lines.append(f'        .{kind}(name: "{name}", dependencies: [{dependencies}], path: "{target["path"]}"),')

checkouts = [f'        .package(path: "{os.path.join(root, ".build/checkouts", p)}"),' for p in sorted(packages)]
manifest = "\n".join([
    "// swift-tools-version: 6.0",
    "// Written by scripts/fast-test.sh from ../../Package.swift; do not edit.",
    "import PackageDescription",
    "",
    'let package = Package(',
    '    name: "groupsim-fast-test",',
    "    dependencies: [", *checkouts, "    ],",
    "    targets: [", *lines, "    ]",
    ")",
    "",
])
with open(os.path.join(out, "Package.swift"), "w") as file:
    file.write(manifest)
PYTHON
fi

cd "$OUT"
exec swift test "$@"
