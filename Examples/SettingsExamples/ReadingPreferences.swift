import SimulatedFoundation  // was: import Foundation — the only change this file needs

// Initial preferences, a shared app-group suite, a property wrapper and
// enum keys: a reading app's settings written the usual way.

/// The group every target of the example app is entitled to.
let appGroupIdentifier = "group.com.example.notes"

/// First version: check a marker key and write the initial values once.
/// `bool(forKey:)` cannot tell a stored false from a missing key, so the
/// marker must be set to true.
func loadSettings() {
    let defaults = UserDefaults.standard

    if defaults.bool(forKey: "SettingsSaved") == false {
        defaults.set(true, forKey: "SettingsSaved")
        defaults.set("standard", forKey: "ReadingMode")
        defaults.set(0, forKey: "HighScore")
    }
}

/// Better: registered defaults are never written to disk and never replace
/// a stored value, so they are registered at every launch.
func registerInitialPreferences() {
    UserDefaults.standard.register(defaults: [
        "ReadingMode": "standard",
        "HighScore": 0,
    ])
}

/// The shared suite, with the standard defaults as a fallback when the
/// suite cannot be opened, so callers never deal with an optional.
extension UserDefaults {
    static var shared: UserDefaults {
        guard let defaults = UserDefaults(suiteName: appGroupIdentifier) else {
            return UserDefaults.standard
        }

        return defaults
    }
}

/// The reading mode as a property, for key-value observing. On Apple
/// platforms it is `@objc dynamic` and named as its key; Linux cannot
/// compile `@objc`, so that is the one change (docs/api.md).
extension UserDefaults {
    var ReadingMode: String? { string(forKey: "ReadingMode") }
}

/// Calls `update` with every new reading mode, from any target, as long as
/// the returned observation is kept (the `shared` instance it was made
/// through is a new one at every use).
func watchReadingMode(_ update: @escaping (String?) -> Void) -> NSKeyValueObservation {
    UserDefaults.shared.observe(\.ReadingMode, options: [.new]) { _, change in
        update(change.newValue ?? nil)
    }
}

/// Stores whatever the reading mode is in the suite every target reads.
func shareReadingMode(_ mode: String) {
    guard let defaults = UserDefaults(suiteName: appGroupIdentifier) else { return }
    defaults.set(mode, forKey: "ReadingMode")
}

/// The wrapper from the property-wrapper proposal: stringly typed, and
/// blind to registered defaults, but common.
@propertyWrapper struct UserDefault<T> {
    let key: String
    let defaultValue: T

    var wrappedValue: T {
        get {
            UserDefaults.standard.object(forKey: key) as? T ?? defaultValue
        }
        set {
            UserDefaults.standard.set(newValue, forKey: key)
        }
    }
}

struct Profile {
    @UserDefault(key: "username", defaultValue: "Anonymous") var username: String
    @UserDefault(key: "HighScore", defaultValue: 0) var highScore: Int
}

/// Keys as enum cases instead of strings.
extension UserDefaults {
    enum AppKeys: String {
        case name, emailAddress
    }

    func setValue(_ value: String, forKey key: AppKeys) {
        UserDefaults.standard.set(value, forKey: key.rawValue)
    }
}

/// Mirrors every "sync-" setting to the cloud store whenever this process
/// changes its defaults, and suppresses its own echo while applying values
/// from the store. (Sendable because its handlers run on the main queue
/// only; Foundation on Linux asks observer blocks to be Sendable.)
final class CloudDefaults: @unchecked Sendable {
    static let shared = CloudDefaults()
    private var ignoreLocalChanges = false
    private var observer: NSObjectProtocol?

    private init() {}

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    func start() {
        observer = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: nil, queue: .main) {
            [unowned self] note in
            self.updateRemote(note: note)
        }
    }

    private func updateRemote(note: Notification) {
        guard ignoreLocalChanges == false else { return }

        for (key, value) in UserDefaults.standard.dictionaryRepresentation() {
            guard key.hasPrefix("sync-") else { continue }
            NSUbiquitousKeyValueStore.default.set(value, forKey: key)
        }
    }

    /// What the original runs when the cloud store changes remotely.
    func updateLocal(from store: [String: Any]) {
        ignoreLocalChanges = true

        for (key, value) in store {
            guard key.hasPrefix("sync-") else { continue }
            UserDefaults.standard.set(value, forKey: key)
        }

        ignoreLocalChanges = false
    }
}
