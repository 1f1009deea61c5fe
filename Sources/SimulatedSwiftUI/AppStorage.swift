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

    private init(key: String, store: UserDefaults?, defaultValue: Value, form: StoredForm<Value>) {
        self.key = key
        self.store = store
        self.defaultValue = defaultValue
        read = form.read
        write = form.write
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

/// How a value of one type is read from a store and written to it: the one
/// place each kind of value's conversion is said, for every initializer.
struct StoredForm<T> {
    /// The stored value as `T`; nil when the key is absent or holds another type.
    let read: (UserDefaults, String) -> T?
    let write: (UserDefaults, String, T) -> Void

    /// A property-list value (Bool, Int, Double, String, Data): `object(forKey:) as? T`, and `set(_:forKey:)`.
    static var plain: StoredForm {
        StoredForm(read: { $0.object(forKey: $1) as? T }, write: { $0.set($2, forKey: $1) })
    }

    /// An optional property over `T`'s form: nil while the key is absent; writing nil removes the key.
    var optional: StoredForm<T?> {
        let (read, write) = (self.read, self.write)
        return StoredForm<T?>(
            read: { .some(read($0, $1)) },
            write: { defaults, key, value in
                if let value { write(defaults, key, value) } else { defaults.removeObject(forKey: key) }
            })
    }
}

extension StoredForm where T == URL {
    /// Read with `url(forKey:)`, written with `set(_: URL?, forKey:)` (a file URL as its path, any other archived).
    static var url: StoredForm {
        StoredForm(read: { $0.url(forKey: $1) }, write: { $0.set($2, forKey: $1) })
    }
}

extension StoredForm where T: RawRepresentable {
    /// The raw value in its own form, read as `T(rawValue:)`: a raw value no case has reads as none.
    static func raw(_ form: StoredForm<T.RawValue>) -> StoredForm {
        StoredForm(read: { form.read($0, $1).flatMap(T.init(rawValue:)) }, write: { form.write($0, $1, $2.rawValue) })
    }
}

// MARK: Values with a default: `wrappedValue` while the store has none of the type (or a raw value no case has)

extension AppStorage {
    /// A `Bool` setting.
    /// - Parameters:
    ///   - wrappedValue: The value read while the store has none for the key.
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Bool {
        self.init(key: key, store: store, defaultValue: wrappedValue, form: .plain)
    }

    /// A `Int` setting.
    /// - Parameters:
    ///   - wrappedValue: The value read while the store has none for the key.
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Int {
        self.init(key: key, store: store, defaultValue: wrappedValue, form: .plain)
    }

    /// A `Double` setting.
    /// - Parameters:
    ///   - wrappedValue: The value read while the store has none for the key.
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Double {
        self.init(key: key, store: store, defaultValue: wrappedValue, form: .plain)
    }

    /// A `String` setting.
    /// - Parameters:
    ///   - wrappedValue: The value read while the store has none for the key.
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == String {
        self.init(key: key, store: store, defaultValue: wrappedValue, form: .plain)
    }

    /// Stored as `set(_: URL?, forKey:)` stores it.
    /// - Parameters:
    ///   - wrappedValue: The value read while the store has none for the key.
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == URL {
        self.init(key: key, store: store, defaultValue: wrappedValue, form: .url)
    }

    /// A `Data` setting.
    /// - Parameters:
    ///   - wrappedValue: The value read while the store has none for the key.
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Data {
        self.init(key: key, store: store, defaultValue: wrappedValue, form: .plain)
    }

    /// An integer read as `Value(rawValue:)`.
    /// - Parameters:
    ///   - wrappedValue: The value read while the store has none for the key.
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value: RawRepresentable, Value.RawValue == Int {
        self.init(key: key, store: store, defaultValue: wrappedValue, form: .raw(.plain))
    }

    /// A string read as `Value(rawValue:)`.
    /// - Parameters:
    ///   - wrappedValue: The value read while the store has none for the key.
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value: RawRepresentable, Value.RawValue == String {
        self.init(key: key, store: store, defaultValue: wrappedValue, form: .raw(.plain))
    }
}

// MARK: Optional values: nil while the store has none, and setting nil removes the key

extension AppStorage where Value: ExpressibleByNilLiteral {
    /// An optional `Bool` setting: nil while the store has none for the key.
    /// - Parameters:
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(_ key: String, store: UserDefaults? = nil) where Value == Bool? {
        self.init(key: key, store: store, defaultValue: nil, form: StoredForm<Bool>.plain.optional)
    }

    /// An optional `Int` setting: nil while the store has none for the key.
    /// - Parameters:
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(_ key: String, store: UserDefaults? = nil) where Value == Int? {
        self.init(key: key, store: store, defaultValue: nil, form: StoredForm<Int>.plain.optional)
    }

    /// An optional `Double` setting: nil while the store has none for the key.
    /// - Parameters:
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(_ key: String, store: UserDefaults? = nil) where Value == Double? {
        self.init(key: key, store: store, defaultValue: nil, form: StoredForm<Double>.plain.optional)
    }

    /// An optional `String` setting: nil while the store has none for the key.
    /// - Parameters:
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(_ key: String, store: UserDefaults? = nil) where Value == String? {
        self.init(key: key, store: store, defaultValue: nil, form: StoredForm<String>.plain.optional)
    }

    /// An optional `URL` setting: nil while the store has none for the key.
    /// - Parameters:
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(_ key: String, store: UserDefaults? = nil) where Value == URL? {
        self.init(key: key, store: store, defaultValue: nil, form: StoredForm<URL>.url.optional)
    }

    /// An optional `Data` setting: nil while the store has none for the key.
    /// - Parameters:
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init(_ key: String, store: UserDefaults? = nil) where Value == Data? {
        self.init(key: key, store: store, defaultValue: nil, form: StoredForm<Data>.plain.optional)
    }
}

extension AppStorage {
    /// An optional string read as `R(rawValue:)`: nil while the store has none, or a string no case has.
    /// - Parameters:
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init<R>(_ key: String, store: UserDefaults? = nil) where Value == R?, R: RawRepresentable, R.RawValue == String {
        self.init(key: key, store: store, defaultValue: nil, form: StoredForm<R>.raw(.plain).optional)
    }

    /// An optional integer read as `R(rawValue:)`: nil while the store has none, or an integer no case has.
    /// - Parameters:
    ///   - key: The key.
    ///   - store: The defaults; nil for the default store (`GroupSim.defaultAppStorage(_:)`, else `UserDefaults.standard`).
    public init<R>(_ key: String, store: UserDefaults? = nil) where Value == R?, R: RawRepresentable, R.RawValue == Int {
        self.init(key: key, store: store, defaultValue: nil, form: StoredForm<R>.raw(.plain).optional)
    }
}
