#if canImport(Darwin)
    import Foundation
#else
    import SimulatedFoundation  // Linux: Foundation with groupsim's UserDefaults
#endif

// Codable settings stored as JSON data under one key, with a default value
// when nothing (or something unreadable) is stored.

public protocol DefaultInitializable {
    init()
}

public protocol UserDefaultsPersistable: Codable, DefaultInitializable {
    static var key: String { get }
}

public enum UserDefaultsPersister<A: UserDefaultsPersistable> {
    public static func save(_ value: A, to defaults: UserDefaults) {
        let encoder = JSONEncoder()
        if let encoded = try? encoder.encode(value) {
            defaults.set(encoded, forKey: A.key)
        }
    }

    public static func load(from defaults: UserDefaults) -> A {
        guard let savedData = defaults.object(forKey: A.key) as? Data else {
            return A()
        }
        let decoder = JSONDecoder()
        let loaded = try? decoder.decode(A.self, from: savedData)
        return loaded ?? A()
    }
}

extension UserDefaultsPersistable {
    public func save(to defaults: UserDefaults = .shared) {
        UserDefaultsPersister.save(self, to: defaults)
    }

    public static func load(from defaults: UserDefaults = .shared) -> Self {
        UserDefaultsPersister.load(from: defaults)
    }
}

/// How notes are shown, in the app and in the widget.
public struct DisplayOptions: UserDefaultsPersistable, Equatable, Sendable {
    public static let key = "displayOptions"
    public var fontSize = 14  // default value
    public var showsPreview = true

    public init() {}
}
