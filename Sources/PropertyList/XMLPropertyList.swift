import Foundation

/// Apple's XML property-list format. Writing is done here (so the output is
/// stable and exact); reading goes through Foundation's parser, whose values
/// `PlistValue(any:)` maps back without confusing bools and numbers.
public enum XMLPropertyList {
    public static func isXML(_ data: Data) -> Bool {
        let head = data.prefix(256)
        guard let text = String(data: head, encoding: .utf8) ?? String(data: head, encoding: .ascii) else { return false }
        let trimmed = text.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" })
        return trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<!DOCTYPE plist") || trimmed.hasPrefix("<plist")
    }

    public static func decode(_ data: Data) throws -> PlistValue {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw PropertyListError.invalidXML(reason: (error as NSError).localizedDescription)
        }
        return try PlistValue(any: object)
    }

    public static func encode(_ value: PlistValue) -> Data {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """
        append(value, indent: 0, to: &out)
        out += "</plist>\n"
        return Data(out.utf8)
    }

    static func formatDate(_ date: Date) -> String { date.formatted(.iso8601) }

    static func formatReal(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-infinity" : "+infinity" }
        return "\(value)"
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }

    private static func append(_ value: PlistValue, indent: Int, to out: inout String) {
        let pad = String(repeating: "\t", count: indent)
        switch value {
        case .string(let s): out += "\(pad)<string>\(escape(s))</string>\n"
        case .integer(let i): out += "\(pad)<integer>\(i)</integer>\n"
        case .real(let d): out += "\(pad)<real>\(formatReal(d))</real>\n"
        case .bool(let b): out += "\(pad)\(b ? "<true/>" : "<false/>")\n"
        case .date(let d): out += "\(pad)<date>\(formatDate(d))</date>\n"
        case .data(let d): out += "\(pad)<data>\(d.base64EncodedString())</data>\n"
        case .array(let elements):
            if elements.isEmpty { out += "\(pad)<array/>\n"; return }
            out += "\(pad)<array>\n"
            for element in elements { append(element, indent: indent + 1, to: &out) }
            out += "\(pad)</array>\n"
        case .dictionary(let dictionary):
            if dictionary.isEmpty { out += "\(pad)<dict/>\n"; return }
            out += "\(pad)<dict>\n"
            for key in dictionary.keys.sorted() {
                out += "\(pad)\t<key>\(escape(key))</key>\n"
                append(dictionary[key]!, indent: indent + 1, to: &out)
            }
            out += "\(pad)</dict>\n"
        }
    }
}

/// The two on-disk formats and detection between them.
public enum PropertyListFormat: String, Sendable, CaseIterable {
    case binary
    case xml

    public func encode(_ value: PlistValue) -> Data {
        switch self {
        case .binary: BinaryPropertyList.encode(value)
        case .xml: XMLPropertyList.encode(value)
        }
    }

    /// Decodes either format, telling which it was.
    public static func decode(_ data: Data) throws -> (value: PlistValue, format: PropertyListFormat) {
        if BinaryPropertyList.isBinary(data) { return (try BinaryPropertyList.decode(data), .binary) }
        if XMLPropertyList.isXML(data) { return (try XMLPropertyList.decode(data), .xml) }
        throw PropertyListError.unrecognizedFormat
    }

    /// Decodes a file body whose top level must be a dictionary (a defaults domain).
    public static func decodeDictionary(_ data: Data) throws -> [String: PlistValue] {
        let (value, _) = try decode(data)
        guard case .dictionary(let dictionary) = value else {
            throw PropertyListError.rootNotDictionary(found: value.typeName)
        }
        return dictionary
    }
}
