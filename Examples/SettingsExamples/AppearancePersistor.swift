import SimulatedFoundation  // was: import Foundation — the only change this file needs

// Settings behind a persistor struct: keys in an enum, a throwing
// key-value store injected in init (UserDefaults in the app, a mock in
// tests), typed computed properties with their defaults.

protocol KeyValueStoring {
    func object(forKey key: String) throws -> Any?
    func set(_ value: Any, forKey key: String) throws
    func removeObject(forKey key: String) throws
}

/// The store the app injects: a UserDefaults suite behind the throwing API.
final class KeyValueStore: KeyValueStoring {
    private let defaults: UserDefaults

    init(defaults: UserDefaults) {
        self.defaults = defaults
    }

    func object(forKey key: String) throws -> Any? { defaults.object(forKey: key) }
    func set(_ value: Any, forKey key: String) throws { defaults.set(value, forKey: key) }
    func removeObject(forKey key: String) throws { defaults.removeObject(forKey: key) }
}

protocol AppearancePreferencesPersistor {
    var isOmnibarVisible: Bool { get set }
    var isProtectionsReportVisible: Bool { get set }
    var userPreferences: [String: String] { get set }
    var lastUpdateCheck: Date { get set }
}

struct AppearancePreferencesUserDefaultsPersistor: AppearancePreferencesPersistor {

    enum Key: String {
        case newTabPageIsOmnibarVisible = "new-tab-page.omnibar.is-visible"
        case newTabPageIsProtectionsReportVisible = "new-tab-page.protections-report.is-visible"
        case userPreferences = "user.preferences"
        case lastUpdateCheck = "last.update.check"
    }

    private let keyValueStore: KeyValueStoring

    init(keyValueStore: KeyValueStoring) {
        self.keyValueStore = keyValueStore
    }

    var isOmnibarVisible: Bool {
        get { (try? keyValueStore.object(forKey: Key.newTabPageIsOmnibarVisible.rawValue) as? Bool) ?? true }
        set { try? keyValueStore.set(newValue, forKey: Key.newTabPageIsOmnibarVisible.rawValue) }
    }

    var isProtectionsReportVisible: Bool {
        get { (try? keyValueStore.object(forKey: Key.newTabPageIsProtectionsReportVisible.rawValue) as? Bool) ?? false }
        set { try? keyValueStore.set(newValue, forKey: Key.newTabPageIsProtectionsReportVisible.rawValue) }
    }

    var userPreferences: [String: String] {
        get { (try? keyValueStore.object(forKey: Key.userPreferences.rawValue) as? [String: String]) ?? [:] }
        set { try? keyValueStore.set(newValue, forKey: Key.userPreferences.rawValue) }
    }

    var lastUpdateCheck: Date {
        get { (try? keyValueStore.object(forKey: Key.lastUpdateCheck.rawValue) as? Date) ?? Date.distantPast }
        set { try? keyValueStore.set(newValue, forKey: Key.lastUpdateCheck.rawValue) }
    }
}

enum EditorTheme: String {
    case system, paper, night
}

protocol SettingsPersistor {
    var optionalUserName: String? { get set }
    var selectedTheme: EditorTheme? { get set }
}

struct SettingsUserDefaultsPersistor: SettingsPersistor {

    enum Key: String {
        case optionalUserName = "user.name"
        case optionalTheme = "app.theme"
    }

    private let keyValueStore: KeyValueStoring

    init(keyValueStore: KeyValueStoring) {
        self.keyValueStore = keyValueStore
    }

    var optionalUserName: String? {
        get { try? keyValueStore.object(forKey: Key.optionalUserName.rawValue) as? String }
        set {
            if let value = newValue {
                try? keyValueStore.set(value, forKey: Key.optionalUserName.rawValue)
            } else {
                try? keyValueStore.removeObject(forKey: Key.optionalUserName.rawValue)
            }
        }
    }

    var selectedTheme: EditorTheme? {
        get {
            guard let rawValue = try? keyValueStore.object(forKey: Key.optionalTheme.rawValue) as? String else { return nil }
            return EditorTheme(rawValue: rawValue)
        }
        set {
            if let value = newValue {
                try? keyValueStore.set(value.rawValue, forKey: Key.optionalTheme.rawValue)
            } else {
                try? keyValueStore.removeObject(forKey: Key.optionalTheme.rawValue)
            }
        }
    }
}

struct PlatformSettingsUserDefaultsPersistor {

    enum Key: String {
        case platformSpecificSetting = "platform.specific.setting"
    }

    private let keyValueStore: KeyValueStoring

    init(keyValueStore: KeyValueStoring) {
        self.keyValueStore = keyValueStore
    }

    var platformSpecificSetting: Bool {
        get {
            #if os(iOS)
                return (try? keyValueStore.object(forKey: Key.platformSpecificSetting.rawValue) as? Bool) ?? false
            #elseif os(macOS)
                return (try? keyValueStore.object(forKey: Key.platformSpecificSetting.rawValue) as? Bool) ?? true
            #else
                // Linux, where the simulation runs: the iOS default, since it simulates an iOS device.
                return (try? keyValueStore.object(forKey: Key.platformSpecificSetting.rawValue) as? Bool) ?? false
            #endif
        }
        set {
            try? keyValueStore.set(newValue, forKey: Key.platformSpecificSetting.rawValue)
        }
    }
}

/// The mock the tests inject instead of UserDefaults.
class MockKeyValueStore: KeyValueStoring {
    private var storage: [String: Any] = [:]

    func object(forKey key: String) throws -> Any? {
        return storage[key]
    }

    func set(_ value: Any, forKey key: String) throws {
        storage[key] = value
    }

    func removeObject(forKey key: String) throws {
        storage.removeValue(forKey: key)
    }
}
