import Foundation

/// A strict reader of XML property lists over UTF-8 bytes. Recursive, with
/// the depth bounded by `PlistLimits.maximumDepth` before each step down.
struct XMLReader {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    // MARK: Errors and low-level scanning

    /// An error at `offset` (the current position by default), with its line and column.
    func error(_ reason: String, at offset: Int? = nil) -> PropertyListError {
        let end = min(offset ?? position, bytes.count)
        var line = 1
        var column = 1
        for byte in bytes[0..<end] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }  // count characters, not UTF-8 continuation bytes
        }
        return .invalidXML(line: line, column: column, reason: reason)
    }

    var atEnd: Bool { position >= bytes.count }

    func peek(_ text: String) -> Bool {
        var index = position
        for byte in text.utf8 {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
        }
        return true
    }

    mutating func skip(_ text: String) -> Bool {
        guard peek(text) else { return false }
        position += text.utf8.count
        return true
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    mutating func skipSpaces() {
        while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 }
    }

    /// Moves past `terminator`, or fails naming what was left open.
    mutating func skip(past terminator: String, unterminated what: String) throws {
        let start = position
        let pattern = Array(terminator.utf8)
        while position < bytes.count {
            if bytes[position] == pattern[0], peek(terminator) {
                position += pattern.count
                return
            }
            position += 1
        }
        throw error("unterminated \(what)", at: start)
    }

    /// Skips white space, comments and processing instructions.
    mutating func skipMisc() throws {
        while true {
            skipSpaces()
            if peek("<!--") {
                position += 4
                try skip(past: "-->", unterminated: "comment")
            } else if peek("<?") {
                position += 2
                try skip(past: "?>", unterminated: "processing instruction")
            } else {
                return
            }
        }
    }

    // MARK: The document

    mutating func document() throws -> PlistValue {
        if peek("<?xml") {
            let start = position
            try skip(past: "?>", unterminated: "XML declaration")
            try checkDeclaredEncoding(String(decoding: bytes[start..<position], as: UTF8.self), at: start)
        }
        try skipMisc()
        if peek("<!DOCTYPE") {
            try skipDoctype()
            try skipMisc()
        }
        guard !atEnd else { throw error("no property list: the document is empty") }
        let value: PlistValue
        let rootStart = position
        let root = try openTag()
        if root.name == "plist" {
            let tag = root
            guard !tag.isEmpty else { throw error("the <plist> element holds no value", at: tag.start) }
            try skipMisc()
            guard !peek("</") else { throw error("the <plist> element holds no value") }
            value = try self.value(depth: 0)
            try skipMisc()
            try closeTag("plist", openedAt: tag.start)
        } else {
            position = rootStart  // a bare value without <plist>, as Foundation reads too
            value = try self.value(depth: 0)
        }
        try skipMisc()
        guard atEnd else { throw error("unexpected text after the property list") }
        return value
    }

    func checkDeclaredEncoding(_ declaration: String, at offset: Int) throws {
        guard let range = declaration.range(of: "encoding") else { return }
        let rest = declaration[range.upperBound...].drop(while: { $0 == " " || $0 == "=" })
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return }
        let name = rest.dropFirst().prefix(while: { $0 != quote }).lowercased()
        guard ["utf-8", "utf8", "utf-16", "utf16", "us-ascii", "ascii"].contains(name) else {
            throw error("encoding \"\(name)\" is not supported (use UTF-8 or UTF-16)", at: offset)
        }
    }

    /// `<!DOCTYPE plist ...>`, with an internal subset in brackets if any.
    mutating func skipDoctype() throws {
        let start = position
        var inSubset = false
        var quote: UInt8? = nil
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if let open = quote {
                if byte == open { quote = nil }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
            case UInt8(ascii: "["): inSubset = true
            case UInt8(ascii: "]"): inSubset = false
            case UInt8(ascii: ">") where !inSubset: return
            default: break
            }
        }
        throw error("unterminated <!DOCTYPE>", at: start)
    }

    // MARK: Tags

    struct OpenTag {
        let name: String
        /// `<name/>`: no content and no closing tag.
        let isEmpty: Bool
        let start: Int
    }

    /// Reads `<name attributes...>` or `<name .../>`.
    mutating func openTag() throws -> OpenTag {
        let start = position
        guard skip("<") else { throw error("expected an element") }
        let nameStart = position
        while position < bytes.count, Self.isNameByte(bytes[position]) { position += 1 }
        guard position > nameStart else { throw error("expected an element name after '<'", at: start) }
        let name = String(decoding: bytes[nameStart..<position], as: UTF8.self)
        // Attributes (such as plist's version) are allowed and ignored; quoted values may hold '>'.
        var quote: UInt8? = nil
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if let open = quote {
                if byte == open { quote = nil }
                continue
            }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
                continue
            }
            if byte == UInt8(ascii: "<") { break }
            if byte == UInt8(ascii: ">") {
                return OpenTag(name: name, isEmpty: bytes[position - 2] == UInt8(ascii: "/"), start: start)
            }
        }
        throw error("unterminated <\(name)> tag", at: start)
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
    }

    /// Reads `</name>`.
    mutating func closeTag(_ name: String, openedAt start: Int) throws {
        let here = position
        guard skip("</"), skip(name) else {
            throw error("expected </\(name)> to close the <\(name)> opened at \(location(of: start))", at: here)
        }
        skipSpaces()
        guard skip(">") else { throw error("expected '>' after </\(name)", at: here) }
    }

    func location(of offset: Int) -> String {
        guard case .invalidXML(let line, let column, _) = error("", at: offset) else { return "" }
        return "line \(line), column \(column)"
    }

    // MARK: Values

    /// One value element; `depth` is how many arrays and dictionaries enclose it.
    mutating func value(depth: Int) throws -> PlistValue {
        let tag = try openTag()
        switch tag.name {
        case "array", "dict":
            guard depth < PlistLimits.maximumDepth else {
                throw error("the property list nests arrays and dictionaries deeper than \(PlistLimits.maximumDepth)", at: tag.start)
            }
            if tag.isEmpty { return tag.name == "array" ? .array([]) : .dictionary([:]) }
            return tag.name == "array" ? try array(tag, depth: depth) : try dictionary(tag, depth: depth)
        case "string":
            return .string(try text(of: tag))
        case "integer":
            return .integer(try integer(try text(of: tag), at: tag.start))
        case "real":
            return .real(try real(try text(of: tag), at: tag.start))
        case "true", "false":
            if !tag.isEmpty { try closeTag(tag.name, openedAt: tag.start) }
            return .bool(tag.name == "true")
        case "date":
            return .date(try date(try text(of: tag), at: tag.start))
        case "data":
            return .data(try data(of: tag))
        case "key":
            throw error("<key> outside a dictionary", at: tag.start)
        default:
            throw error(
                "unknown element <\(tag.name)> (a property list holds array, dict, string, integer, real, true, false, date, data)", at: tag.start)
        }
    }

    mutating func array(_ tag: OpenTag, depth: Int) throws -> PlistValue {
        var elements: [PlistValue] = []
        while true {
            try skipMisc()
            guard !atEnd else { throw error("unterminated <array> opened at \(location(of: tag.start))") }
            if peek("</") {
                try closeTag("array", openedAt: tag.start)
                return .array(elements)
            }
            elements.append(try value(depth: depth + 1))
        }
    }

    mutating func dictionary(_ tag: OpenTag, depth: Int) throws -> PlistValue {
        var entries: [String: PlistValue] = [:]
        while true {
            try skipMisc()
            guard !atEnd else { throw error("unterminated <dict> opened at \(location(of: tag.start))") }
            if peek("</") {
                try closeTag("dict", openedAt: tag.start)
                return .dictionary(entries)
            }
            let keyTag = try openTag()
            guard keyTag.name == "key" else {
                throw error("expected <key> in a dictionary, found <\(keyTag.name)>", at: keyTag.start)
            }
            let key = try text(of: keyTag)
            try skipMisc()
            guard !atEnd, !peek("</") else { throw error("key \"\(key)\" has no value") }
            guard entries.updateValue(try value(depth: depth + 1), forKey: key) == nil else {
                throw error("key \"\(key)\" appears twice in one dictionary", at: keyTag.start)
            }
        }
    }

    /// The character data of a text element up to its closing tag: entities
    /// resolved, CDATA sections taken as they are, comments skipped.
    mutating func text(of tag: OpenTag) throws -> String {
        if tag.isEmpty { return "" }
        var out = [UInt8]()
        let start = position
        while true {
            guard position < bytes.count else { throw error("unterminated <\(tag.name)> opened at \(location(of: tag.start))") }
            let byte = bytes[position]
            if byte == UInt8(ascii: "<") {
                if peek("<![CDATA[") {
                    position += 9
                    let body = position
                    try skip(past: "]]>", unterminated: "CDATA section")
                    out += bytes[body..<position - 3]
                } else if peek("<!--") {
                    position += 4
                    try skip(past: "-->", unterminated: "comment")
                } else if peek("</") {
                    try closeTag(tag.name, openedAt: tag.start)
                    break
                } else {
                    throw error("<\(tag.name)> holds text only, found an element")
                }
            } else if byte == UInt8(ascii: "&") {
                out += try entity()
            } else {
                out.append(byte)
                position += 1
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else {
            throw error("the text of <\(tag.name)> is not valid UTF-8", at: start)
        }
        return text
    }

    /// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#NN;`, `&#xHH;` as UTF-8 bytes.
    mutating func entity() throws -> [UInt8] {
        let start = position
        position += 1
        let nameStart = position
        while position < bytes.count, bytes[position] != UInt8(ascii: ";"), position - nameStart < 12 { position += 1 }
        guard position < bytes.count, bytes[position] == UInt8(ascii: ";") else {
            throw error("'&' must start an entity such as &amp;", at: start)
        }
        let name = String(decoding: bytes[nameStart..<position], as: UTF8.self)
        position += 1
        switch name {
        case "amp": return [UInt8(ascii: "&")]
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            var code: UInt32?
            if name.hasPrefix("#x") {
                code = UInt32(name.dropFirst(2), radix: 16)
            } else if name.hasPrefix("#") {
                code = UInt32(name.dropFirst(1), radix: 10)
            }
            guard let code, let scalar = Unicode.Scalar(code) else {
                throw error("unknown entity &\(name);", at: start)
            }
            return Array(String(scalar).utf8)
        }
    }

    func integer(_ text: String, at offset: Int) throws -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        var digits = Substring(trimmed)
        let negative = digits.first == "-"
        if negative || digits.first == "+" { digits = digits.dropFirst() }
        var radix = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        }
        // Digits only (Int64(_:radix:) would also take a second sign).
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isHexDigit && (radix == 16 || $0.isNumber) }),
            let magnitude = UInt64(digits, radix: radix)
        else { throw error("<integer> holds \"\(trimmed.prefix(40))\", not a whole number", at: offset) }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw error("<integer> \(trimmed) does not fit in 64 bits", at: offset) }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard let value = Int64(exactly: magnitude) else { throw error("<integer> \(trimmed) does not fit in 64 bits", at: offset) }
        return value
    }

    func real(_ text: String, at offset: Int) throws -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch trimmed.lowercased() {
        case "nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default:
            // Numbers only: Double(_:) would also take "nan(0x1)" and other spellings.
            guard trimmed.allSatisfy({ $0.isASCII && ($0.isHexDigit || "+-.xXpP".contains($0)) }), let value = Double(trimmed) else {
                throw error("<real> holds \"\(trimmed.prefix(40))\", not a number", at: offset)
            }
            return value
        }
    }

    /// `2026-11-22T03:00:00Z`, the form `XMLPropertyList.formatDate` writes (a year may be signed or longer).
    func date(_ text: String, at offset: Int) throws -> Date {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        func fail() -> PropertyListError {
            error("<date> holds \"\(trimmed.prefix(40))\", not a date such as 2026-11-22T03:00:00Z", at: offset)
        }
        var characters = Substring(trimmed)
        let negative = characters.first == "-"
        if negative { characters = characters.dropFirst() }
        let yearDigits = characters.prefix(while: { $0.isASCII && $0.isNumber })
        guard (4...9).contains(yearDigits.count), let year = Int64(yearDigits) else { throw fail() }
        characters = characters.dropFirst(yearDigits.count)
        var fields: [Int64] = []
        for separator in ["-", "-", "T", ":", ":"] as [Character] {
            guard characters.first == separator else { throw fail() }
            let two = characters.dropFirst().prefix(2)
            guard two.count == 2, two.allSatisfy({ $0.isASCII && $0.isNumber }), let field = Int64(two) else { throw fail() }
            fields.append(field)
            characters = characters.dropFirst(3)
        }
        guard characters == "Z" else { throw fail() }
        let signedYear = negative ? -year : year
        let (month, day, hour, minute, second) = (fields[0], fields[1], fields[2], fields[3], fields[4])
        guard (1...12).contains(month), day >= 1, day <= CivilCalendar.daysInMonth(month, year: signedYear),
            hour < 24, minute < 60, second < 60
        else { throw fail() }
        let days = CivilCalendar.days(year: signedYear, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - XMLDate.referenceSinceUnixEpoch
        guard abs(Double(seconds)) <= XMLDate.limit else {
            throw error("<date> \(trimmed) is more than 3 million years from 2001, further than a property list holds", at: offset)
        }
        return Date(timeIntervalSinceReferenceDate: Double(seconds))
    }

    /// Base64 with white space allowed anywhere; any other character, or a
    /// length that is not whole groups of four, is an error.
    mutating func data(of tag: OpenTag) throws -> Data {
        let textStart = position
        let text = try text(of: tag)
        var decoded = [UInt8]()
        decoded.reserveCapacity(text.utf8.count * 3 / 4)
        var group: UInt32 = 0
        var groupLength = 0
        var padding = 0
        var offset = textStart
        for byte in text.utf8 {
            defer { offset += 1 }
            if Self.isSpace(byte) { continue }
            let sextet: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): sextet = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): sextet = UInt32(byte - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sextet = UInt32(byte - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): sextet = 62
            case UInt8(ascii: "/"): sextet = 63
            case UInt8(ascii: "="):
                // Padding ends the data: only in the last group, after at least two characters.
                guard groupLength >= 2 else { throw error("misplaced '=' in base64 <data>", at: offset) }
                padding += 1
                sextet = 0
            default:
                throw error("'\(Unicode.Scalar(byte))' is not a base64 character in <data>", at: offset)
            }
            if padding > 0 && byte != UInt8(ascii: "=") { throw error("base64 <data> continues after '=' padding", at: offset) }
            group = group << 6 | sextet
            groupLength += 1
            if groupLength == 4 {
                decoded.append(UInt8(truncatingIfNeeded: group >> 16))
                if padding < 2 { decoded.append(UInt8(truncatingIfNeeded: group >> 8)) }
                if padding < 1 { decoded.append(UInt8(truncatingIfNeeded: group)) }
                group = 0
                groupLength = 0
                if padding > 0 { padding = 3 }  // nothing may follow a padded group
            }
        }
        guard groupLength == 0 else {
            throw error("base64 <data> ends in an incomplete group of \(groupLength) characters", at: tag.start)
        }
        return Data(decoded)
    }
}
