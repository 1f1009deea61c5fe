import Foundation

/// One property-list value. The cases are exactly the types a plist file can
/// hold, so a `PlistValue` always survives a round trip through a file; in
/// particular `bool` and `integer` stay distinct (Foundation's `NSNumber`
/// bridging blurs them).
public enum PlistValue: Hashable, Sendable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([PlistValue])
    case dictionary([String: PlistValue])

    /// The name `defaults read-type` prints ("string", "integer", "float", …).
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "float"
        case .bool: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// "a string", "an integer", "an array" …, for messages.
    public var typeNameWithArticle: String {
        ("aeiou".contains(typeName.first!) ? "an " : "a ") + typeName
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var arrayValue: [PlistValue]? { if case .array(let a) = self { a } else { nil } }
    public var dictionaryValue: [String: PlistValue]? { if case .dictionary(let d) = self { d } else { nil } }
    public var dataValue: Data? { if case .data(let d) = self { d } else { nil } }
    public var dateValue: Date? { if case .date(let d) = self { d } else { nil } }
}

/// Reals and dates compare and hash by their bit pattern, as the bytes a file
/// holds: NaN equals itself (a suite holding NaN is not "changed" on every
/// reload) and 0.0 differs from -0.0 (a write of either is a real change).
extension PlistValue {
    public static func == (lhs: PlistValue, rhs: PlistValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.real(let a), .real(let b)): a.bitPattern == b.bitPattern
        case (.bool(let a), .bool(let b)): a == b
        case (.date(let a), .date(let b)):
            a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.data(let a), .data(let b)): a == b
        // Array and Dictionary equality call this `==` for their elements.
        case (.array(let a), .array(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let s):
            hasher.combine(0 as UInt8)
            hasher.combine(s)
        case .integer(let i):
            hasher.combine(1 as UInt8)
            hasher.combine(i)
        case .real(let d):
            hasher.combine(2 as UInt8)
            hasher.combine(d.bitPattern)
        case .bool(let b):
            hasher.combine(3 as UInt8)
            hasher.combine(b)
        case .date(let d):
            hasher.combine(4 as UInt8)
            hasher.combine(d.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let d):
            hasher.combine(5 as UInt8)
            hasher.combine(d)
        case .array(let a):
            hasher.combine(6 as UInt8)
            hasher.combine(a)
        case .dictionary(let d):
            hasher.combine(7 as UInt8)
            hasher.combine(d)
        }
    }
}

extension PlistValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: PlistValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, PlistValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension PlistValue {
    /// Converts a Foundation/Swift value (as `PropertyListSerialization` or a
    /// caller's `[String: Any]` would hold it) into a `PlistValue`.
    /// - Parameter path: where the value sits, used in the error.
    public init(any value: Any, path: String = "value") throws {
        // An Optional boxed in Any (a generic caller's `T?`): its value, as
        // Foundation bridges it; nil is NSNull there, which no plist holds.
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else {
                throw PropertyListError.notAPropertyList(path: path, typeName: "nil (\(type(of: value)))")
            }
            self = try PlistValue(any: wrapped, path: path)
            return
        }
        // An NSNumber first: it would also cast to Int, Double and Bool, and a
        // real 2.0 must not become the integer 2.
        if let number = value as? NSNumber, type(of: value) is NSNumber.Type {
            let kind = String(cString: number.objCType)
            if kind == "c" || kind == "B" {
                self = .bool(number.boolValue)
            } else if kind == "d" || kind == "f" {
                self = .real(number.doubleValue)
            } else {
                self = .integer(number.int64Value)
            }
            return
        }
        switch value {
        case let v as PlistValue: self = v
        case let v as Bool where type(of: value) == Bool.self: self = .bool(v)
        case let v as String: self = .string(v)
        // Every integer type (Int, UInt8, UInt64 …) and every real (Double, Float, CGFloat …), as NSNumber bridges them.
        case let v as any BinaryInteger:
            guard let exact = Int64(exactly: v) else { throw PropertyListError.integerOutOfRange(path: path, value: "\(v)") }
            self = .integer(exact)
        case let v as any BinaryFloatingPoint: self = .real(Double(v))
        case let v as Date: self = .date(v)
        case let v as Data: self = .data(v)
        case let v as URL:
            self = .data(try NSKeyedArchiver.archivedData(withRootObject: v, requiringSecureCoding: false))
        case let v as [Any]:
            self = .array(try v.enumerated().map { try PlistValue(any: $1, path: "\(path)[\($0)]") })
        case let v as [String: Any]:
            var out: [String: PlistValue] = [:]
            for (key, element) in v { out[key] = try PlistValue(any: element, path: "\(path).\(key)") }
            self = .dictionary(out)
        default:
            throw PropertyListError.notAPropertyList(path: path, typeName: String(describing: type(of: value)))
        }
    }

    /// The Foundation form, for `PropertyListSerialization` and `[String: Any]` callers.
    public var foundationValue: Any {
        switch self {
        case .string(let s): s
        case .integer(let i): Int(i)
        case .real(let d): d
        case .bool(let b): b
        case .date(let d): d
        case .data(let d): d
        case .array(let a): a.map(\.foundationValue)
        case .dictionary(let d): d.mapValues(\.foundationValue)
        }
    }
}

extension Data {
    /// Bytes from hex digits ("00ff10"; white space ignored); nil if the text is not an even run of hex digits.
    public init?(hexDigits text: String) {
        let hex = text.filter { !$0.isWhitespace }
        guard hex.count % 2 == 0, hex.allSatisfy(\.isHexDigit) else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }
}
