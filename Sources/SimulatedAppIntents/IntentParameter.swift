import Foundation
import Guarded
import PropertyList

/// An input of an app intent: `@Parameter(title: "Text") var text: String`.
/// A class, as Apple's is: the intent is a struct, and the runner fills each
/// parameter through the reference the struct holds (found with `Mirror`)
/// before it calls `perform()`.
///
/// A non-optional parameter without a default is required: an intent run
/// without it is refused, naming it. An optional one is nil when not given;
/// one with `default:` takes that value.
@propertyWrapper
public final class IntentParameter<Value>: @unchecked Sendable where Value: _IntentValue, Value: Sendable {
    // Unchecked Sendable: `stored` is under `lock`; the rest is set in `init`.
    private let lock = Locked()
    private var stored: Value?
    let title: LocalizedStringResource?
    let parameterDescription: LocalizedStringResource?
    let defaultValue: Value?

    /// A parameter shown as `title` (and `description`), with `default`'s value when it is not given.
    /// `requestValueDialog`: what the system would ask a person for it; here a missing value is an error instead.
    /// - Parameters:
    ///   - title: The parameter's name as shown.
    ///   - description: A longer explanation.
    ///   - defaultValue: The value when it is not given.
    ///   - requestValueDialog: What the system would ask a person for it; here a missing value is an error instead.
    public init(
        title: LocalizedStringResource, description: LocalizedStringResource? = nil, default defaultValue: Value.UnwrappedType? = nil,
        requestValueDialog: IntentDialog? = nil
    ) {
        self.title = title
        parameterDescription = description
        self.defaultValue = defaultValue.flatMap { $0 as? Value }
    }

    /// A parameter titled after its property.
    /// - Parameters:
    ///   - description: A longer explanation.
    ///   - defaultValue: The value when it is not given.
    ///   - requestValueDialog: What the system would ask a person for it; here a missing value is an error instead.
    public init(
        description: LocalizedStringResource? = nil, default defaultValue: Value.UnwrappedType? = nil, requestValueDialog: IntentDialog? = nil
    ) {
        title = nil
        parameterDescription = description
        self.defaultValue = defaultValue.flatMap { $0 as? Value }
    }

    /// The value: the one given, else the default, else nil for an optional.
    /// Read before any of them (a required parameter of an intent made
    /// with `init()` and never set) it stops the program, naming the parameter.
    public var wrappedValue: Value {
        get {
            if let value = lock.withLock({ stored }) ?? defaultValue { return value }
            if let optional = Value.self as? OptionalIntentValue.Type, let nothing = optional.nothing as? Value { return nothing }
            fatalError("@Parameter \(title.map { "'\($0.key)' " } ?? "")of type \(Value.self) was read before it had a value (it has no default)")
        }
        set { lock.withLock { stored = newValue } }
    }

    public var projectedValue: IntentParameter<Value> { self }
}

/// Apple's name for the property wrapper: `@Parameter`.
public typealias Parameter = IntentParameter

/// What the runner asks of a parameter, whatever its value type.
protocol AnyIntentParameter: AnyObject {
    /// `String`, `Int?`, `NoteColor` …, and what a value of it takes; nil for a type the simulation cannot fill.
    var valueType: (name: String, expected: String)? { get }
    /// Not optional and without a default: a run must give it.
    var isRequired: Bool { get }
    /// Sets it from a parameter's text; false when the text is not a value of its type.
    func assign(_ text: String) -> Bool
    /// Its value as reported (nil: none).
    var reported: PlistValue? { get }
}

extension IntentParameter: AnyIntentParameter {
    var valueType: (name: String, expected: String)? {
        guard let described = IntentValues.describe(Value.self) else { return nil }
        return (Value.self is OptionalIntentValue.Type ? described.name + "?" : described.name, described.expected)
    }

    var isRequired: Bool { defaultValue == nil && !(Value.self is OptionalIntentValue.Type) }

    func assign(_ text: String) -> Bool {
        guard let parsed = IntentValues.parse(text, as: Value.self), let value = parsed as? Value else { return false }
        wrappedValue = value
        return true
    }

    var reported: PlistValue? {
        guard let value = lock.withLock({ stored }) ?? defaultValue else { return nil }
        return IntentValues.report(value)
    }
}
