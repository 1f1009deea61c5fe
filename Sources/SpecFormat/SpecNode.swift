import Foundation
import PropertyList
import Yams

/// An error in a YAML file (a scenario or an app manifest), with where it is.
package struct SpecError: Error, CustomStringConvertible, Equatable {
    package let file: String
    package let line: Int
    package let column: Int
    package let message: String

    package init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// "file:line:column: message"; a problem with the whole file has no position.
    package var description: String { line > 0 ? "\(file):\(line):\(column): \(message)" : "\(file): \(message)" }
}

/// A YAML node that knows its file and position, with typed accessors whose
/// errors say where and what was expected. Reading is strict: unknown keys
/// in a mapping are errors, so a typo never silently becomes a default.
/// Unchecked Sendable: Yams.Node is an immutable value tree that Yams does not mark Sendable.
package struct SpecNode: @unchecked Sendable {
    package let node: Node
    package let file: String
    /// Where the node sits, for messages: "steps[2].set".
    package let path: String

    package static func parse(_ text: String, file: String) throws -> SpecNode {
        try YAMLExpansion.check(text, file: file)
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw SpecError(file: file, line: 1, column: 1, message: "the file is empty")
            }
            return SpecNode(node: node, file: file, path: "")
        } catch let error as YamlError {
            throw Self.convert(error, file: file)
        }
    }

    /// Parses the file at `path`, whose bytes `read` gives: the caller's way to the disk (or to memory), as
    /// SpecFormat reads no file itself. An error of `read`, or bytes that are not UTF-8, name the file.
    package static func load(_ path: String, reading read: (String) throws -> [UInt8]) throws -> SpecNode {
        let bytes: [UInt8]
        do { bytes = try read(path) } catch {
            throw SpecError(file: path, line: 0, column: 0, message: "cannot read the file: \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw SpecError(file: path, line: 0, column: 0, message: "the file is not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    static func convert(_ error: YamlError, file: String) -> SpecError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _):
            let where_ = context.map { "\($0.text) " } ?? ""
            return SpecError(file: file, line: mark.line, column: mark.column, message: "invalid YAML: \(where_)\(problem)")
        default:
            return SpecError(file: file, line: 1, column: 1, message: "invalid YAML: \(error)")
        }
    }

    /// The YAML type of the node: explicit, or what a plain scalar reads as (int, float, bool, null, str…).
    var resolvedTag: Tag.Name { Tag.Name(rawValue: node.tag.rawValue) }

    package var line: Int { node.mark?.line ?? 0 }
    package var column: Int { node.mark?.column ?? 0 }

    package func error(_ message: String) -> SpecError {
        SpecError(file: file, line: line, column: column, message: path.isEmpty ? message : "\(path): \(message)")
    }

    /// An empty (null) node at this node's place: the body of a step written
    /// bare (`- wait-cloud`), as `- wait-cloud:` has.
    package var emptyBody: SpecNode {
        SpecNode(node: .scalar(.init("", Tag(.null), .plain, node.mark)), file: file, path: path)
    }

    /// The text of a plain scalar (not a mapping, list or alias), nil otherwise.
    package var plainText: String? {
        guard case .scalar(let scalar) = node else { return nil }
        return scalar.string
    }

    func child(_ node: Node, _ component: String) -> SpecNode {
        SpecNode(node: node, file: file, path: path.isEmpty ? component : "\(path).\(component)")
    }

    func element(_ node: Node, _ index: Int) -> SpecNode {
        SpecNode(node: node, file: file, path: "\(path)[\(index)]")
    }

    package var kindName: String {
        switch node {
        case .scalar: "a scalar"
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .alias: "an alias"
        }
    }

    // MARK: Structure

    /// The mapping's entries, in file order. Keys outside `allowed` (if given) are errors.
    package func entries(allowed: [String]? = nil) throws -> [(key: String, value: SpecNode)] {
        guard case .mapping(let mapping) = node else { throw error("expected a mapping, found \(kindName)") }
        var result: [(String, SpecNode)] = []
        var seen = Set<String>()
        for (keyNode, valueNode) in mapping {
            guard let key = keyNode.string else { throw child(keyNode, "?").error("a key must be a string") }
            let value = child(valueNode, key)
            if let allowed, !allowed.contains(key) {
                throw SpecNode(node: keyNode, file: file, path: path).error(
                    "unknown key '\(key)'; expected one of: \(allowed.joined(separator: ", "))")
            }
            guard seen.insert(key).inserted else { throw value.error("'\(key)' appears twice") }
            result.append((key, value))
        }
        return result
    }

    /// The mapping as a dictionary, checking keys against `allowed` and that every key in `required` is present.
    package func fields(allowed: [String], required: [String] = []) throws -> [String: SpecNode] {
        let list = try entries(allowed: allowed)
        let dictionary = Dictionary(list, uniquingKeysWith: { first, _ in first })
        for key in required where dictionary[key] == nil {
            throw error("missing required key '\(key)'")
        }
        return dictionary
    }

    package func list() throws -> [SpecNode] {
        guard case .sequence(let sequence) = node else { throw error("expected a list, found \(kindName)") }
        return sequence.enumerated().map { element($1, $0) }
    }

    /// A list, or a single value taken as a list of one.
    package func listOrSingle() throws -> [SpecNode] {
        if case .sequence = node { return try list() }
        return [self]
    }

    // MARK: Scalars

    package func string() throws -> String {
        guard case .scalar(let scalar) = node else { throw error("expected a string, found \(kindName)") }
        return scalar.string
    }

    /// A whole number as YAML writes one (1_000, 0x1F, 0o17, 1:30). Only a
    /// plain scalar that YAML reads as an integer qualifies: "5" is a string
    /// and 5.0 a real.
    package func int() throws -> Int {
        guard case .scalar(let scalar) = node, scalar.style == .plain, resolvedTag == .int else {
            throw error("expected a whole number, found '\(node.string ?? kindName)'")
        }
        guard let value = Self.integer(scalar.string) else { throw error(Self.outOfRange(scalar.string)) }
        return Int(value)
    }

    /// A whole number within `range`: counts, statuses and sizes, checked when the file is read.
    package func int(in range: ClosedRange<Int>) throws -> Int {
        guard let value = try? int(), range.contains(value) else {
            throw error("expected a whole number from \(range.lowerBound) to \(range.upperBound), found '\(node.string ?? kindName)'")
        }
        return value
    }

    /// A duration in seconds: finite, more than 0 and at most `maximum`, so
    /// that every wait made of it ends and every deadline computed from it exists.
    package func seconds(atMost maximum: Double) throws -> Double {
        let shownMaximum = maximum == maximum.rounded() ? String(Int(maximum)) : "\(maximum)"
        guard case .scalar(let scalar) = node, scalar.style == .plain, [.int, .float].contains(resolvedTag),
            let value = node.float, value.isFinite, value > 0, value <= maximum
        else { throw error("expected seconds more than 0 and at most \(shownMaximum), found '\(node.string ?? kindName)'") }
        return value
    }

    package func bool() throws -> Bool {
        guard case .scalar = node, let value = node.bool else { throw error("expected true or false, found '\(node.string ?? kindName)'") }
        return value
    }

    package func strings() throws -> [String] { try listOrSingle().map { try $0.string() } }

    /// A property-list value. Plain YAML scalars take their YAML type (5 is
    /// an integer, 5.0 a real, true a bool, "5" a string); `!date` and
    /// `!data` (hex) tag dates and data; mappings and lists nest. Refused
    /// where they are written: integers outside Int64, reals that are not
    /// finite or do not fit a double, null, and values nesting more than
    /// `maximumDepth` deep (one less for an item appended into an array).
    package func plistValue(maximumDepth: Int = PlistLimits.maximumDepth) throws -> PlistValue {
        try plistValue(levelsLeft: maximumDepth, whole: self, maximumDepth: maximumDepth)
    }

    private func plistValue(levelsLeft: Int, whole: SpecNode, maximumDepth: Int) throws -> PlistValue {
        switch node {
        case .scalar(let scalar):
            return try scalarValue(scalar)
        case .sequence, .mapping:
            guard levelsLeft > 0 else {
                // Where it got too deep, named after the whole value.
                throw SpecError(
                    file: file, line: line, column: column,
                    message:
                        "\(whole.path.isEmpty ? "the value" : whole.path) nests arrays and dictionaries more than \(maximumDepth) deep, which no reader accepts; flatten it"
                )
            }
            if case .sequence = node {
                return .array(try list().map { try $0.plistValue(levelsLeft: levelsLeft - 1, whole: whole, maximumDepth: maximumDepth) })
            }
            var dictionary: [String: PlistValue] = [:]
            for (key, value) in try entries() {
                dictionary[key] = try value.plistValue(levelsLeft: levelsLeft - 1, whole: whole, maximumDepth: maximumDepth)
            }
            return .dictionary(dictionary)
        case .alias:
            throw error("aliases are not supported")
        }
    }

    /// A scalar's value: a `!date` or `!data` tag, else what its plain text
    /// resolves to (bool, integer, real), else a string (any quoted scalar).
    private func scalarValue(_ scalar: Node.Scalar) throws -> PlistValue {
        switch scalar.tag.description {
        case "!date":
            guard let date = Self.parseDate(scalar.string) else {
                throw error("'\(scalar.string)' is not a date (use 2026-11-22T10:00:00Z or 2026-11-22T10:00:00.250Z)")
            }
            // The protocol carries milliseconds: a finer date could not reach a process unchanged.
            if let point = scalar.string.firstIndex(where: { $0 == "." || $0 == "," }),
                scalar.string[scalar.string.index(after: point)...].prefix(while: \.isNumber).count > 3
            {
                throw error("'\(scalar.string)' is finer than a millisecond, which a process cannot be sent; write at most 3 fractional digits")
            }
            return .date(date)
        case "!data":
            guard let data = Data(hexDigits: scalar.string) else { throw error("!data needs hex digits, found '\(scalar.string)'") }
            return .data(data)
        default: break
        }
        guard scalar.style == .plain else { return .string(scalar.string) }
        switch resolvedTag {
        case .bool:
            if let value = node.bool { return .bool(value) }
        case .int:
            guard let value = Self.integer(scalar.string) else { throw error(Self.outOfRange(scalar.string)) }
            return .integer(value)
        case .float:
            let mantissa = scalar.string.prefix { $0 != "e" && $0 != "E" }
            let value = node.float
            if let problem = PlistJSON.realProblem(
                value, literal: Substring(scalar.string), hasNonZeroDigit: mantissa.contains { ("1"..."9").contains($0) })
            {
                throw error(problem)
            }
            return .real(value ?? 0)
        case .null:
            throw error("null is not a property-list value (to remove a key use 'remove')")
        default:
            break
        }
        return .string(scalar.string)
    }

    package func plistDictionary() throws -> [String: PlistValue] {
        guard case .dictionary(let dictionary) = try plistValue() else { throw error("expected a mapping of keys to values") }
        return dictionary
    }

    /// The same reader as the protocol's `$date`, so a date in a file is the
    /// date a process stores, to the millisecond.
    static func parseDate(_ text: String) -> Date? { PlistJSON.date(iso8601: text) }

    /// A YAML integer's value: decimal, 0x hex, 0o or leading-0 octal, 0b
    /// binary or base-60 (1:30), with _ as a separator, as YAML reads them;
    /// nil when it does not fit 64 bits (Yams' own reading multiplies base-60
    /// digits without an overflow check, and its nil cannot tell an
    /// overflow from a number that is not an integer).
    static func integer(_ text: String) -> Int64? {
        var digits = Substring(text.replacingOccurrences(of: "_", with: ""))
        let negative = digits.hasPrefix("-")
        if negative || digits.hasPrefix("+") { digits = digits.dropFirst() }
        var magnitude: UInt64
        if digits.contains(":") {
            magnitude = 0
            for part in digits.split(separator: ":", omittingEmptySubsequences: false) {
                guard let value = UInt64(part) else { return nil }
                let (shifted, overflow) = magnitude.multipliedReportingOverflow(by: 60)
                let (sum, overflowAgain) = shifted.addingReportingOverflow(value)
                guard !overflow, !overflowAgain else { return nil }
                magnitude = sum
            }
        } else {
            let radix: Int
            let body: Substring
            if digits.hasPrefix("0x") {
                (radix, body) = (16, digits.dropFirst(2))
            } else if digits.hasPrefix("0b") {
                (radix, body) = (2, digits.dropFirst(2))
            } else if digits.hasPrefix("0o") {
                (radix, body) = (8, digits.dropFirst(2))
            } else if digits.hasPrefix("0") && digits.count > 1 {
                (radix, body) = (8, digits.dropFirst())
            } else {
                (radix, body) = (10, digits)
            }
            guard let value = UInt64(body, radix: radix) else { return nil }
            magnitude = value
        }
        if negative {
            return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    static func outOfRange(_ text: String) -> String {
        "\(text) is outside the 64-bit integer range (\(Int64.min) to \(Int64.max)); a property-list integer cannot hold it "
            + "(write a real such as 1.0e19, or quote it for a string)"
    }
}
