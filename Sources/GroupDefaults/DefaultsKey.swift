import Foundation
import PropertyList

/// A value type that can live in defaults. The common types conform already;
/// an enum conforms by declaring `DefaultsStorable` (its raw value is stored),
/// a Codable struct by declaring `DefaultsCodable` (stored as a dictionary,
/// readable with `groupsim defaults read`).
public protocol DefaultsStorable: Sendable {
    /// nil means "remove the key" (an Optional set to nil).
    /// - Throws: An error of the value's own encoding (`DefaultsCodable`'s `PropertyListEncoder`).
    /// - Returns: The value as a property list.
    func plistValue() throws -> PlistValue?
    /// The value a property list holds; nil when it holds another type.
    /// - Parameter plistValue: The stored value.
    init?(plistValue: PlistValue)
}

/// A key declared once, with its type and default:
///
///     extension DefaultsKeys {
///         static let theme = DefaultsKey<Theme>("theme", default: .light)
///     }
///     defaults[.theme] = .dark
///
/// Register declared keys at launch (`defaults.register(.theme, .highScore)`)
/// so their defaults go to the registration domain, where every reader of
/// this process (and the search list) sees them.
public struct DefaultsKey<Value: DefaultsStorable>: Sendable {
    public let name: String
    public let defaultValue: Value

    /// A key and the value it reads as while nothing is stored.
    /// - Parameters:
    ///   - name: The key's name in the domain.
    ///   - defaultValue: What reads return for an absent key; `register(_:)` puts it in the registration domain.
    public init(_ name: String, default defaultValue: Value) {
        self.name = name
        self.defaultValue = defaultValue
    }
}

/// The namespace keys are declared in, as static members.
public enum DefaultsKeys {}

/// A key of any value type, for `register(_:)`.
public protocol AnyDefaultsKey: Sendable {
    var name: String { get }
    /// The key's default as a property list, for the registration domain.
    /// - Throws: What the default's `plistValue()` throws.
    /// - Returns: The default as stored; nil for an Optional default of nil.
    func registrationValue() throws -> PlistValue?
}

extension DefaultsKey: AnyDefaultsKey {
    public func registrationValue() throws -> PlistValue? { try defaultValue.plistValue() }
}

extension GroupDefaults {
    /// Reads the typed value; the key's default if the key is absent or holds another type.
    /// - Parameter key: The declared key.
    /// - Returns: The stored value, or the key's default.
    public subscript<Value>(key: DefaultsKey<Value>) -> Value {
        get { value(forKey: key.name).flatMap(Value.init(plistValue:)) ?? key.defaultValue }
        set {
            do { set(try newValue.plistValue(), forKey: key.name) } catch {
                Diagnostics.report(
                    Diagnostic(
                        kind: .encodingFailed,
                        message:
                            "could not store \(key.name) in \(domainName): its value does not encode as a property list (\(error)); the key is unchanged. Use set(_:for:) to get the error thrown."
                    ))
            }
        }
    }

    /// Sets a typed value, reporting an encoding failure.
    /// - Parameters:
    ///   - value: The new value; an Optional's nil removes the key.
    ///   - key: The declared key.
    /// - Throws: What the value's `plistValue()` throws; nothing is written then.
    public func set<Value>(_ value: Value, for key: DefaultsKey<Value>) throws {
        set(try value.plistValue(), forKey: key.name)
    }

    /// Puts the declared defaults into the registration domain.
    /// - Parameter keys: The declared keys.
    /// - Throws: What a default's `plistValue()` throws; nothing is registered then.
    public func register(_ keys: any AnyDefaultsKey...) throws {
        var defaults: [String: PlistValue] = [:]
        for key in keys { if let value = try key.registrationValue() { defaults[key.name] = value } }
        register(defaults: defaults)
    }

    /// Removes the stored value, so the registered default shows again.
    /// - Parameter key: The declared key.
    public func reset<Value>(_ key: DefaultsKey<Value>) { removeObject(forKey: key.name) }

    /// The typed changes of one key.
    /// - Parameter key: The declared key.
    /// - Returns: A stream of the key's typed value after each change, from this process or another.
    public func updates<Value>(_ key: DefaultsKey<Value>) -> AsyncStream<Value> {
        let raw = changes(forKey: key.name)
        return AsyncStream { continuation in
            let task = Task {
                for await change in raw {
                    continuation.yield(change.new.flatMap(Value.init(plistValue:)) ?? key.defaultValue)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

// MARK: Conformances

extension String: DefaultsStorable {
    public func plistValue() -> PlistValue? { .string(self) }
    public init?(plistValue: PlistValue) {
        guard let s = Conversions.string(plistValue) else { return nil }
        self = s
    }
}

extension Bool: DefaultsStorable {
    public func plistValue() -> PlistValue? { .bool(self) }
    public init?(plistValue: PlistValue) {
        guard let b = Conversions.bool(plistValue) else { return nil }
        self = b
    }
}

extension Int: DefaultsStorable {
    public func plistValue() -> PlistValue? { .integer(Int64(self)) }
    public init?(plistValue: PlistValue) {
        guard let i = Conversions.integer(plistValue) else { return nil }
        self = Int(clamping: i)
    }
}

extension Double: DefaultsStorable {
    public func plistValue() -> PlistValue? { .real(self) }
    public init?(plistValue: PlistValue) {
        guard let d = Conversions.double(plistValue) else { return nil }
        self = d
    }
}

extension Date: DefaultsStorable {
    public func plistValue() -> PlistValue? { .date(self) }
    public init?(plistValue: PlistValue) {
        guard let d = plistValue.dateValue else { return nil }
        self = d
    }
}

extension Data: DefaultsStorable {
    public func plistValue() -> PlistValue? { .data(self) }
    public init?(plistValue: PlistValue) {
        guard let d = plistValue.dataValue else { return nil }
        self = d
    }
}

extension URL: DefaultsStorable {
    public func plistValue() -> PlistValue? { Conversions.storedForm(of: self) }
    public init?(plistValue: PlistValue) {
        guard let u = Conversions.url(plistValue) else { return nil }
        self = u
    }
}

extension PlistValue: DefaultsStorable {
    public func plistValue() -> PlistValue? { self }
    public init?(plistValue: PlistValue) { self = plistValue }
}

extension Optional: DefaultsStorable where Wrapped: DefaultsStorable {
    public func plistValue() throws -> PlistValue? { try self?.plistValue() }
    public init?(plistValue: PlistValue) { self = Wrapped(plistValue: plistValue) }
}

extension Array: DefaultsStorable where Element: DefaultsStorable {
    public func plistValue() throws -> PlistValue? { .array(try compactMap { try $0.plistValue() }) }
    public init?(plistValue: PlistValue) {
        guard let array = plistValue.arrayValue else { return nil }
        let elements = array.compactMap(Element.init(plistValue:))
        guard elements.count == array.count else { return nil }
        self = elements
    }
}

extension Dictionary: DefaultsStorable where Key == String, Value: DefaultsStorable {
    public func plistValue() throws -> PlistValue? { .dictionary(try compactMapValues { try $0.plistValue() }) }
    public init?(plistValue: PlistValue) {
        guard let dictionary = plistValue.dictionaryValue else { return nil }
        let values = dictionary.compactMapValues(Value.init(plistValue:))
        guard values.count == dictionary.count else { return nil }
        self = values
    }
}

/// Enums (and other raw-representable types) store their raw value.
extension DefaultsStorable where Self: RawRepresentable, RawValue: DefaultsStorable {
    public func plistValue() throws -> PlistValue? { try rawValue.plistValue() }
    public init?(plistValue: PlistValue) {
        guard let raw = RawValue(plistValue: plistValue) else { return nil }
        self.init(rawValue: raw)
    }
}

/// Codable values are stored as property-list structures, not opaque JSON
/// blobs, so other processes and `groupsim defaults read` see their fields.
public protocol DefaultsCodable: Codable, DefaultsStorable {}

extension DefaultsCodable {
    /// - Throws: `PropertyListEncoder`'s error for a value it cannot encode.
    /// - Returns: The value's fields as a property-list dictionary (or array, or scalar).
    public func plistValue() throws -> PlistValue? {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try BinaryPropertyList.decode(encoder.encode(self))
    }

    /// Decodes the value from its property-list form; nil when that form does not decode.
    /// - Parameter plistValue: The stored value.
    public init?(plistValue: PlistValue) {
        guard let decoded = try? PropertyListDecoder().decode(Self.self, from: BinaryPropertyList.encode(plistValue)) else { return nil }
        self = decoded
    }
}
