import Foundation
import PropertyList

/// A type a parameter or a result's value may have (Apple's underscored
/// marker, which the framework's value types adopt). Here: `String`, `Int`,
/// `Double`, `Bool`, `Date`, `URL`, an `AppEnum`, and an optional of any of
/// them; a parameter of another type is refused when the intent is run.
public protocol _IntentValue {
    /// The type without its optional (`String` for `String?`): what a parameter's `default` is.
    associatedtype UnwrappedType = Self
}

extension String: _IntentValue {}
extension Int: _IntentValue {}
extension Double: _IntentValue {}
extension Bool: _IntentValue {}
extension Date: _IntentValue {}
extension URL: _IntentValue {}
extension Optional: _IntentValue where Wrapped: _IntentValue {
    public typealias UnwrappedType = Wrapped
}

/// A type with a fixed set of values for a parameter (a `String` or other
/// raw value per case), with the names a person sees for the type and each case.
///
/// ```swift
/// enum NoteColor: String, AppEnum {
///     case yellow, blue
///     static var typeDisplayRepresentation: TypeDisplayRepresentation = "Color"
///     static var caseDisplayRepresentations: [NoteColor: DisplayRepresentation] = [.yellow: "Yellow", .blue: "Blue"]
/// }
/// ```
public protocol AppEnum: _IntentValue, StaticDisplayRepresentable, RawRepresentable, Sendable where RawValue: LosslessStringConvertible {}

/// What the runner knows of each supported value type: its name, how a
/// parameter's text becomes it, and how it is reported as a property-list value.
protocol IntentValueKind {
    /// "a whole number, e.g. 3": what a parameter of the type takes.
    static var expected: String { get }
    static func parse(_ text: String) -> Self?
    var reported: PlistValue { get }
}

extension String: IntentValueKind {
    static var expected: String { "text" }
    static func parse(_ text: String) -> String? { text }
    var reported: PlistValue { .string(self) }
}

extension Int: IntentValueKind {
    static var expected: String { "a whole number, e.g. 3" }
    static func parse(_ text: String) -> Int? { Int(text) }
    var reported: PlistValue { .integer(Int64(self)) }
}

extension Double: IntentValueKind {
    static var expected: String { "a number, e.g. 1.5" }
    static func parse(_ text: String) -> Double? { Double(text).flatMap { $0.isFinite ? $0 : nil } }
    var reported: PlistValue { .real(self) }
}

extension Bool: IntentValueKind {
    static var expected: String { "true or false" }
    static func parse(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "1": true
        case "false", "no", "0": false
        default: nil
        }
    }
    var reported: PlistValue { .bool(self) }
}

extension Date: IntentValueKind {
    static var expected: String { "an ISO 8601 date, e.g. 2026-11-22T10:00:00Z" }
    static func parse(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
    var reported: PlistValue { .date(self) }
}

extension URL: IntentValueKind {
    static var expected: String { "a URL with a scheme, e.g. https://example.com/a" }
    static func parse(_ text: String) -> URL? {
        guard let url = URL(string: text), url.scheme != nil else { return nil }
        return url
    }
    var reported: PlistValue { .string(absoluteString) }
}

/// An optional's wrapped type and its `nil`, for a parameter declared `String?`.
protocol OptionalIntentValue {
    static var wrappedType: Any.Type { get }
    static var nothing: Self { get }
    var wrappedValue: Any? { get }
}

extension Optional: OptionalIntentValue {
    static var wrappedType: Any.Type { Wrapped.self }
    static var nothing: Self { nil }
    var wrappedValue: Any? { self.map { $0 } }
}

/// The supported value types, looked at through their metatype.
enum IntentValues {
    /// How `type` reads as a parameter's text: its name and what it takes (an `AppEnum`: its cases).
    static func describe(_ type: Any.Type) -> (name: String, expected: String)? {
        if let optional = type as? OptionalIntentValue.Type { return describe(optional.wrappedType) }
        if let kind = type as? IntentValueKind.Type { return (String(describing: type), kind.expected) }
        if let enumeration = type as? any AppEnum.Type {
            return (String(describing: type), "one of " + cases(of: enumeration).joined(separator: ", "))
        }
        return nil
    }

    /// `text` as a value of `type` (unwrapped for an optional), or nil when it is not one.
    static func parse(_ text: String, as type: Any.Type) -> Any? {
        if let optional = type as? OptionalIntentValue.Type { return parse(text, as: optional.wrappedType) }
        if let kind = type as? IntentValueKind.Type { return kind.parse(text) }
        if let enumeration = type as? any AppEnum.Type { return parseCase(text, of: enumeration) }
        return nil
    }

    /// A value as it is reported (nil: none, or an optional that is nil).
    static func report(_ value: Any) -> PlistValue? {
        if let optional = value as? OptionalIntentValue { return optional.wrappedValue.flatMap(report) }
        if let kind = value as? IntentValueKind { return kind.reported }
        if let enumeration = value as? any AppEnum { return raw(of: enumeration) }
        return .string(String(describing: value))
    }

    /// The raw values of an enum's cases, in declaration order.
    static func cases<E: AppEnum>(of type: E.Type) -> [String] { E.allCases.map { "\($0.rawValue)" } }

    private static func parseCase<E: AppEnum>(_ text: String, of type: E.Type) -> E? { E.RawValue(text).flatMap(E.init(rawValue:)) }

    private static func raw<E: AppEnum>(of value: E) -> PlistValue {
        switch value.rawValue {
        case let text as String: .string(text)
        case let number as Int: .integer(Int64(number))
        default: .string("\(value.rawValue)")
        }
    }
}
