import Foundation
import PropertyList

/// A value type that can live in defaults. The common types conform already;
/// an enum conforms by declaring `DefaultsStorable` (its raw value is stored),
/// a Codable struct by declaring `DefaultsCodable` (stored as a dictionary,
/// readable with `groupsim defaults read`).
public protocol DefaultsStorable: Sendable {
    /// nil means "remove the key" (an Optional set to nil).
    func plistValue() throws -> PlistValue?
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
    func registrationValue() throws -> PlistValue?
}

extension DefaultsKey: AnyDefaultsKey {
    public func registrationValue() throws -> PlistValue? { try defaultValue.plistValue() }
}

extension GroupDefaults {
    /// Reads the typed value; the key's default if the key is absent or holds another type.
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
    public func set<Value>(_ value: Value, for key: DefaultsKey<Value>) throws {
        set(try value.plistValue(), forKey: key.name)
    }

    /// Puts the declared defaults into the registration domain.
    public func register(_ keys: any AnyDefaultsKey...) throws {
        var defaults: [String: PlistValue] = [:]
        for key in keys { if let value = try key.registrationValue() { defaults[key.name] = value } }
        register(defaults: defaults)
    }

    /// Removes the stored value, so the registered default shows again.
    public func reset<Value>(_ key: DefaultsKey<Value>) { removeObject(forKey: key.name) }

    /// The typed changes of one key.
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
    public func plistValue() throws -> PlistValue? {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try BinaryPropertyList.decode(encoder.encode(self))
    }

    public init?(plistValue: PlistValue) {
        guard let decoded = try? PropertyListDecoder().decode(Self.self, from: BinaryPropertyList.encode(plistValue)) else { return nil }
        self = decoded
    }
}
