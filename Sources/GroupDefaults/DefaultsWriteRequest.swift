import Foundation
import PropertyList

/// What `groupsim defaults write DOMAIN ...` (or an app console's `set`) was
/// asked to do, parsed from the words after the domain the way macOS
/// `defaults` reads them.
package enum DefaultsWriteRequest: Equatable, Sendable {
    case set(key: String, value: PlistValue)
    case arrayAdd(key: String, values: [PlistValue])
    case dictAdd(key: String, entries: [String: PlistValue])
    case intAdd(key: String, delta: Int64)
    case replaceDomain([String: PlistValue])

    public struct ParseError: Error, CustomStringConvertible {
        public let description: String
    }

    public static let scalarFlags = ["-string", "-data", "-int", "-integer", "-float", "-bool", "-boolean", "-date"]

    public static func parse(_ words: [String]) throws -> DefaultsWriteRequest {
        guard let key = words.first else { throw ParseError(description: "missing key (usage: write DOMAIN KEY VALUE, or write DOMAIN 'PLIST')") }
        let rest = Array(words.dropFirst())
        if rest.isEmpty {
            // `write DOMAIN '{ ... }'` replaces the whole domain.
            guard let first = key.first, OldStylePropertyList.openers.contains(first) else {
                throw ParseError(description: "missing value for key \"\(key)\" (usage: write DOMAIN KEY [-TYPE] VALUE)")
            }
            guard case .dictionary(let contents) = try parsePlist(key, what: "domain") else {
                throw ParseError(description: "a whole-domain write needs a dictionary, like '{ key = value; }'")
            }
            return .replaceDomain(contents)
        }
        let flag = rest[0]
        switch flag {
        case "-array", "-array-add":
            let values = try typedValues(Array(rest.dropFirst()), key: key)
            return flag == "-array" ? .set(key: key, value: .array(values)) : .arrayAdd(key: key, values: values)
        case "-dict", "-dict-add":
            let entries = try typedEntries(Array(rest.dropFirst()), key: key)
            return flag == "-dict" ? .set(key: key, value: .dictionary(entries)) : .dictAdd(key: key, entries: entries)
        case "-int-add":
            guard rest.count == 2, let delta = Int64(rest[1]) else {
                throw ParseError(description: "-int-add expects one integer, e.g. write DOMAIN \(key) -int-add 1")
            }
            return .intAdd(key: key, delta: delta)
        default:
            let values = try typedValues(rest, key: key)
            guard values.count == 1 else {
                throw ParseError(description: "key \"\(key)\" takes one value, got \(values.count); quote a value with spaces, or use -array")
            }
            return .set(key: key, value: values[0])
        }
    }

    /// A list of values, each optionally preceded by a type flag.
    private static func typedValues(_ words: [String], key: String) throws -> [PlistValue] {
        var values: [PlistValue] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            if scalarFlags.contains(word) {
                guard index + 1 < words.count else { throw ParseError(description: "\(word) needs a value (key \"\(key)\")") }
                values.append(try typedValue(flag: word, text: words[index + 1], key: key))
                index += 2
            } else {
                values.append(try untypedValue(word, key: key))
                index += 1
            }
        }
        return values
    }

    private static func typedEntries(_ words: [String], key: String) throws -> [String: PlistValue] {
        var entries: [String: PlistValue] = [:]
        var index = 0
        while index < words.count {
            let entryKey = words[index]
            guard index + 1 < words.count else { throw ParseError(description: "-dict: key \"\(entryKey)\" has no value (key \"\(key)\")") }
            if scalarFlags.contains(words[index + 1]) {
                guard index + 2 < words.count else { throw ParseError(description: "\(words[index + 1]) needs a value (key \"\(key).\(entryKey)\")") }
                entries[entryKey] = try typedValue(flag: words[index + 1], text: words[index + 2], key: "\(key).\(entryKey)")
                index += 3
            } else {
                entries[entryKey] = try untypedValue(words[index + 1], key: "\(key).\(entryKey)")
                index += 2
            }
        }
        return entries
    }

    private static func untypedValue(_ text: String, key: String) throws -> PlistValue {
        do { return try OldStylePropertyList.parseValueArgument(text) } catch {
            throw ParseError(description: "the value for key \"\(key)\" is not a valid property list: \(error)")
        }
    }

    private static func parsePlist(_ text: String, what: String) throws -> PlistValue {
        do { return try OldStylePropertyList.parse(text) } catch {
            throw ParseError(description: "the value for \(what) is not a valid property list: \(error)")
        }
    }

    public static func typedValue(flag: String, text: String, key: String) throws -> PlistValue {
        func bad(_ expected: String) -> ParseError {
            ParseError(description: "\(flag) expects \(expected), got \"\(text)\" (key \"\(key)\")")
        }
        switch flag {
        case "-string": return .string(text)
        case "-int", "-integer":
            guard let value = Int64(text.trimmingCharacters(in: .whitespaces)) else { throw bad("an integer") }
            return .integer(value)
        case "-float":
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)) else { throw bad("a number") }
            return .real(value)
        case "-bool", "-boolean":
            switch text.lowercased() {
            case "yes", "true", "1": return .bool(true)
            case "no", "false", "0": return .bool(false)
            default: throw bad("true, false, yes, no, 1 or 0")
            }
        case "-data":
            guard let data = Data(hexDigits: text) else { throw bad("an even number of hex digits") }
            return .data(data)
        case "-date":
            guard let date = parseDate(text) else { throw bad("a date like 2026-11-22T10:00:00Z or \"2026-11-22 10:00:00 +0000\"") }
            return .date(date)
        default:
            throw ParseError(description: "unknown type flag \(flag)")
        }
    }

    static func parseDate(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        for format in ["yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            formatter.timeZone = TimeZone(identifier: "UTC")
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

// MARK: Applying

extension DefaultsWriteRequest {
    /// Applies the request to a domain's contents: the one implementation of
    /// set, array-add, dict-add, int-add and whole-domain writes, used by the
    /// `defaults` tool, the simulated apps and the library's transactions.
    /// A value of the wrong type is an error, never silently replaced.
    public func apply(to contents: inout [String: PlistValue]) throws {
        var result = contents
        try applyUnchecked(to: &result)
        // What any reader could not read back is refused before it is written.
        switch self {
        case .replaceDomain(let replacement):
            try PlistValue.dictionary(replacement).checkNesting(what: "the new domain", limit: PlistLimits.maximumDepth)
        case .set(let key, _), .arrayAdd(let key, _), .dictAdd(let key, _), .intAdd(let key, _):
            try result[key]?.checkNesting(what: "the value for key \"\(key)\"", limit: PlistLimits.maximumValueDepth)
        }
        contents = result
    }

    private func applyUnchecked(to contents: inout [String: PlistValue]) throws {
        switch self {
        case .set(let key, let value):
            contents[key] = value
        case .replaceDomain(let replacement):
            contents = replacement
        case .intAdd(let key, let delta):
            contents[key] = .integer(try Self.incremented(contents[key], by: delta, key: key))
        case .arrayAdd(let key, let values):
            switch contents[key] {
            case nil: contents[key] = .array(values)
            case .array(let existing): contents[key] = .array(existing + values)
            case let other?: throw DefaultsError.wrongType(key: key, found: Self.describe(other), needed: "an array to append to")
            }
        case .dictAdd(let key, let entries):
            switch contents[key] {
            case nil: contents[key] = .dictionary(entries)
            case .dictionary(let existing): contents[key] = .dictionary(existing.merging(entries) { _, new in new })
            case let other?: throw DefaultsError.wrongType(key: key, found: Self.describe(other), needed: "a dictionary to merge into")
            }
        }
    }

    /// "an integer (3)", shortened for long values.
    static func describe(_ value: PlistValue) -> String {
        let text = PlistJSON.encode(value)
        return "\(value.typeNameWithArticle) (\(text.count > 60 ? text.prefix(57) + "…" : text))"
    }

    /// `value + delta` for an atomic counter: absent counts as 0; integers,
    /// booleans, whole finite reals and integer strings count; anything else,
    /// or an overflow, is an error.
    public static func incremented(_ value: PlistValue?, by delta: Int64, key: String) throws -> Int64 {
        let current: Int64
        switch value {
        case nil: current = 0
        case .integer(let i)?: current = i
        case .bool(let b)?: current = b ? 1 : 0
        case .real(let d)? where d.isFinite && d.rounded(.towardZero) == d && Int64(exactly: d) != nil: current = Int64(d)
        case .string(let s)? where Int64(s.trimmingCharacters(in: .whitespaces)) != nil: current = Int64(s.trimmingCharacters(in: .whitespaces))!
        case let other?: throw DefaultsError.wrongType(key: key, found: describe(other), needed: "a whole number to add to")
        }
        let (sum, overflow) = current.addingReportingOverflow(delta)
        if overflow { throw DefaultsError.overflow(key: key, current: current, delta: delta) }
        return sum
    }
}
