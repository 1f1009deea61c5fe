#!/usr/bin/env python3
"""Every ```swift block of README.md and docs/*.md as code: compiled against this package's
products, run where it is a program or a test. scripts/check-dependent-package.sh calls it to
make its package (README.md's "Testing your own app", as written) and adds each block to that
package, so the dependencies compile once. docs/ci.md, "Examples in the docs are code", has the
convention this file reads.

    doc-examples.py list [FILE.md …]      every swift block with its kind (README.md and docs/*.md)
    doc-examples.py package APP CLONE     writes the package in APP (CLONE: the clone's folder name)
    doc-examples.py explain LOG           after a failed build: the errors in doc examples, by block
    doc-examples.py run APP               runs the programs and loads the manifests `package` wrote
    doc-examples.py self-test             the checker against scripts/doc-examples-fixtures/

A block it cannot classify, a marker with no block after it or a fence never closed stops it
with file:line.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Executables the tests in the docs launch by name (`simulation.launch("NotesWidget")`): each folder is one.
EXECUTABLES = os.path.join(ROOT, "docs", "examples")
FIXTURES = os.path.join(ROOT, "scripts", "doc-examples-fixtures")
KINDS = ("fragment", "program", "test", "manifest", "continues", "not-compiled")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
MARKER = re.compile(r"^<!--\s*example:\s*(.*?)\s*(-->)?\s*$")
IMPORT = re.compile(r"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_]\w*)",
                    re.M)
# The README's own package: the blocks check-dependent-package.sh follows as a user would.
OWN_SECTION = "## Testing your own app"
SWITCH_SECTION = "## Your settings code, unchanged"


class DocError(Exception):
    """A problem in a markdown file, at a line: printed as file:line: message."""

    def __init__(self, path, line, message):
        super().__init__(f"{path}:{line}: {message}")


class Block:
    def __init__(self, path, line, lang, body, section):
        self.path, self.line, self.lang, self.body, self.section = path, line, lang, body, section
        self.kind, self.reason, self.given, self.given_line = None, None, "", None
        self.role = None  # set for the README's own package's files
        self.continued = None  # for `continues`: the block whose module it joins

    @property
    def first_line(self):  # the line of the block's first line of code
        return self.line + 1

    @property
    def name(self):  # a target name that says where the block is
        return "Example_" + re.sub(r"\W", "_", self.path) + f"_{self.line}"

    def where(self):
        return f"{self.path}:{self.line}"


def read_blocks(path, relative):
    """Every fenced block of one markdown file, swift blocks with their marker read."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, section, marker, index = [], "", None, 0
    while index < len(lines):
        text = lines[index]
        if text.startswith("## "):
            section = text
        found = MARKER.match(text)
        if found:
            start = index
            words, closed, given = found.group(1), found.group(2), []
            while not closed:
                index += 1
                if index == len(lines):
                    raise DocError(relative, start + 1, "the example marker is never closed (a line of its own: -->)")
                if lines[index].strip() == "-->":
                    closed = True
                else:
                    given.append(lines[index])
            marker = (start + 1, words, "\n".join(given) + ("\n" if given else ""), start + 2)
            index += 1
            if index == len(lines) or not lines[index].startswith("```swift"):
                raise DocError(relative, start + 1, "an example marker must be the line just before a ```swift fence")
            continue
        fence = FENCE.match(text)
        if fence:
            opening, lang, start = fence.group(1), fence.group(2), index
            indent = len(text) - len(text.lstrip(" "))
            body = []
            index += 1
            while index < len(lines) and not (lines[index].lstrip(" ").startswith(opening[0] * len(opening))
                                              and lines[index].strip(opening[0] + " ") == ""):
                body.append(lines[index][indent:] if lines[index][:indent].strip() == "" else lines[index])
                index += 1
            if index == len(lines):
                raise DocError(relative, start + 1, f"the {opening}{lang} fence is never closed")
            block = Block(relative, start + 1, lang, "\n".join(body) + "\n", section)
            if marker:
                classify(block, *marker)
                marker = None
            blocks.append(block)
        index += 1
    return blocks


def classify(block, marker_line, words, given, given_line):
    """The kind a marker names: `fragment`, `program`, `test`, `manifest`, `continues`, `not-compiled: REASON`."""
    kind, _, reason = words.partition(":")
    kind = kind.strip()
    if kind not in KINDS:
        raise DocError(block.path, marker_line, f"unknown example kind '{kind}' (one of: {', '.join(KINDS)})")
    if kind == "not-compiled" and not reason.strip():
        raise DocError(block.path, marker_line, "not-compiled needs a reason: <!-- example: not-compiled: REASON -->")
    if kind != "not-compiled" and reason.strip():
        raise DocError(block.path, marker_line, f"'{kind}' takes no ': …' (Swift it needs goes on the marker's next lines)")
    block.kind, block.reason, block.given, block.given_line = kind, reason.strip() or None, given, given_line


def infer(block):
    """The kind of a block without a marker: a manifest, a test, or a fragment that says what it imports."""
    if block.body.startswith("// swift-tools-version"):
        return "manifest"
    imports = set(IMPORT.findall(block.body))
    if imports & {"Testing", "XCTest"}:
        return "test"
    if imports:
        return "fragment"
    raise DocError(block.path, block.line, "cannot tell what this swift block is: it imports nothing. Put a marker on the line "
                   "before it (docs/ci.md, \"Examples in the docs are code\"): <!-- example: fragment --> with its imports "
                   "and what it uses on the next lines, or <!-- example: not-compiled: REASON -->")


def doc_files(arguments):
    """(path, path from the repository's root) of each file given, or of README.md and docs/*.md."""
    if arguments:
        missing = [path for path in arguments if not os.path.isfile(path)]
        if missing:
            sys.exit(f"{missing[0]}: no such file")
        return [(os.path.abspath(path), os.path.relpath(os.path.abspath(path), ROOT)) for path in arguments]
    names = ["README.md"] + sorted("docs/" + name for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md"))
    return [(os.path.join(ROOT, name), name) for name in names]


def examples(files):
    """Every fenced block of the files, each swift one with its kind; the README's own package's blocks have a role
    instead. Every problem is collected, so one run names them all."""
    blocks, problems = [], []
    for path, relative in files:
        try:
            found = read_blocks(path, relative)
            if relative == "README.md":
                mark_own_package(found)
        except DocError as problem:
            problems.append(str(problem))
            continue
        previous = None
        for block in found:
            if block.lang != "swift":
                continue
            try:
                if block.role is None and block.kind is None:
                    block.kind = infer(block)
                if block.kind == "continues":
                    if previous is None or previous.kind in ("manifest", "not-compiled") or previous.role:
                        raise DocError(block.path, block.line, "'continues' follows a compiled swift block of the same file; "
                                       "there is none before this one")
                    block.continued = previous if previous.kind != "continues" else previous.continued
            except DocError as problem:
                problems.append(str(problem))
            previous = block
        blocks += found
    return blocks, problems


def swift_blocks(files):
    blocks, problems = examples(files)
    return [block for block in blocks if block.lang == "swift"], problems


def mark_own_package(blocks):
    """README.md's "Testing your own app": its Package.swift, the app's, the widget's and the intent's main.swift, the
    manifest and the scenario, in that order, and the module-wide switch of "Your settings code, unchanged". A section
    whose blocks moved or changed kind fails here."""
    own = [block for block in blocks if block.section.startswith(OWN_SECTION)]
    swift = [block for block in own if block.lang == "swift"]
    yaml = [block for block in own if block.lang == "yaml"]
    if len(swift) < 4 or len(yaml) < 2:
        raise DocError("README.md", own[0].line if own else 1,
                       f"'{OWN_SECTION[3:]}' has {len(swift)} swift and {len(yaml)} yaml blocks; expected 4 and 2")
    switch = [block for block in blocks if block.section.startswith(SWITCH_SECTION) and block.lang == "swift"
              and "@_exported import SimulatedFoundation" in block.body]
    if len(switch) != 1:
        raise DocError("README.md", 1, f"'{SWITCH_SECTION[3:]}' has no (or several) swift block with '@_exported import SimulatedFoundation'")
    for block, role in ((swift[0], "Package.swift"), (swift[1], "Sources/my-app/main.swift"), (swift[2], "Sources/my-widget/main.swift"),
                        (swift[3], "Sources/my-intent/main.swift"), (yaml[0], "app.yaml"), (yaml[1], "scenarios/theme.yaml"),
                        (switch[0], "Sources/MySettings/Switch.swift")):
        block.role = role


def products():
    """The package's library products, from Package.swift: what an example may import."""
    manifest = open(os.path.join(ROOT, "Package.swift"), encoding="utf-8").read()
    return re.findall(r'\.library\(\s*name:\s*"([^"]+)"', manifest)


def located(block):
    """The block's Swift, its marker's lines first, so that the compiler names the markdown file and line."""
    text = ""
    if block.given:
        text += f'#sourceLocation(file: "{block.path}", line: {block.given_line})\n{block.given}'
    return text + f'#sourceLocation(file: "{block.path}", line: {block.first_line})\n{block.body}#sourceLocation()\n'


def write(path, text):
    """Writes the file unless it holds the text already: an unchanged file is not compiled again."""
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def modules(blocks):
    """The compiled blocks, each with those that continue it: one module each."""
    compiled = {}
    for block in blocks:
        if not block.role and block.kind not in ("manifest", "not-compiled"):
            compiled.setdefault(block.continued if block.kind == "continues" else block, []).append(block)
    return compiled


def uses(swift, library):
    """The package's products a piece of Swift imports, as a target's dependencies."""
    return [f'.product(name: "{name}", package: "groupsim")' for name in sorted(set(IMPORT.findall(swift)) & library)]


def dependency_list(names):
    return ", ".join(f'"{name}"' if not name.startswith(".") else name for name in names)


def make_package(app, clone):
    every, problems = examples(doc_files([]))
    if problems:
        sys.exit("\n".join(problems))
    own = {block.role: block for block in every if block.role}
    blocks = [block for block in every if block.lang == "swift"]
    package = own["Package.swift"].body
    if 'path: "../groupsim"' not in package or "\n    ]\n)" not in package:
        sys.exit("README.md's Package.swift no longer depends on path ../groupsim or no longer ends its targets with '    ]\\n)'")
    package = package.replace('path: "../groupsim"', f'path: "../{clone}"')
    library = set(products())
    executables = sorted(name for name in os.listdir(EXECUTABLES) if os.path.isdir(os.path.join(EXECUTABLES, name)))
    # A test target beside the README's executable for the GroupSimTesting test check-dependent-package.sh adds, and a
    # library module switched as the README's "Your settings code, unchanged" says (its public API names UserDefaults).
    targets = ['.testTarget(name: "MyAppTests", dependencies: ["my-app", .product(name: "GroupSimTesting", package: "groupsim")])',
               '.target(name: "MySettings", dependencies: [.product(name: "SimulatedFoundation", package: "groupsim")])']
    for name in executables:
        sources = {file: open(os.path.join(EXECUTABLES, name, file), encoding="utf-8").read()
                   for file in os.listdir(os.path.join(EXECUTABLES, name)) if file.endswith(".swift")}
        for file, text in sources.items():
            write(os.path.join(app, "Sources", name, file), text)
        targets.append(f'.executableTarget(name: "{name}", dependencies: [{dependency_list(uses("".join(sources.values()), library))}])')
    programs, manifests = [], []
    for head, pieces in modules(blocks).items():
        text = "".join(located(piece) for piece in pieces)
        dependencies = uses("".join(piece.given + piece.body for piece in pieces), library)
        if head.kind == "test":
            write(os.path.join(app, "Tests", head.name, "Example.swift"), text)
            targets.append(f'.testTarget(name: "{head.name}", dependencies: [{dependency_list(executables + dependencies)}])')
        else:
            # Top-level code, as in a main.swift: declarations and statements alike, each example a module of its own.
            write(os.path.join(app, "Sources", head.name, "main.swift"), text)
            targets.append(f'.executableTarget(name: "{head.name}", dependencies: [{dependency_list(dependencies)}])')
            if head.kind == "program":
                programs.append({"where": head.where(), "target": head.name})
    for block in blocks:
        if block.kind == "manifest":
            manifests.append({"where": block.where(), "first_line": block.first_line, "body": block.body})
    package = package.replace("\n    ]\n)", "\n" + "".join(f"        {target},\n" for target in targets) + "    ]\n)", 1)
    files = {"Package.swift": package}
    for role, block in own.items():
        if role != "Package.swift":
            files[role] = located(block) if block.lang == "swift" else block.body
    for name, text in files.items():
        write(os.path.join(app, name), text)
    write(os.path.join(app, "doc-examples.json"), json.dumps({"programs": programs, "manifests": manifests}, indent=1))
    counts = {}
    for block in blocks:
        kind = "README's own package" if block.role else block.kind
        counts[kind] = counts.get(kind, 0) + 1
    print("doc examples: " + ", ".join(f"{count} {kind}" for kind, count in sorted(counts.items())))


def explain(log):
    lines = explained(open(log, encoding="utf-8", errors="replace").read())
    print("\n".join(lines) if lines else "==> the build failed outside the examples of the docs (above)")
    return 1


def explained(output):
    """The errors a compiler reported in markdown files (the examples' #sourceLocation), under the block each is in."""
    errors = [(hit, text) for text in output.split("\n")
              for hit in [re.match(r"^(\S+\.md):(\d+):(\d+): error: (.*)$", text)] if hit]
    named = sorted({hit.group(1) for hit, _ in errors if os.path.exists(os.path.join(ROOT, hit.group(1)))})
    blocks, _ = swift_blocks(doc_files([os.path.join(ROOT, path) for path in named]))
    found = {}
    for hit, text in errors:
        path, line = hit.group(1), int(hit.group(2))
        owner = next((block for block in blocks if block.path == path
                      and (block.line <= line <= block.line + block.body.count("\n") + 1
                           or (block.given_line and block.given_line <= line < block.line))), None)
        heading = f"{owner.where()}: the example ({owner.role or owner.kind}) does not compile" if owner else f"{path}: in no block"
        found.setdefault(heading, [])
        if text.strip() not in found[heading]:
            found[heading].append(text.strip())
    if not found:
        return []
    lines = ["==> examples in the docs that do not compile (fix the doc; docs/ci.md, \"Examples in the docs are code\"):"]
    for heading, errors in found.items():
        lines += [heading] + ["    " + error for error in errors]
    return lines


def run(app):
    """The programs, each once in a simulation root of its own with nothing on its stdin, and the manifests, loaded."""
    listed = json.load(open(os.path.join(app, "doc-examples.json"), encoding="utf-8"))
    failures = []
    with tempfile.TemporaryDirectory(prefix="groupsim-doc-examples-") as scratch:
        for program in listed["programs"]:
            environment = dict(os.environ, GROUPSIM_ROOT=os.path.join(scratch, program["target"]))
            try:
                done = subprocess.run([os.path.join(app, ".build", "debug", program["target"])], stdin=subprocess.DEVNULL,
                                      capture_output=True, text=True, env=environment, timeout=60)
                status = f"exited with status {done.returncode}" if done.returncode else None
                output = done.stdout + done.stderr
            except subprocess.TimeoutExpired as timeout:
                status, output = "did not end within 60 s", str(timeout.output or "")
            if status:
                failures.append(f"{program['where']}: the example (program) {status}; its output:\n{output}")
            else:
                print(f"✔ {program['where']} (program) ran")
        for index, manifest in enumerate(listed["manifests"]):
            failure = load_manifest(manifest, os.path.join(scratch, f"manifest-{index}"))
            if failure:
                failures.append(failure)
            else:
                print(f"✔ {manifest['where']} (manifest) loads")
    if failures:
        print("\n".join(failures))
        return 1
    return 0


def load_manifest(manifest, folder):
    """A Package.swift, or the arguments of its `Package(…)`, as `swift package dump-package` loads it (its Swift is
    compiled and run; the dependencies are not fetched). Errors are given at the markdown's line."""
    body = manifest["body"]
    if body.startswith("// swift-tools-version"):
        header = ""
    else:
        header = '// swift-tools-version: 6.0\nimport PackageDescription\n\nlet package = Package(\n    name: "Example",\n'
        body += ")\n"
    write(os.path.join(folder, "Package.swift"), header + body)
    done = subprocess.run(["swift", "package", "dump-package"], cwd=folder, capture_output=True, text=True)
    if done.returncode == 0:
        return None
    offset = manifest["first_line"] - 1 - header.count("\n")
    path, line = manifest["where"].split(":")
    output = re.sub(r"\S*Package\.swift:(\d+)", lambda hit: f"{path}:{int(hit.group(1)) + offset}", done.stdout + done.stderr)
    output = "\n".join(text for text in output.split("\n") if "Invalid manifest (compiled with" not in text)
    return f"{manifest['where']}: the example (manifest) does not load:\n{output}"


def list_blocks(arguments):
    blocks, problems = swift_blocks(doc_files(arguments))
    for block in blocks:
        kind = f"README's own package: {block.role}" if block.role else block.kind
        if block.kind == "not-compiled":
            kind += f": {block.reason}"
        print(f"{block.where()}: {kind}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    return 0


def self_test():
    """Each fixture's first line says the problem the checker must report, file:line included. A fixture whose blocks
    read well is compiled as the package build compiles a block (they import nothing: the type checker of swiftc alone)."""
    failures = checked = 0
    for name in sorted(os.listdir(FIXTURES)):
        if not name.endswith(".md"):
            continue
        path = os.path.join(FIXTURES, name)
        expected = re.match(r"<!-- expect: (.*) -->", open(path, encoding="utf-8").readline()).group(1)
        blocks, problems = swift_blocks(doc_files([path]))
        with tempfile.TemporaryDirectory(prefix="groupsim-doc-examples-") as scratch:
            for head, pieces in modules(blocks).items() if not problems else []:
                write(os.path.join(scratch, head.name, "main.swift"), "".join(located(piece) for piece in pieces))
                done = subprocess.run(["swiftc", "-typecheck", os.path.join(scratch, head.name, "main.swift")], cwd=ROOT,
                                      capture_output=True, text=True)
                problems += explained(done.stdout + done.stderr)
        if not any(expected in problem for problem in problems):
            print(f"✘ {name}: expected a problem with '{expected}', got: {problems or 'none'}")
            failures += 1
        checked += 1
    if not failures:
        print(f"✔ the check of the docs' examples reports each of its {checked} fixtures at its line")
    return 1 if failures else 0


def main(arguments):
    command = arguments[0] if arguments else ""
    if command == "list":
        return list_blocks(arguments[1:])
    if command == "package" and len(arguments) == 3:
        return make_package(arguments[1], arguments[2])
    if command == "explain" and len(arguments) == 2:
        return explain(arguments[1])
    if command == "run" and len(arguments) == 2:
        return run(arguments[1])
    if command == "self-test":
        return self_test()
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) or 0)
