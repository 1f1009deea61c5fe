#!/usr/bin/env python3
"""Checks the DocC sections of the library products' public API, so the
parameter docs a user reads cannot drift from the signatures (CI runs it).

Which code: every target of every `.library(name:, targets: [...])` product of
Package.swift (so a new product is covered), under the target's `path:` or
Sources/NAME. Which declarations: every `func`, `init` and `subscript` that is
`public` or `open` (explicitly, or as a member of a `public extension` or a
`public protocol`), at file or type level (members of types, extensions and
protocols, however nested), whose enclosing types are public too.

What each must have, in the `///` lines right above it (its attributes
included):
- a doc comment at all;
- a parameter section, `- Parameter name:` or a `- Parameters:` list of
  `- name:` items, for every parameter that has a name. The name is the
  internal one (`_ value: Int` -> `value`, `forKey key: String` -> `key`);
  when the internal name is `_`, the external label (`key _: String` ->
  `key`); a parameter that is `_` only (`_: Int`) needs none. Labels inside a
  closure type (`(_ change: Change) -> Void`) are not parameters;
- `- Throws:` when it `throws` (typed or not) or `rethrows`;
- `- Returns:` when it returns something other than `Void`, `()` or `Never`
  (a subscript's element too; never for `init`).
And nothing more: a parameter it names that the signature does not have, a
`- Throws:` on a declaration that does not throw, or a `- Returns:` on one
that returns nothing is drift, reported as such.

EXEMPT below lists the few declarations that only satisfy a protocol
requirement of Swift's or Foundation's own, whose meaning the protocol fixes.

Usage:
  scripts/api-docs-check.py [--skip TARGET]...   file:line: what is missing; exit 1 if any
  scripts/api-docs-check.py --list [--skip TARGET]...   declarations and problems per target
  scripts/api-docs-check.py self-test             the checker against hostile declarations
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Declarations that only satisfy a requirement of a protocol of Swift's or Foundation's own (key: name and argument
# labels), with the reason; their meaning is the protocol's. A doc comment they do have is still checked for drift.
EXEMPT = {
    "==(_:_:)": "Equatable",
    "<(_:_:)": "Comparable",
    "hash(into:)": "Hashable",
    "encode(to:)": "Encodable",
    "init(from:)": "Decodable",
    "isEqual(_:)": "NSObject's equality, paired with hash",
    "init(stringLiteral:)": "ExpressibleByStringLiteral",
    "init(unicodeScalarLiteral:)": "ExpressibleByUnicodeScalarLiteral",
    "init(extendedGraphemeClusterLiteral:)": "ExpressibleByExtendedGraphemeClusterLiteral",
    "init(integerLiteral:)": "ExpressibleByIntegerLiteral",
    "init(floatLiteral:)": "ExpressibleByFloatLiteral",
    "init(booleanLiteral:)": "ExpressibleByBooleanLiteral",
    "init(arrayLiteral:)": "ExpressibleByArrayLiteral",
    "init(dictionaryLiteral:)": "ExpressibleByDictionaryLiteral",
    "init(nilLiteral:)": "ExpressibleByNilLiteral",
    "init(stringInterpolation:)": "ExpressibleByStringInterpolation",
    "init(literalCapacity:interpolationCount:)": "StringInterpolationProtocol",
    "appendLiteral(_:)": "StringInterpolationProtocol",
    "init(rawValue:)": "RawRepresentable",
}

MODIFIERS = {
    "public", "open", "private", "fileprivate", "internal", "package", "static", "class", "final", "override",
    "required", "convenience", "mutating", "nonmutating", "nonisolated", "dynamic", "optional", "lazy", "indirect",
    "prefix", "postfix", "infix", "consuming", "borrowing", "distributed", "weak", "unowned", "isolated",
}
TYPE_KEYWORDS = {"extension", "protocol", "struct", "class", "enum", "actor"}
NOT_RETURNING = {"Void", "()", "Never", "Swift.Void", "Swift.Never"}


# ---------------------------------------------------------------- lexing


def blank(text):
    """The text with comments and string contents as spaces (newlines kept), and its `///` lines by line number."""
    out = list(text)
    docs = {}
    n = len(text)
    i = 0
    # A stack of what encloses position i: ("code", open parens) or ("string", hashes, multiline).
    stack = [["code", 0]]

    def clear(start, end):
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        top = stack[-1]
        c = text[i]
        if top[0] == "code":
            if text.startswith("//", i):
                end = text.find("\n", i)
                end = n if end < 0 else end
                line_start = text.rfind("\n", 0, i) + 1
                if text.startswith("///", i) and not text.startswith("////", i) and not text[line_start:i].strip():
                    docs[text.count("\n", 0, i) + 1] = text[i + 3:end]
                clear(i, end)
                i = end
                continue
            if text.startswith("/*", i):
                depth, j = 1, i + 2
                while j < n and depth:
                    if text.startswith("/*", j):
                        depth, j = depth + 1, j + 2
                    elif text.startswith("*/", j):
                        depth, j = depth - 1, j + 2
                    else:
                        j += 1
                clear(i, j)
                i = j
                continue
            m = re.compile(r'(#*)("""|")').match(text, i)
            if m and (c == '"' or c == "#"):
                hashes = len(m.group(1))
                stack.append(["string", hashes, m.group(2) == '"""'])
                i = m.end()
                continue
            if c == "(":
                top[1] += 1
            elif c == ")":
                if top[1] == 0 and len(stack) > 1:
                    # The end of an interpolation: back into its string.
                    stack.pop()
                    out[i] = " "
                    i += 1
                    continue
                top[1] -= 1
            if len(stack) > 1:
                out[i] = " " if c != "\n" else "\n"
            i += 1
            continue
        # In a string.
        _, hashes, multiline = top
        closing = ('"""' if multiline else '"') + "#" * hashes
        if text.startswith(closing, i):
            stack.pop()
            i += len(closing)
            continue
        escape = "\\" + "#" * hashes
        if text.startswith(escape + "(", i):
            stack.append(["code", 0])
            clear(i, i + len(escape) + 1)
            i += len(escape) + 1
            continue
        if text.startswith(escape, i):
            clear(i, i + len(escape) + 1)
            i += len(escape) + 1
            continue
        if c == "\n" and not multiline:
            stack.pop()  # An unterminated string: the compiler refuses it; go on with the next line.
            continue
        if c != "\n":
            out[i] = " "
        i += 1
    return "".join(out), docs


TOKEN = re.compile(
    r"(?P<nl>\n)|(?P<space>[ \t\r\f]+)|(?P<directive>#(?:if|elseif|else|endif|warning|error|sourceLocation)\b[^\n]*)"
    r"|(?P<attr>@[A-Za-z_][A-Za-z0-9_]*)|(?P<word>`[^`\n]+`|[A-Za-z_$][A-Za-z0-9_$]*|#[A-Za-z_]+|[0-9][A-Za-z0-9_.]*)"
    r"|(?P<arrow>->)|(?P<op>[=\-+!*%<>&|^~?/.]+)|(?P<punct>.)")


class Token:
    __slots__ = ("kind", "text", "start", "end", "line")

    def __init__(self, kind, text, start, end, line):
        self.kind, self.text, self.start, self.end, self.line = kind, text, start, end, line

    def __repr__(self):
        return f"{self.kind}:{self.text!r}@{self.line}"


def tokenize(code):
    tokens = []
    line = 1
    for m in TOKEN.finditer(code):
        kind = m.lastgroup
        if kind == "space":
            continue
        if kind == "directive":
            kind = "nl"  # A `#if` line separates declarations as a newline does.
        tokens.append(Token(kind, m.group(), m.start(), m.end(), line))
        line += m.group().count("\n")
    return tokens


# ---------------------------------------------------------------- declarations


class Declaration:
    def __init__(self, keyword, name, params, throws, returns, line, keyword_line):
        self.keyword, self.name, self.params = keyword, name, params
        self.throws, self.returns, self.line, self.keyword_line = throws, returns, line, keyword_line
        self.inherits = False  # Implements a documented requirement of a protocol of the target.

    def key(self):
        labels = "".join(f"{label}:" for label, _ in self.params)
        return f"{self.name}({labels})"


OPENERS = {"(": ")", "[": "]", "{": "}"}


def matching(tokens, i):
    """The index of the token that closes the bracket at i (angle brackets counted only when tokens[i] is `<`)."""
    opener = tokens[i].text
    angle = opener == "<"
    depth = 0
    j = i
    while j < len(tokens):
        t = tokens[j].text
        if tokens[j].kind == "op" and angle and set(t) <= {"<", ">"}:
            depth += t.count("<") - t.count(">")
            if depth <= 0:
                return j
        elif t in OPENERS:
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
            if depth == 0 and not angle:
                return j
            if depth < 0:
                return j
        j += 1
    return len(tokens) - 1


def split_parameters(code):
    """The parameter clause's text (without its parentheses) as one text per parameter: commas at depth 0 split;
    in a type, `<…>` nests too; after a parameter's `=` (its default) only brackets do."""
    parts, current = [], []
    depth = angle = 0
    in_default = False
    i = 0
    while i < len(code):
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and not in_default and c == "<":
            angle += 1
        elif depth == 0 and not in_default and c == ">" and not (i and code[i - 1] == "-"):
            angle -= 1
        elif depth == 0 and angle == 0 and c == "=" and not in_default:
            in_default = True
        elif depth == 0 and angle == 0 and c == ",":
            parts.append("".join(current))
            current, in_default = [], False
            i += 1
            continue
        current.append(c)
        i += 1
    if "".join(current).strip():
        parts.append("".join(current))
    return parts


def parameter(text):
    """(external label, documented name or None) of one parameter's text."""
    head = text.split(":", 1)[0]
    words = [w.strip("`") for w in head.split()]
    if not words:
        return "_", None
    external = words[0]
    internal = words[1] if len(words) > 1 else words[0]
    name = internal if internal != "_" else (external if external != "_" else None)
    return external, name


def parse_file(text, known=None):
    """Every declaration of the file that the check covers, with its documented sections. `known` holds what the
    target's files declare, filled as they are read: "types" maps its types' names (qualified: `Outer.Inner`) to
    whether they are public (an extension of one that is not public is not API; of another module's type, it is),
    "requirements" maps its public protocols to the keys of their documented requirements (an implementation
    without a doc comment of its own shows the requirement's, as DocC does)."""
    known = {"types": {}, "requirements": {}} if known is None else known
    types, requirements = known["types"], known["requirements"]
    code, docs = blank(text)
    tokens = tokenize(code)
    found = []
    # The enclosing scopes: ("type", is public, members public by default, name, conformances, is a protocol) or
    # ("other",).
    scopes = []
    i = 0
    at_start = True

    def in_api_scope():
        return all(s[0] == "type" and s[1] for s in scopes)

    while i < len(tokens):
        t = tokens[i]
        if t.kind == "nl" or t.text == ";":
            at_start = True
            i += 1
            continue
        if t.text == "{":
            scopes.append(("other",))
            at_start = True
            i += 1
            continue
        if t.text == "}":
            if scopes:
                scopes.pop()
            at_start = True
            i += 1
            continue
        if not at_start or (scopes and scopes[-1][0] != "type"):
            at_start = False
            i += 1
            continue
        at_start = False
        # A statement's start in a type or at file level: attributes, modifiers, then maybe a keyword.
        start = i
        modifiers = set()
        j = i
        while j < len(tokens):
            tj = tokens[j]
            if tj.kind == "attr":
                j += 1
                if j < len(tokens) and tokens[j].text == "(" and tokens[j].start == tokens[j - 1].end:
                    j = matching(tokens, j) + 1
            elif tj.kind == "word" and tj.text in MODIFIERS and not (
                    tj.text == "class" and j + 1 < len(tokens) and tokens[j + 1].kind == "word"
                    and tokens[j + 1].text not in MODIFIERS | {"func", "var", "let", "subscript", "init"}):
                modifiers.add(tj.text)
                j += 1
                if j < len(tokens) and tokens[j].text == "(" and tokens[j].start == tokens[j - 1].end:
                    j = matching(tokens, j) + 1
            elif tj.kind == "nl":
                j += 1
            else:
                break
        if j >= len(tokens):
            break
        keyword = tokens[j].text
        explicit = modifiers & {"public", "open", "private", "fileprivate", "internal", "package"}
        default_public = bool(scopes) and scopes[-1][2]
        public = bool(explicit & {"public", "open"}) or (not explicit and default_public)
        if keyword in TYPE_KEYWORDS and j + 1 < len(tokens) and tokens[j + 1].kind == "word":
            # A type, an extension or a protocol: its members' scope opens at its first `{`.
            k = j + 1
            while k < len(tokens) and tokens[k].text not in ("{", "}", ";"):
                k += 1
            if k < len(tokens) and tokens[k].text == "{":
                name, m = tokens[j + 1].text.strip("`"), j + 2
                while m + 1 < k and tokens[m].text == "." and tokens[m + 1].kind == "word":
                    name, m = name + "." + tokens[m + 1].text.strip("`"), m + 2
                header = [tok.text for tok in tokens[m:k] if tok.kind != "nl"]
                if "where" in header:
                    header = header[:header.index("where")]
                conformances = set(header[header.index(":") + 1:]) if ":" in header else set()
                if keyword == "extension":
                    extended = types.get(name, True)
                    # An extension of a protocol gives its requirements default implementations.
                    scope = ("type", extended and not (explicit - {"public", "open"}),
                             extended and bool(explicit & {"public", "open"}), name, conformances | {name}, False)
                else:
                    name = ".".join([sc[3] for sc in scopes if sc[0] == "type"] + [name])
                    scope = ("type", public and in_api_scope(), keyword == "protocol" and public, name, conformances,
                             keyword == "protocol")
                    types[name] = types.get(name, False) or scope[1]
                scopes.append(scope)
                at_start = True
                i = k + 1
                continue
            i = k
            continue
        if keyword in ("func", "init", "subscript") and (keyword != "init" or tokens[j - 1].text != "."):
            declaration, end = parse_declaration(tokens, code, j, tokens[start].line)
            if declaration and public and in_api_scope():
                found.append(declaration)
                if scopes and scopes[-1][5] and doc_block(docs, declaration.line):
                    requirements.setdefault(scopes[-1][3], set()).add(declaration.key())
                declaration.inherits = bool(scopes) and any(
                    declaration.key() in requirements.get(conformance, ()) for conformance in scopes[-1][4])
            if end < len(tokens) and tokens[end].text == "{":
                scopes.append(("other",))  # The body (or a subscript's accessors).
                at_start = True
                end += 1
            i = end
            continue
        i = j
    return found, docs


def parse_declaration(tokens, code, j, start_line):
    """The declaration whose keyword is tokens[j], and the index where its header ends (its body's `{` if any)."""

    def next_code(k):
        """The first token at or after k that is not a newline (a header can be split over lines anywhere)."""
        while k < len(tokens) and tokens[k].kind == "nl":
            k += 1
        return k

    def at(k, *texts):
        return k < len(tokens) and tokens[k].text in texts

    keyword = tokens[j].text
    k = next_code(j + 1)
    name = keyword
    operator = False
    if keyword == "func":
        if k >= len(tokens):
            return None, k
        operator = tokens[k].kind == "op"
        name = tokens[k].text.strip("`")
        k += 1
        # An operator's name can be several op tokens long (`==`, `<~>`) before its generic clause or parameters.
        while operator and k < len(tokens) and tokens[k].kind == "op" and tokens[k].start == tokens[k - 1].end:
            name += tokens[k].text
            k += 1
        k = next_code(k)
    elif at(k, "?", "!"):
        k = next_code(k + 1)
    if k < len(tokens) and tokens[k].text.startswith("<"):
        k = next_code(matching(tokens, k) + 1)
    if not at(k, "("):
        return None, k
    close = matching(tokens, k)
    params = [parameter(p) for p in split_parameters(code[tokens[k].end:tokens[close].start])]
    if operator:
        params = [("_", name) for _, name in params]
    k = close + 1
    throws = False
    returns = None
    # Effects, then the result, then a where clause, up to the body or the end of the declaration.
    while at(next_code(k), "async", "reasync", "throws", "rethrows"):
        k = next_code(k)
        if tokens[k].text in ("throws", "rethrows"):
            throws = True
            if at(k + 1, "(") and tokens[k + 1].start == tokens[k].end:
                k = matching(tokens, k + 1)
        k += 1
    if next_code(k) < len(tokens) and tokens[next_code(k)].kind == "arrow":
        k = next_code(next_code(k) + 1)
        begin = k
        depth = 0
        while k < len(tokens):
            t = tokens[k]
            if t.text in ("(", "["):
                depth += 1
            elif t.text in (")", "]"):
                depth -= 1
            elif depth == 0 and (t.text in ("{", "}", ";", "where") or t.kind == "nl"):
                break
            k += 1
        returns = " ".join(tok.text for tok in tokens[begin:k] if tok.kind != "nl")
    if at(next_code(k), "where"):
        k = next_code(k)
        while k < len(tokens) and tokens[k].text not in ("{", "}", ";"):
            if tokens[k].kind == "nl" and tokens[k - 1].text not in (",", "&", ":", "where", "==") and not (
                    at(next_code(k), "{", ",", "&", "==", ":")):
                break
            k += 1
    # A body, maybe on the next line.
    if at(next_code(k), "{"):
        k = next_code(k)
    if keyword == "init":
        returns = None
    return Declaration(keyword, name, params, throws, returns, start_line, tokens[j].line), k


# ---------------------------------------------------------------- doc comments


def doc_block(docs, line):
    """The `///` lines right above `line`, top first."""
    lines = []
    n = line - 1
    while n in docs:
        lines.append(docs[n])
        n -= 1
    return list(reversed(lines))


def doc_sections(lines):
    """The names of the documented parameters (in order) and whether Throws and Returns are there."""
    names = []
    throws = returns = False
    list_indent = None
    for text in lines:
        indent = len(text) - len(text.lstrip())
        stripped = text.strip()
        if list_indent is not None:
            m = re.match(r"-\s+`?([A-Za-z_][A-Za-z0-9_]*)`?\s*:", stripped)
            if stripped.startswith("-") and indent <= list_indent:
                list_indent = None  # The next section of the outer list.
            elif m and stripped.startswith("-"):
                if item_indent[0] is None:
                    item_indent[0] = indent
                if indent == item_indent[0]:
                    names.append(m.group(1))
                continue
            else:
                continue
        m = re.match(r"-\s+Parameter\s+`?([A-Za-z_][A-Za-z0-9_]*)`?\s*:", stripped)
        if m:
            names.append(m.group(1))
        elif re.match(r"-\s+Parameters\s*:", stripped):
            list_indent = indent
            item_indent = [None]
        elif re.match(r"-\s+Throws\s*:", stripped):
            throws = True
        elif re.match(r"-\s+Returns\s*:", stripped):
            returns = True
    return names, throws, returns


def problems_of(declaration, docs):
    lines = doc_block(docs, declaration.line)
    exempt = declaration.key() in EXEMPT
    where = f"`{declaration.key()}`"
    if not lines:
        return [] if exempt or declaration.inherits else [f"{where} has no doc comment (///)"]
    names, throws, returns = doc_sections(lines)
    wanted = [name for _, name in declaration.params if name]
    problems = []
    if not exempt:
        problems += [f"{where}: parameter `{name}` is not documented (- Parameter {name}: or a - Parameters: item)"
                     for name in wanted if name not in names]
    problems += [f"{where}: the doc names parameter `{name}`, which the signature does not have"
                 for name in names if name not in wanted]
    problems += [f"{where}: the doc names parameter `{name}` twice" for name in sorted({n for n in names if names.count(n) > 1})]
    returning = declaration.returns is not None and declaration.returns.replace(" ", "") not in NOT_RETURNING
    if declaration.throws and not throws and not exempt:
        problems.append(f"{where} throws but has no - Throws: section")
    if throws and not declaration.throws:
        problems.append(f"{where} has a - Throws: section but does not throw")
    if returning and not returns and not exempt:
        problems.append(f"{where} returns {declaration.returns} but has no - Returns: section")
    if returns and not returning:
        problems.append(f"{where} has a - Returns: section but returns nothing")
    return problems


def check_text(text, known=None):
    """(declaration, problems) for each covered declaration of one file's text."""
    found, docs = parse_file(text, known)
    return [(d, problems_of(d, docs)) for d in found]


# ---------------------------------------------------------------- the package


def library_targets():
    text = (ROOT / "Package.swift").read_text(encoding="utf-8")
    targets = []
    for block in re.findall(r"\.library\(\s*name:\s*\"[^\"]+\"[^)]*?targets:\s*\[([^\]]*)\]", text):
        for name in re.findall(r'"([^"]+)"', block):
            if name not in targets:
                targets.append(name)
    if not targets:
        sys.exit("api-docs-check: Package.swift declares no .library(name:, targets: [...]) product")
    return targets, text


def target_folder(name, manifest):
    m = re.search(r'\.target\(\s*name:\s*"' + re.escape(name) + r'"', manifest)
    if m:
        # The target's own argument list: up to the next target declaration.
        rest = manifest[m.end():]
        nxt = re.search(r"\.(?:target|executableTarget|testTarget|systemLibrary|binaryTarget|macro|plugin)\(", rest)
        own = rest[:nxt.start()] if nxt else rest
        path = re.search(r'\bpath:\s*"([^"]+)"', own)
        if path:
            return ROOT / path.group(1)
    return ROOT / "Sources" / name


def main(argv):
    if argv[:1] == ["self-test"]:
        return self_test()
    skip, listing = set(), False
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--skip" and args:
            skip.add(args.pop(0))
        elif arg == "--list":
            listing = True
        else:
            sys.exit(f"api-docs-check: unknown argument {arg!r}; usage: api-docs-check.py [--list] [--skip TARGET]... | self-test")
    targets, manifest = library_targets()
    unknown = skip - set(targets)
    if unknown:
        sys.exit(f"api-docs-check: --skip {', '.join(sorted(unknown))}: no library product has such a target "
                 f"(they are {', '.join(targets)})")
    total = 0
    for target in targets:
        if target in skip:
            if listing:
                print(f"{target:24} skipped")
            continue
        folder = target_folder(target, manifest)
        if not folder.is_dir():
            sys.exit(f"api-docs-check: target {target}'s folder {folder.relative_to(ROOT)} does not exist")
        count = exempt = bad = 0
        paths = sorted(folder.rglob("*.swift"))
        texts = {path: path.read_text(encoding="utf-8") for path in paths}
        # The target's types first, so an extension in one file knows whether another file's type is public.
        known = {"types": {}, "requirements": {}}
        for text in texts.values():
            parse_file(text, known)
        for path in paths:
            for declaration, problems in check_text(texts[path], known):
                count += 1
                exempt += declaration.key() in EXEMPT
                bad += bool(problems)
                for problem in problems:
                    total += 1
                    if not listing:
                        print(f"{path.relative_to(ROOT)}:{declaration.line}: {problem}")
        if listing:
            print(f"{target:24} {count:4} declarations, {exempt:3} exempt, {bad:3} with problems")
    if total and not listing:
        print(f"api-docs-check: {total} problem(s); each public func, init and subscript of a library product needs "
              "the sections scripts/api-docs-check.py describes", file=sys.stderr)
    return 1 if total else 0


# ---------------------------------------------------------------- self-test

SELF_TEST = [
    # (name, source, expected problems as (line, fragment)); FOUND below has what each case must find.
    ("a declaration split over many lines, attributes on their own lines", '''
public struct S {
    /// Does it.
    /// - Parameters:
    ///   - first: One.
    ///   - second: Two.
    /// - Throws: When it fails.
    /// - Returns: The answer.
    @discardableResult
    @MainActor
    public
    static
    func
    many(
        first: Int,
        _ second:
            String
    )
        async
        throws
        -> Int
    {
        0
    }
}
''', []),
    ("a closure parameter with its own labels is one parameter", '''
public final class C {
    /// Watches.
    /// - Parameter handler: Called with each change.
    public func watch(_ handler: @escaping @Sendable (_ change: Change, _ old: Int) -> Void) {}
}
''', []),
    ("closure labels documented as parameters are drift", '''
public final class C {
    /// Watches.
    /// - Parameters:
    ///   - handler: Called with each change.
    ///   - change: Not a parameter.
    public func watch(_ handler: (_ change: Change) -> Void) {}
}
''', [(7, "names parameter `change`, which the signature does not have")]),
    ("a default argument with parentheses, commas, strings and generics", '''
public enum E {
    /// Makes one.
    /// - Parameters:
    ///   - a: A.
    ///   - b: B.
    ///   - c: C.
    public static func make(a: [String: (Int, Int)] = ["x,)": (1, 2)], b: Int = max(1, min(2, 3)), c: String = "(,\\(f(1, 2))") {}
}
''', []),
    ("generics with where clauses, a rethrows, an undocumented parameter", '''
extension Array {
    /// Maps.
    /// - Parameter transform: The function.
    /// - Returns: The mapped values.
    public func mapped<T, U: Collection>(_ transform: (Element) throws -> T, other: U) rethrows -> [T]
    where T: Equatable, U.Element == Dictionary<String, Int> {
        []
    }
}
''', [(6, "parameter `other` is not documented"), (6, "throws but has no - Throws:")]),
    ("a doc comment naming a parameter that no longer exists", '''
public struct S {
    /// Sets.
    /// - Parameters:
    ///   - value: The value.
    ///   - key: Gone since the signature changed.
    public func set(_ value: Int) {}
}
''', [(7, "names parameter `key`, which the signature does not have")]),
    ("missing docs, Returns and Throws that are not there, Void results, internal and private members", '''
public struct S {
    public init(x: Int) {}
    /// Has a Returns it does not need.
    /// - Returns: Nothing.
    public func nothing() -> Void {}
    /// Has a Throws it does not need.
    /// - Throws: Never.
    public func quiet() {}
    /// Returns without saying.
    public subscript(index: Int) -> Int { 0 }
    func internalOne(x: Int) -> Int { 0 }
    private func privateOne(x: Int) -> Int { 0 }
    /// An initializer returns nothing to document.
    /// - Parameter y: Y.
    public init?(y: Int) {}
}
struct Internal {
    public func hidden(x: Int) -> Int { 0 }
}
''', [(3, "has no doc comment"), (6, "- Returns: section but returns nothing"), (9, "- Throws: section but does not throw"),
      (11, "parameter `index` is not documented"), (11, "returns Int but has no - Returns:")]),
    ("public extensions and protocols make their members public; local funcs and strings do not count", '''
public extension S {
    func implicit(x: Int) {}
}
public protocol P {
    func requirement() -> Int
}
extension S {
    /// Outer.
    public func outer() {
        func local(y: Int) {}
        let text = "public func fake(z: Int) {"
    }
}
''', [(3, "has no doc comment"), (6, "has no doc comment")]),
    ("an extension of the target's own non-public type is not API, of another module's or a public one is", '''
package enum Tool {}
public struct Open { public struct Inner {} }
extension Tool {
    public func hidden(x: Int) {}
}
extension Open.Inner {
    public func shown(x: Int) {}
}
extension Array {
    public func alsoShown() {}
}
''', [(8, "has no doc comment"), (11, "has no doc comment")]),
    ("an implementation of a documented requirement of the target's protocol shows the requirement's doc", '''
public protocol Storable {
    /// The stored form.
    /// - Returns: The value as stored.
    func stored() -> Int
    func undocumented() -> Int
}
extension String: Storable where Self: Sendable {
    public func stored() -> Int { 0 }
    public func undocumented() -> Int { 0 }
}
''', [(6, "has no doc comment"), (10, "has no doc comment")]),
    ("exemptions, operators, `_`-only parameters and external labels", '''
public struct S: Hashable {
    public static func == (lhs: S, rhs: S) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}
    /// Labels only.
    /// - Parameter key: The key.
    public func read(_: Int, key _: String) {}
}
''', []),
]


# What each case must find: the declarations' keys, whether they throw and what they return.
FOUND = [
    [("many(first:_:)", True, "Int")],
    [("watch(_:)", False, None)],
    [("watch(_:)", False, None)],
    [("make(a:b:c:)", False, None)],
    [("mapped(_:other:)", True, "[ T ]")],
    [("set(_:)", False, None)],
    [("init(x:)", False, None), ("nothing()", False, "Void"), ("quiet()", False, None), ("subscript(index:)", False, "Int"),
     ("init(y:)", False, None)],
    [("implicit(x:)", False, None), ("requirement()", False, "Int"), ("outer()", False, None)],
    [("shown(x:)", False, None), ("alsoShown()", False, None)],
    [("stored()", False, "Int"), ("undocumented()", False, "Int"), ("stored()", False, "Int"), ("undocumented()", False, "Int")],
    [("==(_:_:)", False, "Bool"), ("hash(into:)", False, None), ("read(_:key:)", False, None)],
]


def self_test():
    failures = 0
    for (name, source, expected), found in zip(SELF_TEST, FOUND, strict=True):
        results = check_text(source)
        got = [(d.line, p) for d, ps in results for p in ps]
        missing = [(line, frag) for line, frag in expected if not any(l == line and frag in p for l, p in got)]
        extra = [(l, p) for l, p in got if not any(l == line and frag in p for line, frag in expected)]
        declarations = [(d.key(), d.throws, d.returns) for d, _ in results]
        if missing or extra or declarations != found:
            failures += 1
            print(f"self-test FAILED: {name}")
            for line, frag in missing:
                print(f"  expected at line {line}: {frag}")
            for line, problem in extra:
                print(f"  unexpected at line {line}: {problem}")
            if declarations != found:
                print(f"  found {declarations}, expected {found}")
    print(f"api-docs-check self-test: {len(SELF_TEST) - failures} of {len(SELF_TEST)} cases pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
