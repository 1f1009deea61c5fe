import Foundation
import PropertyList
import Yams

/// An error in a YAML file (a scenario or an app manifest), with where it is.
public struct SpecError: Error, CustomStringConvertible, Equatable {
    public let file: String
    public let line: Int
    public let column: Int
    public let message: String

    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// "file:line:column: message"; a problem with the whole file has no position.
    public var description: String { line > 0 ? "\(file):\(line):\(column): \(message)" : "\(file): \(message)" }
}

/// A YAML node that knows its file and position, with typed accessors whose
/// errors say where and what was expected. Reading is strict: unknown keys
/// in a mapping are errors, so a typo never silently becomes a default.
public struct SpecNode: @unchecked Sendable {  // Yams.Node is an immutable value tree
    public let node: Node
    public let file: String
    /// Where the node sits, for messages: "steps[2].set".
    public let path: String

    public static func parse(_ text: String, file: String) throws -> SpecNode {
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw SpecError(file: file, line: 1, column: 1, message: "the file is empty")
            }
            return SpecNode(node: node, file: file, path: "")
        } catch let error as YamlError {
            throw Self.convert(error, file: file)
        }
    }

    public static func load(_ path: String) throws -> SpecNode {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw SpecError(file: path, line: 0, column: 0, message: "cannot read the file: \(error.localizedDescription)")
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

    public var line: Int { node.mark?.line ?? 0 }
    public var column: Int { node.mark?.column ?? 0 }

    public func error(_ message: String) -> SpecError {
        SpecError(file: file, line: line, column: column, message: path.isEmpty ? message : "\(path): \(message)")
    }

    func child(_ node: Node, _ component: String) -> SpecNode {
        SpecNode(node: node, file: file, path: path.isEmpty ? component : "\(path).\(component)")
    }

    func element(_ node: Node, _ index: Int) -> SpecNode {
        SpecNode(node: node, file: file, path: "\(path)[\(index)]")
    }

    var kindName: String {
        switch node {
        case .scalar: "a scalar"
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .alias: "an alias"
        }
    }

    // MARK: Structure

    /// The mapping's entries, in file order. Keys outside `allowed` (if given) are errors.
    public func entries(allowed: [String]? = nil) throws -> [(key: String, value: SpecNode)] {
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
    public func fields(allowed: [String], required: [String] = []) throws -> [String: SpecNode] {
        let list = try entries(allowed: allowed)
        let dictionary = Dictionary(list, uniquingKeysWith: { first, _ in first })
        for key in required where dictionary[key] == nil {
            throw error("missing required key '\(key)'")
        }
        return dictionary
    }

    public func list() throws -> [SpecNode] {
        guard case .sequence(let sequence) = node else { throw error("expected a list, found \(kindName)") }
        return sequence.enumerated().map { element($1, $0) }
    }

    /// A list, or a single value taken as a list of one.
    public func listOrSingle() throws -> [SpecNode] {
        if case .sequence = node { return try list() }
        return [self]
    }

    // MARK: Scalars

    public func string() throws -> String {
        guard case .scalar(let scalar) = node else { throw error("expected a string, found \(kindName)") }
        return scalar.string
    }

    public func int() throws -> Int {
        guard case .scalar = node, let value = node.int else { throw error("expected a whole number, found '\(node.string ?? kindName)'") }
        return value
    }

    public func double() throws -> Double {
        guard case .scalar = node, let value = node.float ?? node.int.map(Double.init) else {
            throw error("expected a number, found '\(node.string ?? kindName)'")
        }
        return value
    }

    public func bool() throws -> Bool {
        guard case .scalar = node, let value = node.bool else { throw error("expected true or false, found '\(node.string ?? kindName)'") }
        return value
    }

    public func strings() throws -> [String] { try listOrSingle().map { try $0.string() } }

    /// A property-list value. Plain YAML scalars take their YAML type (5 is
    /// an integer, 5.0 a real, true a bool, "5" a string); `!date` and
    /// `!data` (hex) tag dates and data; mappings and lists nest.
    public func plistValue() throws -> PlistValue {
        switch node {
        case .scalar(let scalar):
            switch scalar.tag.description {
            case "!date":
                guard let date = Self.parseDate(scalar.string) else { throw error("'\(scalar.string)' is not a date (use 2026-11-22T10:00:00Z)") }
                return .date(date)
            case "!data":
                guard let data = Data(hexDigits: scalar.string) else { throw error("!data needs hex digits, found '\(scalar.string)'") }
                return .data(data)
            default: break
            }
            if scalar.style == .plain {
                if let value = node.bool { return .bool(value) }
                if let value = node.int { return .integer(Int64(value)) }
                if let value = node.float { return .real(value) }
                if node.null != nil { throw error("null is not a property-list value (to remove a key use 'remove')") }
            }
            return .string(scalar.string)
        case .sequence:
            return .array(try list().map { try $0.plistValue() })
        case .mapping:
            var dictionary: [String: PlistValue] = [:]
            for (key, value) in try entries() { dictionary[key] = try value.plistValue() }
            return .dictionary(dictionary)
        case .alias:
            throw error("aliases are not supported")
        }
    }

    public func plistDictionary() throws -> [String: PlistValue] {
        guard case .dictionary(let dictionary) = try plistValue() else { throw error("expected a mapping of keys to values") }
        return dictionary
    }

    static func parseDate(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle.iso8601.year().month().day())
    }
}
