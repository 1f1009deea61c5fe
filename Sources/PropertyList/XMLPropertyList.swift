import Foundation

/// Apple's XML property-list format, written and read here. The reader is
/// our own rather than Foundation's, which on Linux turns invalid base64 into
/// data silently: this one is strict (base64, numbers, dates, duplicate keys),
/// reads UTF-8 and UTF-16 (with a byte-order mark, either endianness), refuses
/// nesting deeper than `PlistLimits.maximumDepth`, and names the line and
/// column of every error.
package enum XMLPropertyList {
    package static func isXML(_ data: Data) -> Bool {
        let head = data.prefix(512)
        guard let bytes = try? XMLText.utf8Bytes(of: head, partial: true) else { return false }
        // Only the start matters: a character cut at the end may be replaced.
        let text = String(decoding: bytes.prefix(256), as: UTF8.self)
        let trimmed = text.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" })
        return trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<!DOCTYPE plist") || trimmed.hasPrefix("<plist")
    }

    package static func decode(_ data: Data, maximumSize: Int = PlistLimits.maximumFileSize) throws -> PlistValue {
        guard data.count <= maximumSize else {
            throw PropertyListError.invalidXML(
                line: 1, column: 1, reason: "the data is \(data.count) bytes, more than the \(maximumSize) a property list may have")
        }
        let bytes = try XMLText.utf8Bytes(of: data, partial: false)
        var reader = XMLReader(bytes: bytes)
        return try reader.document()
    }

    package static func encode(_ value: PlistValue) -> Data {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """
        append(value, to: &out)
        out += "</plist>\n"
        return Data(out.utf8)
    }

    /// "2026-11-22T03:00:00Z": whole seconds, proleptic Gregorian calendar, as
    /// Apple writes them; the reader takes back exactly this form. A date the
    /// form cannot hold (not finite, or beyond `XMLDate.limit`) is written
    /// as the nearest one it can, and NaN as the reference date.
    package static func formatDate(_ date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        let clamped = interval.isNaN ? 0 : min(max(interval, -XMLDate.limit), XMLDate.limit)
        let seconds = Int64(clamped.rounded(.down)) + XMLDate.referenceSinceUnixEpoch
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yearDigits = String(abs(year))
        let yearText = (year < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - yearDigits.count)) + yearDigits
        return "\(yearText)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))Z"
    }

    static func formatReal(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-infinity" : "+infinity" }
        return "\(value)"
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            // A carriage return would come back as a line feed from an XML reader.
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// A collection whose children are being written.
    private struct OpenCollection {
        let closingTag: String
        let pad: String
        /// The children in order; for a dictionary, each with its key.
        let children: [(key: String?, value: PlistValue)]
        var next = 0
    }

    /// Writes a value and its children. A work list rather than recursion, so
    /// a deep value cannot exhaust the stack.
    private static func append(_ root: PlistValue, to out: inout String) {
        var stack: [OpenCollection] = []
        func open(_ value: PlistValue, pad: String) {
            switch value {
            case .string(let s): out += "\(pad)<string>\(escape(s))</string>\n"
            case .integer(let i): out += "\(pad)<integer>\(i)</integer>\n"
            case .real(let d): out += "\(pad)<real>\(formatReal(d))</real>\n"
            case .bool(let b): out += "\(pad)\(b ? "<true/>" : "<false/>")\n"
            case .date(let d): out += "\(pad)<date>\(formatDate(d))</date>\n"
            case .data(let d): out += "\(pad)<data>\(d.base64EncodedString())</data>\n"
            case .array(let elements):
                if elements.isEmpty {
                    out += "\(pad)<array/>\n"
                    return
                }
                out += "\(pad)<array>\n"
                stack.append(OpenCollection(closingTag: "</array>", pad: pad, children: elements.map { (nil, $0) }))
            case .dictionary(let dictionary):
                if dictionary.isEmpty {
                    out += "\(pad)<dict/>\n"
                    return
                }
                out += "\(pad)<dict>\n"
                let sorted = dictionary.sorted { $0.key < $1.key }.map { (key: Optional($0.key), value: $0.value) }
                stack.append(OpenCollection(closingTag: "</dict>", pad: pad, children: sorted))
            }
        }
        open(root, pad: "")
        while let last = stack.indices.last {
            let collection = stack[last]
            guard collection.next < collection.children.count else {
                out += "\(collection.pad)\(collection.closingTag)\n"
                stack.removeLast()
                continue
            }
            stack[last].next += 1
            let child = collection.children[collection.next]
            let pad = collection.pad + "\t"
            if let key = child.key { out += "\(pad)<key>\(escape(key))</key>\n" }
            open(child.value, pad: pad)
        }
    }
}

/// Dates in the XML form (their days and civil dates: `CivilCalendar`).
enum XMLDate {
    /// Seconds from 1970-01-01 to 2001-01-01, Foundation's reference date.
    static let referenceSinceUnixEpoch: Int64 = 978_307_200

    /// The furthest a date may lie from the reference date, in seconds
    /// (about 3 million years), in what the writer writes and the reader reads alike.
    static let limit: Double = 1e14
}

/// The two on-disk formats and detection between them.
package enum PropertyListFormat: String, Sendable, CaseIterable {
    case binary
    case xml

    package func encode(_ value: PlistValue) -> Data {
        switch self {
        case .binary: BinaryPropertyList.encode(value)
        case .xml: XMLPropertyList.encode(value)
        }
    }

    /// `encode`'s bytes as an array, for a file's commit.
    package func encodedBytes(_ value: PlistValue) -> [UInt8] {
        switch self {
        case .binary: BinaryPropertyList.encodedBytes(value)
        case .xml: [UInt8](XMLPropertyList.encode(value))
        }
    }

    /// Decodes either format, telling which it was.
    package static func decode(_ data: Data, maximumSize: Int = PlistLimits.maximumFileSize) throws -> (value: PlistValue, format: PropertyListFormat)
    {
        if BinaryPropertyList.isBinary(data) { return (try BinaryPropertyList.decode(data, maximumSize: maximumSize), .binary) }
        if XMLPropertyList.isXML(data) { return (try XMLPropertyList.decode(data, maximumSize: maximumSize), .xml) }
        throw PropertyListError.unrecognizedFormat
    }

    /// Decodes a file body whose top level must be a dictionary (a defaults domain).
    package static func decodeDictionary(_ data: Data, maximumSize: Int = PlistLimits.maximumFileSize) throws -> [String: PlistValue] {
        let (value, _) = try decode(data, maximumSize: maximumSize)
        guard case .dictionary(let dictionary) = value else {
            throw PropertyListError.rootNotDictionary(found: value.typeName)
        }
        return dictionary
    }

    /// `decodeDictionary` of a file's bytes, reusing the values of `previous`
    /// (the file's last version and its decode) that did not change, when
    /// both are binary (`BinaryPropertyList.decodeDictionary(_:reusing:maximumSize:)`).
    package static func decodeDictionary(
        _ bytes: [UInt8], reusing previous: (bytes: [UInt8], dictionary: [String: PlistValue])?,
        maximumSize: Int = PlistLimits.maximumFileSize
    ) throws -> [String: PlistValue] {
        guard bytes.starts(with: BinaryPropertyList.magic) else { return try decodeDictionary(Data(bytes), maximumSize: maximumSize) }
        return try BinaryPropertyList.decodeDictionary(bytes, reusing: previous, maximumSize: maximumSize)
    }
}
