import Foundation

/// The old-style (OpenStep) text format that launch arguments and the
/// `defaults` tool accept: `{ key = value; }`, `(a, b)`, `"quoted"`, `<0a1b>`.
/// Every scalar in this format is a string, as in Apple's parser.
package enum OldStylePropertyList {
    /// Characters that `-key value` treats as the start of a property list.
    package static let openers: Set<Character> = ["{", "[", "(", "<", "\""]

    /// A value given as text on a command line (a launch argument, a
    /// `defaults write` value, an intent parameter): a property list if it
    /// starts with one of `openers`, else the string itself.
    package static func parseValueArgument(_ text: String) throws -> PlistValue {
        guard let first = text.first, openers.contains(first) else { return .string(text) }
        return try parse(text)
    }

    /// Parses text that is either old-style or XML (`<?xml`, `<plist`).
    package static func parse(_ text: String) throws -> PlistValue {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<plist") || trimmed.hasPrefix("<!DOCTYPE") {
            return try XMLPropertyList.decode(Data(trimmed.utf8))
        }
        var parser = Parser(text: Array(text.unicodeScalars))
        parser.skipWhitespaceAndComments()
        let value = try parser.value(depth: 0)
        parser.skipWhitespaceAndComments()
        guard parser.atEnd else { throw parser.error("unexpected text after the value") }
        return value
    }

    private struct Parser {
        let text: [Unicode.Scalar]
        var position = 0

        var atEnd: Bool { position >= text.count }
        var current: Unicode.Scalar? { atEnd ? nil : text[position] }

        func error(_ reason: String) -> PropertyListError {
            var line = 1
            var column = 1
            for scalar in text[0..<min(position, text.count)] {
                if scalar == "\n" {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            }
            return .syntax(line: line, column: column, reason: reason)
        }

        static func isUnquoted(_ s: Unicode.Scalar) -> Bool {
            (s.properties.isAlphabetic && s.isASCII) || ("0"..."9").contains(s) || "_$+/:.-".unicodeScalars.contains(s)
        }

        mutating func skipWhitespaceAndComments() {
            while let c = current {
                if c.properties.isWhitespace {
                    position += 1
                    continue
                }
                if c == "/", position + 1 < text.count {
                    if text[position + 1] == "/" {
                        while let d = current, d != "\n" {
                            position += 1
                            _ = d
                        }
                        continue
                    }
                    if text[position + 1] == "*" {
                        position += 2
                        while position + 1 < text.count, !(text[position] == "*" && text[position + 1] == "/") { position += 1 }
                        position = min(position + 2, text.count)
                        continue
                    }
                }
                return
            }
        }

        mutating func expect(_ scalar: Unicode.Scalar, _ what: String) throws {
            skipWhitespaceAndComments()
            guard current == scalar else { throw error("expected \(what)") }
            position += 1
        }

        /// One value; `depth` is how many arrays and dictionaries enclose it.
        /// The recursion stops at `PlistLimits.maximumDepth`, before the stack could run out.
        mutating func value(depth: Int) throws -> PlistValue {
            skipWhitespaceAndComments()
            guard let c = current else { throw error("expected a value, found the end of the text") }
            if c == "{" || c == "(" || c == "[", depth >= PlistLimits.maximumDepth {
                throw error("the value nests arrays and dictionaries deeper than \(PlistLimits.maximumDepth)")
            }
            switch c {
            case "{": return try dictionary(depth: depth)
            case "(", "[": return try array(closing: c == "(" ? ")" : "]", depth: depth)
            case "<": return try data()
            case "\"", "'": return .string(try quoted(c))
            default:
                guard Self.isUnquoted(c) else { throw error("unexpected character '\(c)'") }
                return .string(unquoted())
            }
        }

        mutating func dictionary(depth: Int) throws -> PlistValue {
            position += 1
            var result: [String: PlistValue] = [:]
            while true {
                skipWhitespaceAndComments()
                guard let c = current else { throw error("unterminated dictionary: expected '}'") }
                if c == "}" {
                    position += 1
                    return .dictionary(result)
                }
                guard case .string(let key) = try value(depth: depth + 1) else { throw error("a dictionary key must be a string") }
                try expect("=", "'=' after key \"\(key)\"")
                result[key] = try value(depth: depth + 1)
                skipWhitespaceAndComments()
                if current == ";" { position += 1 } else if current != "}" { throw error("expected ';' after the value of \"\(key)\"") }
            }
        }

        mutating func array(closing: Unicode.Scalar, depth: Int) throws -> PlistValue {
            position += 1
            var result: [PlistValue] = []
            while true {
                skipWhitespaceAndComments()
                guard let c = current else { throw error("unterminated array: expected '\(closing)'") }
                if c == closing {
                    position += 1
                    return .array(result)
                }
                result.append(try value(depth: depth + 1))
                skipWhitespaceAndComments()
                if current == "," { position += 1 } else if current != closing { throw error("expected ',' or '\(closing)' in array") }
            }
        }

        mutating func data() throws -> PlistValue {
            position += 1
            var bytes = [UInt8]()
            var pending: UInt8? = nil
            while let c = current {
                position += 1
                if c == ">" {
                    guard pending == nil else { throw error("odd number of hex digits in data") }
                    return .data(Data(bytes))
                }
                if c.properties.isWhitespace { continue }
                guard let nibble = UInt8(String(c), radix: 16) else { throw error("'\(c)' is not a hex digit in data") }
                if let high = pending {
                    bytes.append(high << 4 | nibble)
                    pending = nil
                } else {
                    pending = nibble
                }
            }
            throw error("unterminated data: expected '>'")
        }

        mutating func quoted(_ quote: Unicode.Scalar) throws -> String {
            position += 1
            var out = String.UnicodeScalarView()
            while let c = current {
                position += 1
                if c == quote { return String(out) }
                guard c == "\\" else {
                    out.append(c)
                    continue
                }
                guard let e = current else { break }
                position += 1
                switch e {
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "r": out.append("\r")
                case "a": out.append("\u{07}")
                case "b": out.append("\u{08}")
                case "f": out.append("\u{0C}")
                case "v": out.append("\u{0B}")
                case "U", "u":
                    var hex = ""
                    while hex.count < 4, let h = current, h.properties.isASCIIHexDigit {
                        hex.unicodeScalars.append(h)
                        position += 1
                    }
                    guard let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else { throw error("invalid \\U escape") }
                    out.append(scalar)
                case "0"..."7":
                    var octal = String(e)
                    while octal.count < 3, let o = current, ("0"..."7").contains(o) {
                        octal.unicodeScalars.append(o)
                        position += 1
                    }
                    guard let byte = UInt8(octal, radix: 8) else { throw error("octal escape \\\(octal) is larger than \\377") }
                    out.append(Unicode.Scalar(byte))
                default: out.append(e)
                }
            }
            throw error("unterminated quoted string")
        }

        mutating func unquoted() -> String {
            var out = String.UnicodeScalarView()
            while let c = current, Self.isUnquoted(c) {
                out.append(c)
                position += 1
            }
            return String(out)
        }
    }

    // MARK: Printing

    /// The text `defaults read` prints: old-style, indented four spaces a level.
    package static func describe(_ value: PlistValue, indent: Int = 0) -> String {
        let pad = String(repeating: "    ", count: indent)
        switch value {
        case .string(let s): return quote(s)
        case .integer(let i): return "\(i)"
        case .real(let d): return XMLPropertyList.formatReal(d)
        case .bool(let b): return b ? "1" : "0"
        case .date(let d): return "\"\(describeDate(d))\""
        case .data(let d): return "<\(d.map { String(format: "%02x", $0) }.joined())>"
        case .array(let elements):
            if elements.isEmpty { return "(\n\(pad))" }
            let inner = elements.map { "\(pad)    \(describe($0, indent: indent + 1))" }.joined(separator: ",\n")
            return "(\n\(inner)\n\(pad))"
        case .dictionary(let dictionary):
            if dictionary.isEmpty { return "{\n\(pad)}" }
            let inner = dictionary.keys.sorted().map {
                "\(pad)    \(quote($0)) = \(describe(dictionary[$0]!, indent: indent + 1));"
            }.joined(separator: "\n")
            return "{\n\(inner)\n\(pad)}"
        }
    }

    package static func describeDate(_ date: Date) -> String {
        // "2026-11-22 03:00:00 +0000", as macOS prints dates.
        let iso = date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon))
        return iso.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: "") + " +0000"
    }

    /// Quotes a string unless it is made only of characters safe unquoted
    /// (and holds no "//" or "/*", which would read back as a comment).
    package static func quote(_ s: String) -> String {
        if !s.isEmpty, s.unicodeScalars.allSatisfy(Parser.isUnquoted), !s.contains("//"), !s.contains("/*") { return s }
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}
