import Foundation
import GroupDefaults
import PropertyList

/// Values between the simulated defaults and the shapes Foundation's
/// `UserDefaults` hands out: numbers and booleans as `NSNumber` (so an
/// integer 1 reads as `true` through `as? Bool` and a real 2.0 as `2`
/// through `as? Int`), strings, dates, data, `[Any]` and `[String: Any]`.
enum FoundationBridge {
    static func object(_ value: PlistValue) -> Any {
        switch value {
        case .integer(let i): NSNumber(value: i)
        case .real(let d): storedFloat(d).map { NSNumber(value: $0) } ?? NSNumber(value: d)
        case .bool(let b): NSNumber(value: b)
        case .string(let s): s
        case .date(let d): d
        case .data(let d): d
        case .array(let a): a.map(object)
        case .dictionary(let d): dictionary(d)
        }
    }

    /// The `Float` a real was stored from, when it reads as one. The file
    /// keeps 8-byte reals only, so a `Float` is stored widened (12.34 as
    /// 12.34000015258789); a real that is exactly a `Float`'s value and needs
    /// more digits than that `Float` does reads back as the `Float`, as an
    /// `NSNumber` made from a `Float` keeps its kind on Apple platforms: its
    /// text is "12.34". (A `Double` made from a `Float` reads so too.)
    static func storedFloat(_ real: Double) -> Float? {
        let float = Float(real)
        guard Double(float) == real, Double("\(float)") != real else { return nil }
        return float
    }

    /// `string(forKey:)`: a string, or a number's text as `NSNumber.stringValue` gives it.
    static func string(_ value: consuming PlistValue?) -> String? {
        // A string, the commonest, without a second switch in another module.
        if case .string(let string)? = value { return string }
        if case .real(let real)? = value, let float = storedFloat(real) { return "\(float)" }
        return Conversions.string(consume value)
    }

    static func dictionary(_ values: [String: PlistValue]) -> [String: Any] {
        values.mapValues(object)
    }

    /// A caller's value as a property list; a value Foundation would raise
    /// NSInvalidArgumentException for is reported (naming the call and key
    /// path) and gives nil, so the call changes nothing.
    static func propertyList(_ value: Any, call: @autoclosure () -> String, path: String) -> PlistValue? {
        // The commonest value, without the general conversion's reflection.
        if type(of: value) == String.self, let string = value as? String { return .string(string) }
        do {
            return try PlistValue(any: value, path: path)
        } catch {
            refuse(call(), because: "\(error)")
            return nil
        }
    }

    /// A whole dictionary, or nil (reported) if any of its values is not a property list.
    static func propertyLists(_ values: [String: Any], call: String) -> [String: PlistValue]? {
        var result: [String: PlistValue] = [:]
        for (key, value) in values {
            guard let converted = propertyList(value, call: call, path: key) else { return nil }
            result[key] = converted
        }
        return result
    }

    /// Says loudly that a call did nothing, where Foundation would raise or refuse.
    static func refuse(_ call: String, because reason: String) {
        Diagnostics.report(
            Diagnostic(
                kind: .callRefused,
                message:
                    "UserDefaults.\(call) did nothing: \(reason). (Foundation raises an exception or refuses here; the simulation reports it and goes on.)"
            ))
    }
}
