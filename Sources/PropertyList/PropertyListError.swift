/// Why a property list could not be read or built. Each case names where.
public enum PropertyListError: Error, Equatable, CustomStringConvertible {
    /// Bytes that are neither a binary nor an XML property list.
    case unrecognizedFormat
    /// A binary plist whose structure is broken at `offset`.
    case corruptBinary(offset: Int, reason: String)
    /// XML that does not parse as a property list, at a line and column.
    case invalidXML(line: Int, column: Int, reason: String)
    /// Old-style text with a syntax error at a line and column.
    case syntax(line: Int, column: Int, reason: String)
    /// A value of a type a property list cannot hold (a key path and the type).
    case notAPropertyList(path: String, typeName: String)
    /// The top-level value is not a dictionary where one is required.
    case rootNotDictionary(found: String)
    /// An integer beyond the signed 64-bit range the values hold (a key path and the number).
    case integerOutOfRange(path: String, value: String)

    public var description: String {
        switch self {
        case .unrecognizedFormat:
            "not a property list (neither binary 'bplist00' nor XML)"
        case .corruptBinary(let offset, let reason):
            "corrupt binary property list at byte \(offset): \(reason)"
        case .invalidXML(let line, let column, let reason):
            "invalid XML property list at line \(line), column \(column): \(reason)"
        case .syntax(let line, let column, let reason):
            "line \(line), column \(column): \(reason)"
        case .notAPropertyList(let path, let typeName):
            "\(path) is a \(typeName), which a property list cannot hold (use string, number, bool, date, data, array or dictionary)"
        case .rootNotDictionary(let found):
            "the top-level value is \(found == "array" ? "an" : "a") \(found), not a dictionary"
        case .integerOutOfRange(let path, let value):
            "\(path) is \(value), beyond the signed 64-bit integers a property-list value holds here (store it as a string or a real)"
        }
    }
}
