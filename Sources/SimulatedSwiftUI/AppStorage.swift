import SimulatedFoundation

/// SwiftUI's `@AppStorage`: a property whose value is a key of a
/// `UserDefaults`, read from it at every access and written to it with
/// `set(_:forKey:)` at every change, so another process's write is what the
/// next read sees, and this one's is what theirs see.
///
/// The value in the declaration (`@AppStorage("theme") var theme = "dark"`)
/// is this property's answer while the store has no value of its type for the
/// key. It is never written nor registered, as on Apple platforms: the key
/// stays absent for `object(forKey:)`, for other properties and for other
/// processes until something sets it (docs/apple-traps.md, "`@AppStorage`'s
/// default stays in the property").
///
/// `store: nil` (or none) is the process's default store: `UserDefaults.standard`
/// unless `GroupSim.defaultAppStorage(_:)` set another, found at each access.
/// There are no views, so nothing is invalidated on a change: code that shows
/// a setting reads it again, or observes the key (docs/api.md).
@propertyWrapper
public struct AppStorage<Value> {
    private let key: String
    private let store: UserDefaults?
    private let defaultValue: Value
    /// The stored value as `Value`; nil when the key is absent or holds another type.
    private let read: (UserDefaults, String) -> Value?
    private let write: (UserDefaults, String, Value) -> Void

    private init(
        key: String, store: UserDefaults?, defaultValue: Value, read: @escaping (UserDefaults, String) -> Value?,
        write: @escaping (UserDefaults, String, Value) -> Void
    ) {
        self.key = key
        self.store = store
        self.defaultValue = defaultValue
        self.read = read
        self.write = write
    }

    private var currentStore: UserDefaults { store ?? DefaultAppStorage.shared.current }

    /// The store's value for the key, read now; the declared default when it has none of this type.
    /// Setting it writes the store (nil, for an optional property, removes the key).
    public var wrappedValue: Value {
        get { read(currentStore, key) ?? defaultValue }
        nonmutating set { write(currentStore, key, newValue) }
    }

    /// A binding to the same key of the same store (`$theme`), for code that
    /// hands the setting on to be changed.
    public var projectedValue: Binding<Value> {
        Binding(get: { self.wrappedValue }, set: { self.wrappedValue = $0 })
    }
}

// MARK: Values with a default

extension AppStorage {
    /// A boolean user default; `wrappedValue` while the store has none.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Bool {
        self.init(key: key, store: store, defaultValue: wrappedValue) {
            $0.object(forKey: $1) as? Bool
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    /// An integer user default; `wrappedValue` while the store has none.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Int {
        self.init(key: key, store: store, defaultValue: wrappedValue) {
            $0.object(forKey: $1) as? Int
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    /// A double user default; `wrappedValue` while the store has none.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Double {
        self.init(key: key, store: store, defaultValue: wrappedValue) {
            $0.object(forKey: $1) as? Double
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    /// A string user default; `wrappedValue` while the store has none.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == String {
        self.init(key: key, store: store, defaultValue: wrappedValue) {
            $0.object(forKey: $1) as? String
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    /// A URL user default, stored as `set(_: URL?, forKey:)` stores it; `wrappedValue` while the store has none.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == URL {
        self.init(key: key, store: store, defaultValue: wrappedValue) {
            $0.url(forKey: $1)
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    /// A data user default; `wrappedValue` while the store has none.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Data {
        self.init(key: key, store: store, defaultValue: wrappedValue) {
            $0.object(forKey: $1) as? Data
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    /// An integer user default read as `Value(rawValue:)`; `wrappedValue` while
    /// the store has none, or an integer no case has.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value: RawRepresentable, Value.RawValue == Int {
        self.init(key: key, store: store, defaultValue: wrappedValue) {
            ($0.object(forKey: $1) as? Int).flatMap(Value.init(rawValue:))
        } write: {
            $0.set($2.rawValue, forKey: $1)
        }
    }

    /// A string user default read as `Value(rawValue:)`; `wrappedValue` while
    /// the store has none, or a string no case has.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value: RawRepresentable, Value.RawValue == String {
        self.init(key: key, store: store, defaultValue: wrappedValue) {
            ($0.object(forKey: $1) as? String).flatMap(Value.init(rawValue:))
        } write: {
            $0.set($2.rawValue, forKey: $1)
        }
    }
}

// MARK: Optional values: nil while the store has none, and setting nil removes the key

extension AppStorage where Value: ExpressibleByNilLiteral {
    public init(_ key: String, store: UserDefaults? = nil) where Value == Bool? {
        self.init(optional: key, store: store) {
            $0.object(forKey: $1) as? Bool
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    public init(_ key: String, store: UserDefaults? = nil) where Value == Int? {
        self.init(optional: key, store: store) {
            $0.object(forKey: $1) as? Int
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    public init(_ key: String, store: UserDefaults? = nil) where Value == Double? {
        self.init(optional: key, store: store) {
            $0.object(forKey: $1) as? Double
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    public init(_ key: String, store: UserDefaults? = nil) where Value == String? {
        self.init(optional: key, store: store) {
            $0.object(forKey: $1) as? String
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    public init(_ key: String, store: UserDefaults? = nil) where Value == URL? {
        self.init(optional: key, store: store) {
            $0.url(forKey: $1)
        } write: {
            $0.set($2, forKey: $1)
        }
    }

    public init(_ key: String, store: UserDefaults? = nil) where Value == Data? {
        self.init(optional: key, store: store) {
            $0.object(forKey: $1) as? Data
        } write: {
            $0.set($2, forKey: $1)
        }
    }
}

extension AppStorage {
    /// An optional string user default read as `R(rawValue:)`: nil while the store has none, or a string no case has.
    public init<R>(_ key: String, store: UserDefaults? = nil) where Value == R?, R: RawRepresentable, R.RawValue == String {
        self.init(optional: key, store: store) {
            ($0.object(forKey: $1) as? String).flatMap(R.init(rawValue:))
        } write: {
            $0.set($2.rawValue, forKey: $1)
        }
    }

    /// An optional integer user default read as `R(rawValue:)`: nil while the store has none, or an integer no case has.
    public init<R>(_ key: String, store: UserDefaults? = nil) where Value == R?, R: RawRepresentable, R.RawValue == Int {
        self.init(optional: key, store: store) {
            ($0.object(forKey: $1) as? Int).flatMap(R.init(rawValue:))
        } write: {
            $0.set($2.rawValue, forKey: $1)
        }
    }

    /// An optional property over `Wrapped`: reads nil while the key is absent;
    /// writing nil removes the key, anything else is written by `write`.
    private init<Wrapped>(
        optional key: String, store: UserDefaults?, read: @escaping (UserDefaults, String) -> Wrapped?,
        write: @escaping (UserDefaults, String, Wrapped) -> Void
    ) where Value == Wrapped? {
        self.init(key: key, store: store, defaultValue: nil) { defaults, key in
            .some(read(defaults, key))
        } write: { defaults, key, value in
            if let value { write(defaults, key, value) } else { defaults.removeObject(forKey: key) }
        }
    }
}
