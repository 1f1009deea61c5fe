import Foundation
import PropertyList

/// The typed getters, with UserDefaults' conversions between strings, numbers and booleans.
extension GroupDefaults {
    /// false for a missing key: use `value(forKey:)` to tell "absent" from "false".
    /// - Parameter key: The key.
    /// - Returns: The value as `UserDefaults.bool(forKey:)` converts it.
    public func bool(forKey key: String) -> Bool { Conversions.bool(value(forKey: key)) ?? false }
    /// 0 for a missing key or one no number converts from; numbers, booleans and numeric strings convert.
    /// - Parameter key: The key.
    /// - Returns: The value as an integer (clamped to `Int`).
    public func integer(forKey key: String) -> Int { Int(clamping: Conversions.integer(value(forKey: key)) ?? 0) }
    /// 0 for a missing key or one no number converts from; numbers, booleans and numeric strings convert.
    /// - Parameter key: The key.
    /// - Returns: The value as a `Double`.
    public func double(forKey key: String) -> Double { Conversions.double(value(forKey: key)) ?? 0 }
    /// `double(forKey:)` as a `Float`.
    /// - Parameter key: The key.
    /// - Returns: The value as a `Float`.
    public func float(forKey key: String) -> Float { Float(double(forKey: key)) }

    /// A string, or a number's text; nil otherwise.
    /// - Parameter key: The key.
    /// - Returns: The value as text, or nil.
    public func string(forKey key: String) -> String? { Conversions.string(value(forKey: key)) }
    /// nil unless the value is an array.
    /// - Parameter key: The key.
    /// - Returns: The array's elements.
    public func array(forKey key: String) -> [PlistValue]? { value(forKey: key)?.arrayValue }
    /// nil unless the value is an array of strings only.
    /// - Parameter key: The key.
    /// - Returns: The strings, or nil.
    public func stringArray(forKey key: String) -> [String]? {
        guard let array = array(forKey: key) else { return nil }
        let strings = array.compactMap(\.stringValue)
        return strings.count == array.count ? strings : nil
    }
    /// nil unless the value is a dictionary.
    /// - Parameter key: The key.
    /// - Returns: The dictionary.
    public func dictionary(forKey key: String) -> [String: PlistValue]? { value(forKey: key)?.dictionaryValue }
    /// nil unless the value is data.
    /// - Parameter key: The key.
    /// - Returns: The data.
    public func data(forKey key: String) -> Data? { value(forKey: key)?.dataValue }
    /// nil unless the value is a date.
    /// - Parameter key: The key.
    /// - Returns: The date.
    public func date(forKey key: String) -> Date? { value(forKey: key)?.dateValue }
    /// A URL stored by `set(url:forKey:)` (keyed-archive data, as Apple stores
    /// it), or a string: an absolute URL, or a path (a file URL, `~` expanded).
    /// - Parameter key: The key.
    /// - Returns: The URL, or nil when the value is neither.
    public func url(forKey key: String) -> URL? { Conversions.url(value(forKey: key)) }

    /// Stores a URL as Apple's `set(_:forKey:)` does: a file URL as its path
    /// (`~` for the home folder), any other whole (scheme, query, fragment)
    /// as keyed-archive data.
    /// - Parameters:
    ///   - url: The URL; nil removes the key.
    ///   - key: The key.
    public func set(url: URL?, forKey key: String) {
        set(url: url, forKey: key, postingDidChange: true)
    }

    package func set(url: URL?, forKey key: String, postingDidChange: Bool) {
        set(url.map(Conversions.storedForm(of:)), forKey: key, postingDidChange: postingDidChange)
    }
}

/// UserDefaults' value conversions, as pure functions.
package enum Conversions {
    public static func bool(_ value: PlistValue?) -> Bool? {
        switch value {
        case .bool(let b): b
        case .integer(let i): i != 0
        case .real(let d): d != 0
        case .string(let s): stringBool(s)
        default: nil
        }
    }

    /// NSString.boolValue: skips leading blanks, then Y, y, T, t or a digit 1–9 means true.
    static func stringBool(_ s: String) -> Bool {
        var rest = Substring(s).drop(while: { $0 == " " || $0 == "\t" })
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        rest = rest.drop(while: { $0 == "0" })
        guard let first = rest.first else { return false }
        return "YyTt123456789".contains(first)
    }

    public static func integer(_ value: PlistValue?) -> Int64? {
        switch value {
        case .integer(let i): i
        // Toward zero, saturating, NaN 0: what an iPhone's (arm64) conversion gives. (Foundation on
        // x86_64 Linux gives Int64.min for every real out of range: C leaves it undefined.)
        case .real(let d): d.isNaN ? 0 : Int64(exactly: d.rounded(.towardZero)) ?? (d < 0 ? .min : .max)
        case .bool(let b): b ? 1 : 0
        case .string(let s): leadingInteger(s)
        default: nil
        }
    }

    public static func double(_ value: PlistValue?) -> Double? {
        switch value {
        case .integer(let i): Double(i)
        case .real(let d): d
        case .bool(let b): b ? 1 : 0
        case .string(let s): leadingNumber(s) ?? 0
        default: nil
        }
    }

    /// NSString's `doubleValue`: after blanks, the longest decimal number
    /// (sign, digits, fraction, exponent); no `inf`, `nan` or hexadecimal.
    static func leadingNumber(_ s: String) -> Double? {
        let bytes = Array(s.utf8)
        var i = 0
        while i < bytes.count, bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "\t") { i += 1 }
        var text = ""
        func digits() -> String {
            var run = ""
            while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
                run.append(Character(UnicodeScalar(bytes[i])))
                i += 1
            }
            return run
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
            text.append(Character(UnicodeScalar(bytes[i])))
            i += 1
        }
        let whole = digits()
        var fraction = ""
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            fraction = digits()
        }
        guard !whole.isEmpty || !fraction.isEmpty else { return nil }
        text += (whole.isEmpty ? "0" : whole) + (fraction.isEmpty ? "" : "." + fraction)
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            var sign = ""
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                sign = String(Character(UnicodeScalar(bytes[i])))
                i += 1
            }
            let exponent = digits()
            if !exponent.isEmpty { text += "e" + sign + exponent }
        }
        return Double(text)
    }

    /// NSString's `integerValue`: after blanks, a sign and decimal digits
    /// only (no fraction, no exponent: "1e3" is 1), saturating at the ends of Int64.
    static func leadingInteger(_ s: String) -> Int64 {
        var rest = Substring(s).utf8.drop(while: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        var negative = false
        if let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            rest = rest.dropFirst()
        }
        var magnitude: UInt64 = 0
        for byte in rest {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            let (times10, overflowA) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            if overflowA || overflowB { return negative ? .min : .max }
            magnitude = sum
        }
        if negative { return magnitude > UInt64(Int64.max) ? .min : -Int64(magnitude) }
        return magnitude > UInt64(Int64.max) ? .max : Int64(magnitude)
    }

    /// `consuming`: the caller's value is moved, not copied, so a string is handed on without a retain.
    public static func string(_ value: consuming PlistValue?) -> String? {
        switch consume value {
        case .string(let s): s
        case .integer(let i): String(i)
        case .real(let d): "\(d)"
        case .bool(let b): b ? "1" : "0"
        default: nil
        }
    }

    /// How `set(_:forKey:)` stores a URL on Apple platforms: a file URL's
    /// path, abbreviated with `~` (readable by `string(forKey:)` too), else an archive.
    public static func storedForm(of url: URL) -> PlistValue {
        guard url.isFileURL else { return archive(url) }
        let path = url.absoluteURL.path
        let home = NSHomeDirectory()
        if path == home { return "~" }
        if home != "/", path.hasPrefix(home + "/") { return .string("~" + path.dropFirst(home.count)) }
        return .string(path)
    }

    public static func archive(_ url: URL) -> PlistValue {
        if let data = try? NSKeyedArchiver.archivedData(withRootObject: url, requiringSecureCoding: false) { return .data(data) }
        return .string(url.absoluteString)
    }

    public static func url(_ value: PlistValue?) -> URL? {
        switch value {
        case .data(let data):
            return (try? NSKeyedUnarchiver.unarchivedObject(ofClass: NSURL.self, from: data)).map { $0 as URL }
        case .string(let s):
            if s.hasPrefix("/") || s.hasPrefix("~") { return URL(fileURLWithPath: (s as NSString).expandingTildeInPath) }
            if let url = URL(string: s), url.scheme != nil { return url }
            return URL(fileURLWithPath: s)
        default:
            return nil
        }
    }
}
