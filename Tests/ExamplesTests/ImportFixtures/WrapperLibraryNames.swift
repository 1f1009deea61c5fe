// The names libraries that wrap UserDefaults declare in extensions of
// Apple's types (cookpad/swift-user-defaults, SwiftyUserDefaults,
// sindresorhus/Defaults and apps' own helpers), used as such a library uses
// them. It compiles against SimulatedFoundation as against Foundation only
// while the simulation adds no name of its own to those types.
import SimulatedFoundation

public extension UserDefaults {
    struct Key: RawRepresentable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
    }

    enum Keys {
        public static let theme = Key("theme")
    }

    enum Change<T> {
        case initial(T)
        case update(T)
    }

    struct KeyChange {
        public let key: Key
        public let value: Any?
    }

    struct Value<T> {
        public let key: Key
        public let defaultValue: T
    }

    final class Storage {
        public let defaults: UserDefaults
        public init(_ defaults: UserDefaults) { self.defaults = defaults }
    }

    /// cookpad's token: an observer of the key that removes itself when it goes.
    final class Observation: NSObject {
        let userDefaults: UserDefaults
        let keyPath: String
        let handler: (Change<Any?>) -> Void
        private var context = 0

        init(userDefaults: UserDefaults, keyPath: String, handler: @escaping (Change<Any?>) -> Void) {
            self.userDefaults = userDefaults
            self.keyPath = keyPath
            self.handler = handler
            super.init()
            userDefaults.addObserver(self, forKeyPath: keyPath, options: [.initial, .old, .new], context: &context)
        }

        public override func observeValue(
            forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?
        ) {
            guard let change, context == &self.context else { return }
            let value = change[.newKey].flatMap { $0 is NSNull ? nil : $0 }
            handler(change.keys.contains(.oldKey) ? .update(value) : .initial(value))
        }

        public func invalidate() { userDefaults.removeObserver(self, forKeyPath: keyPath, context: &context) }

        deinit { invalidate() }
    }

    subscript(key key: Key) -> Any? {
        get { object(forKey: key.rawValue) }
        set { set(newValue, forKey: key.rawValue) }
    }

    /// The simulation's old `observe(_:_:)`, as an app might have written its own.
    func observe(_ key: String, _ handler: @escaping (KeyChange) -> Void) -> Observation {
        Observation(userDefaults: self, keyPath: key) { change in
            switch change {
            case .initial: break
            case .update(let value): handler(KeyChange(key: Key(key), value: value))
            }
        }
    }

    /// An app's shared suite, under the names the simulation once used.
    var groupDefaults: UserDefaults { UserDefaults(suiteName: "group.com.example.notes") ?? .standard }
    var simulatedProcess: String { "com.example.notes" }
    convenience init(process: String) { self.init(suiteName: process)! }
    convenience init?(suiteName: String, process: String) { self.init(suiteName: "\(process).\(suiteName)") }
}

public extension NSUbiquitousKeyValueStore {
    static let identifierVariable = "KVS_IDENTIFIER"
}

public extension UIApplication {
    static func application(process: String) -> UIApplication { .shared }
}

func useTheWrapper() -> [Any] {
    let defaults = UserDefaults(process: "com.example.notes")
    defaults[key: UserDefaults.Keys.theme] = "dark"
    let observation: UserDefaults.Observation = defaults.groupDefaults.observe("theme") { (change: UserDefaults.KeyChange) in
        _ = change.key.rawValue
    }
    let storage = UserDefaults.Storage(defaults)
    let value = UserDefaults.Value(key: .init("fontSize"), defaultValue: 14)
    let change: UserDefaults.Change<Int> = .update(value.defaultValue)
    let suite = UserDefaults(suiteName: "settings", process: defaults.simulatedProcess)
    return [observation, storage, change, suite as Any, NSUbiquitousKeyValueStore.identifierVariable, UIApplication.application(process: "")]
}
