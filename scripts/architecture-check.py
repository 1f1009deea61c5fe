#!/usr/bin/env python3
"""Checks docs/architecture.md against the code, so the picture a newcomer
reads first cannot drift (CI runs it):

- every type it names in backticks (`UpperCamelCase`) is declared in
  Sources/ or Tests/, is a target, or is a name of another library or system
  the text cites (EXTERNAL below);
- every target of Package.swift (test targets and the fuzz target included),
  every benchmark of `groupsim-bench` (scripts/bench.sh's list) and every
  fuzz target (scripts/fuzz.sh's list) is named in it;
- and two rules of the code it describes ("Threads and locks", "Files"):
  state shared by threads is guarded by Guarded's `Locked`/`LockedCondition`
  only (no `lock()`/`unlock()` by hand, no NSLock, NSCondition or
  Synchronization's Mutex in Sources/ outside Sources/Guarded/), and no Swift
  file in Sources/ is over 500 lines.

Usage: scripts/architecture-check.py   (exit 1, naming each problem, if any)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs/architecture.md"

# Names the text cites that are not this project's: Swift, Foundation, POSIX,
# and the keys of Apple's defaults it quotes.
EXTERNAL = {
    "AppleLanguages", "AppleLocale", "AsyncStream", "NSLock", "WNOWAIT", "UserDefaults", "NotificationCenter",
    "NSObject", "Foundation", "XCTest", "Mutex", "DispatchQueue", "Task", "Yams", "NIO",
    "Atomic", "DispatchSemaphore", "NSCondition", "Void",
}


def declared_types():
    names = set()
    pattern = re.compile(r"\b(?:struct|class|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)")
    for folder in ("Sources", "Tests", "Fuzz", "Examples"):
        for path in (ROOT / folder).rglob("*.swift"):
            names.update(pattern.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names


def package_targets():
    text = (ROOT / "Package.swift").read_text(encoding="utf-8")
    return re.findall(r'\.(?:target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([^"]+)"', text) + re.findall(
        r'\bname:\s*"(groupsim-fuzz)"', text)


def shell_list(script, variable_pattern):
    text = (ROOT / script).read_text(encoding="utf-8")
    match = re.search(variable_pattern, text)
    if not match:
        sys.exit(f"architecture-check: cannot find the list in {script} ({variable_pattern})")
    return match.group(1).split()


# The one lock idiom: these appear in Sources/ only inside Sources/Guarded/.
LOCK_PATTERNS = [
    (re.compile(r"\.(?:lock|unlock)\(\)"), "a hand-written lock()/unlock()"),
    (re.compile(r"\bNS(?:Recursive)?Lock\(\)|\bNSCondition(?:Lock)?\(\)"), "a Foundation lock"),
    (re.compile(r"\bMutex\s*[<(]"), "Synchronization's Mutex (a futex Thread Sanitizer does not see)"),
]
MAXIMUM_LINES = 500


def source_problems():
    problems = []
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        relative = path.relative_to(ROOT)
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        count = len(lines) - (1 if lines and lines[-1] == "" else 0)
        if count > MAXIMUM_LINES:
            problems.append(f"{relative} has {count} lines, over {MAXIMUM_LINES}: split it by responsibility "
                            "(an extension in `Type+Topic.swift`, or a type of its own in its own file)")
        if relative.parts[1] == "Guarded":
            continue
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith("//"):
                continue
            for pattern, what in LOCK_PATTERNS:
                if pattern.search(line):
                    problems.append(f"{relative}:{number}: {what}; guard the state with Guarded's `Locked` "
                                    "(or `LockedCondition` to wait on it) and reach it through `withLock`")
    return problems


def main():
    doc = DOC.read_text(encoding="utf-8")
    problems = source_problems()
    targets = set(package_targets())
    known = declared_types() | targets | EXTERNAL
    # UpperCamelCase only: ALL_CAPS names are the environment's and the system's constants.
    for name in sorted(set(re.findall(r"`([A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*)`", doc))):
        if name not in known:
            problems.append(f"docs/architecture.md names `{name}`, which no source declares (and is no target): "
                            "rename or remove it, or add it to EXTERNAL in scripts/architecture-check.py if it is another library's")
    words = set(re.findall(r"[A-Za-z0-9_-]+", doc))
    for target in sorted(targets):
        if target not in words:
            problems.append(f"target {target} (Package.swift) is not named in docs/architecture.md: say where it sits and what it owns")
    entry = re.search(r"^  Benchmarks/(.*?)(?=^  \S|^\S)", doc, flags=re.M | re.S)
    listed = set(re.findall(r"[a-z-]+", entry.group(1))) if entry else set()
    for benchmark in shell_list("scripts/bench.sh", r'\|\| names=\(([^)]*)\)'):
        if benchmark not in listed:
            problems.append(f"benchmark {benchmark} (scripts/bench.sh) is not in the Benchmarks/ entry of docs/architecture.md")
    for target in shell_list("scripts/fuzz.sh", r'all_targets=\(([^)]*)\)'):
        if f"`{target}`" not in doc:
            problems.append(f"fuzz target `{target}` (scripts/fuzz.sh) is not named in docs/architecture.md")
    for problem in problems:
        print(f"architecture-check: {problem}", file=sys.stderr)
    if problems:
        return 1
    print("docs/architecture.md names only what exists, and every target, benchmark and fuzz target; "
          f"Sources/ guards state with Guarded only and has no file over {MAXIMUM_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
