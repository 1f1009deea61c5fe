/// A JSON value exactly as written: an integer literal stays an integer and
/// a literal with a point or an exponent stays a real, which Foundation's
/// `JSONSerialization` does not promise (on Linux it turns -10^18 into a real
/// and wraps 2^64 - 1 to -1).
package enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case array([JSONValue])
    /// Keys are unique: a reader refuses an object that repeats one.
    case object([String: JSONValue])

    package var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    package var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
}

extension PlistJSON {
    /// Reads one JSON document (RFC 8259, strictly). Refused: invalid UTF-8,
    /// a control character or a lone surrogate (`\ud800`) in a string, an
    /// integer literal outside Int64, a real literal that overflows a Double
    /// or rounds a non-zero value to zero, a repeated key in an object,
    /// arrays and objects nested more than `maximumDepth` deep (the top level
    /// counting as 1), more than `PlistLimits.maximumValueCount` values, and
    /// anything but white space after the value. `-0` is the integer 0; `-0.0`
    /// is the real -0.0.
    package static func parse(_ bytes: some Collection<UInt8>, maximumDepth: Int = PlistLimits.maximumDepth) throws(PlistError) -> JSONValue {
        var reader = JSONReader(bytes: Array(bytes), depthLimit: maximumDepth, depthOffset: 0)
        return try reader.document()
    }

    package static func parse(_ text: String, maximumDepth: Int = PlistLimits.maximumDepth) throws(PlistError) -> JSONValue {
        try parse(text.utf8, maximumDepth: maximumDepth)
    }

    /// Reads one line of a line protocol: a JSON object whose field values
    /// nest at most `maximumFieldDepth` deep (a request's `value` may nest as
    /// deep as a property list may; a response that wraps values in more
    /// objects passes a larger limit).
    package static func parseObject(_ text: String, maximumFieldDepth: Int = PlistLimits.maximumDepth) throws(PlistError) -> [String: JSONValue] {
        var reader = JSONReader(bytes: Array(text.utf8), depthLimit: maximumFieldDepth + 1, depthOffset: 1)
        let value = try reader.document()
        guard case .object(let object) = value else {
            throw PlistError.notAJSONObject(text: String(text.prefix(200)))
        }
        return object
    }
}

/// The strict reader behind `PlistJSON.parse`. It reads bytes, so invalid
/// UTF-8 is seen (a Swift `String` would have repaired it), and recurses at
/// most `depthLimit` deep.
struct JSONReader {
    let bytes: [UInt8]
    let depthLimit: Int
    /// Levels above the values the limit is about (1 for a protocol line's fields).
    let depthOffset: Int
    var index = 0
    var depth = 0
    var valueCount = 0
    /// Where the reader is, for messages: object keys and array indices.
    var path: [PathComponent] = []
    /// The first problem that leaves the text's structure readable; reading
    /// goes on so that the top-level object can still be returned with it.
    var firstProblem: (location: String, reason: String, offset: Int)?

    enum PathComponent {
        case key(String)
        case index(Int)
    }

    init(bytes: [UInt8], depthLimit: Int, depthOffset: Int) {
        self.bytes = bytes
        self.depthLimit = depthLimit
        self.depthOffset = depthOffset
    }

    mutating func document() throws(PlistError) -> JSONValue {
        skipWhiteSpace()
        guard index < bytes.count else { throw syntax("the text is empty; expected a JSON value") }
        let value = try self.value()
        skipWhiteSpace()
        if index < bytes.count { problem("unexpected text after the JSON value") }
        if let firstProblem {
            throw PlistError.jsonValueRefused(
                location: firstProblem.location, reason: firstProblem.reason, offset: firstProblem.offset, partialObject: value.objectValue)
        }
        return value
    }

    // MARK: Errors

    /// "value.list[2]" for messages; long paths keep their two ends.
    var pathText: String {
        func text(_ components: ArraySlice<PathComponent>, first: Bool) -> String {
            var out = ""
            for (offset, component) in components.enumerated() {
                switch component {
                case .key(let key): out += (first && offset == 0) ? key : ".\(key)"
                case .index(let index): out += "[\(index)]"
                }
            }
            return out
        }
        if path.count <= 8 { return text(path[...], first: true) }
        return text(path.prefix(4), first: true) + "…" + text(path.suffix(3), first: false)
    }

    func syntax(_ reason: String, at offset: Int? = nil) -> PlistError {
        .jsonSyntax(reason: reason, offset: offset ?? index)
    }

    /// Records a problem with a value whose extent is still known, so reading goes on.
    mutating func problem(_ reason: String, at offset: Int? = nil) {
        let at = offset ?? index
        // The earliest in the text: an object's repeated keys are found once its members are read.
        if let firstProblem, firstProblem.offset <= at { return }
        firstProblem = (pathText, reason, at)
    }

    // MARK: Grammar

    mutating func skipWhiteSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func value() throws(PlistError) -> JSONValue {
        valueCount += 1
        if valueCount > PlistLimits.maximumValueCount {
            throw PlistError.tooManyJSONValues(limit: PlistLimits.maximumValueCount, offset: index)
        }
        guard index < bytes.count else { throw syntax("the text ends where a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try container(isObject: true)
        case UInt8(ascii: "["): return try container(isObject: false)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw syntax("expected a value (a string, number, object, array, true, false or null)")
        }
    }

    mutating func literal(_ word: String) throws(PlistError) {
        let expected = word.utf8
        guard bytes.count - index >= expected.count, bytes[index..<(index + expected.count)].elementsEqual(expected) else {
            throw syntax("expected a value (a string, number, object, array, true, false or null)")
        }
        index += expected.count
    }

    mutating func container(isObject: Bool) throws(PlistError) -> JSONValue {
        let start = index
        depth += 1
        if depth > depthLimit {
            // Only the field is named: the full path of a deep value is as long as it is deep.
            let location: String = if case .key(let field)? = path.first { field } else { "the JSON value" }
            throw PlistError.jsonTooDeep(location: location, limit: depthLimit - depthOffset, offset: start)
        }
        defer { depth -= 1 }
        index += 1
        skipWhiteSpace()
        let close = UInt8(ascii: isObject ? "}" : "]")
        var elements: [JSONValue] = []
        // An object's members, in order, put in a dictionary of their number
        // at the end: growing one as they came hashed each key again per growth.
        var members: [(key: String, value: JSONValue, offset: Int)] = []
        if index < bytes.count, bytes[index] == close {
            index += 1
            return isObject ? .object([:]) : .array(elements)
        }
        while true {
            skipWhiteSpace()
            if isObject {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw syntax("expected a key (a string in double quotes)") }
                let keyStart = index
                let key = try string()
                skipWhiteSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw syntax("expected ':' after the key") }
                index += 1
                skipWhiteSpace()
                path.append(.key(key))
                members.append((key, try value(), keyStart))
                path.removeLast()
            } else {
                path.append(.index(elements.count))
                elements.append(try value())
                path.removeLast()
            }
            skipWhiteSpace()
            guard index < bytes.count else { throw syntax("the text ends inside \(isObject ? "an object" : "an array") opened at byte \(start)") }
            if bytes[index] == close {
                index += 1
                break
            }
            guard bytes[index] == UInt8(ascii: ",") else { throw syntax("expected ',' or '\(Character(Unicode.Scalar(close)))'") }
            index += 1
        }
        guard isObject else { return .array(elements) }
        var object: [String: JSONValue] = Dictionary(minimumCapacity: members.count)
        for member in members {
            // A repeated key keeps its first value.
            if let first = object.updateValue(member.value, forKey: member.key) {
                object[member.key] = first
                problem("duplicate key \(PlistJSON.quote(member.key)) (each key may appear once)", at: member.offset)
            }
        }
        return .object(object)
    }

    // MARK: Numbers

    mutating func number() throws(PlistError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func isDigit(_ at: Int) -> Bool { at < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) }
        guard isDigit(index) else { throw syntax("expected a digit after '-'") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if isDigit(index) { throw syntax("a number cannot start with 0 (write 7, not 07)", at: start) }
        } else {
            while isDigit(index) { index += 1 }
        }
        var isReal = false
        var mantissaEnd = index
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { throw syntax("expected a digit after the decimal point") }
            while isDigit(index) { index += 1 }
            isReal = true
            mantissaEnd = index
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { throw syntax("expected a digit in the exponent") }
            while isDigit(index) { index += 1 }
            isReal = true
        }
        if !isReal, let integer = Self.integer(bytes, from: start, to: index) { return .integer(integer) }
        let literal = String(decoding: bytes[start..<index], as: UTF8.self)
        let shown: Substring = literal.count > 40 ? Substring(literal.prefix(40) + "…") : Substring(literal)
        if !isReal {
            guard let integer = Int64(literal) else {
                problem(
                    "\(shown) is outside the 64-bit integer range (\(Int64.min) to \(Int64.max)); "
                        + "a property-list integer cannot hold it (send a real, with a point, or a string)", at: start)
                return .null
            }
            return .integer(integer)
        }
        let hasNonZeroDigit = bytes[start..<mantissaEnd].contains { (UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }
        if let problemText = PlistJSON.realProblem(Double(literal), literal: shown, hasNonZeroDigit: hasNonZeroDigit) {
            problem(problemText, at: start)
            return .null
        }
        return .real(Double(literal) ?? 0)
    }

    /// The integer literal `bytes[from..<to]` (an optional minus, then
    /// digits), read without making a string; nil when Int64 cannot hold it.
    static func integer(_ bytes: [UInt8], from: Int, to: Int) -> Int64? {
        let negative = bytes[from] == UInt8(ascii: "-")
        // Accumulated negatively: Int64.min's magnitude does not fit positively.
        var value: Int64 = 0
        for index in (negative ? from + 1 : from)..<to {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, underflow) = shifted.subtractingReportingOverflow(Int64(bytes[index] &- UInt8(ascii: "0")))
            if overflow || underflow { return nil }
            value = next
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    // MARK: Strings

    /// A string in double quotes, its escapes decoded and its UTF-8 checked.
    mutating func string() throws(PlistError) -> String {
        let start = index
        index += 1
        // The usual string, printable ASCII up to its closing quote, is made from the text at once.
        var plainEnd = index
        while plainEnd < bytes.count, case let byte = bytes[plainEnd], byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") {
            if byte == UInt8(ascii: "\"") {
                let text = bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[index..<plainEnd]), as: UTF8.self) }
                index = plainEnd + 1
                return text
            }
            plainEnd += 1
        }
        var out = Array(bytes[index..<plainEnd])
        index = plainEnd
        while true {
            guard index < bytes.count else { throw syntax("the string is not closed", at: start) }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try escape(into: &out)
            case 0x00..<0x20:
                problem(
                    "a control character (0x\(String(byte, radix: 16))) inside a string; write it as an escape such as \\n or \\u00\(byte < 0x10 ? "0" : "")\(String(byte, radix: 16))"
                )
                index += 1
            case 0x00..<0x80:
                out.append(byte)
                index += 1
            default:
                let length = Self.validUTF8Length(bytes, at: index)
                if length == 0 {
                    problem("byte 0x\(String(byte, radix: 16)) is not valid UTF-8 (JSON text is UTF-8)", at: index)
                    index += 1
                } else {
                    out.append(contentsOf: bytes[index..<(index + length)])
                    index += length
                }
            }
        }
    }

    mutating func escape(into out: inout [UInt8]) throws(PlistError) {
        let start = index
        index += 1
        guard index < bytes.count else { throw syntax("the text ends inside an escape") }
        let replacement: UInt8? =
            switch bytes[index] {
            case UInt8(ascii: "\""): 0x22
            case UInt8(ascii: "\\"): 0x5C
            case UInt8(ascii: "/"): 0x2F
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "n"): 0x0A
            case UInt8(ascii: "r"): 0x0D
            case UInt8(ascii: "t"): 0x09
            default: nil
            }
        if let replacement {
            out.append(replacement)
            index += 1
            return
        }
        guard bytes[index] == UInt8(ascii: "u") else {
            index = start
            throw syntax("unknown escape; JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX")
        }
        index += 1
        var scalar = try hexQuad()
        if (0xD800...0xDBFF).contains(scalar) {
            // A high surrogate must be followed by a low one: together they are one character.
            if bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                let resume = index
                index += 2
                let low = try hexQuad()
                if (0xDC00...0xDFFF).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    index = resume
                }
            }
        }
        guard let character = Unicode.Scalar(scalar) else {
            let text = String(decoding: bytes[start..<min(start + 6, bytes.count)], as: UTF8.self)
            problem("\(text) is half of a UTF-16 surrogate pair, which is not a character (pair it: \\ud83d\\ude00)", at: start)
            return
        }
        out.append(contentsOf: Array(String(Character(character)).utf8))
    }

    mutating func hexQuad() throws(PlistError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw syntax("\\u needs four hex digits") }
        var value: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = Self.hexDigit(bytes[index + offset]) else { throw syntax("\\u needs four hex digits") }
            value = value << 4 | digit
        }
        index += 4
        return value
    }

    static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// The length of the well-formed UTF-8 sequence at `index` (Unicode table 3-7), or 0.
    static func validUTF8Length(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            secondRange = 0x80...0x9F  // no UTF-8-encoded surrogates
        case 0xF0:
            length = 4
            secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            secondRange = 0x80...0x8F  // nothing above U+10FFFF
        default: return 0
        }
        guard bytes.count - index >= length, secondRange.contains(bytes[index + 1]) else { return 0 }
        for offset in 2..<max(2, length) where !(0x80...0xBF).contains(bytes[index + offset]) { return 0 }
        return length
    }
}

extension PlistJSON {
    /// Why a real read from text cannot be a property-list real, or nil if it can:
    /// not finite, too large for a Double, or a non-zero number that rounds to zero.
    /// Shared by the JSON reader and the YAML reader so both refuse the same numbers.
    package static func realProblem(_ value: Double?, literal: Substring, hasNonZeroDigit: Bool) -> String? {
        guard let value else { return "\(literal) is not a number" }
        if value.isNaN || (value.isInfinite && !hasNonZeroDigit) {
            return "\(literal) is not a finite number; a real sent to a process must be finite (JSON has no NaN or infinity)"
        }
        if value.isInfinite {
            return "\(literal) is too large for a real (at most ±\(Double.greatestFiniteMagnitude)); a property-list real is a 64-bit double"
        }
        if value == 0 && hasNonZeroDigit {
            return "\(literal) is too small for a real (the smallest is \(Double.leastNonzeroMagnitude)); write 0.0 for zero"
        }
        return nil
    }
}
