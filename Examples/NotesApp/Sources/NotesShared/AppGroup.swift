import SimulatedFoundation  // was: import Foundation — the only change from the app's iOS code

// The settings every target of the app shares through its app group: the
// app writes them, the widget shows them, the intent extension adds notes.

/// The app group all three targets are entitled to (Signing & Capabilities → App Groups).
public let appGroupIdentifier = "group.com.example.notesapp"

/// The settings' keys, in one place. Keys starting with `CloudSync.prefix`
/// are also kept in iCloud.
public enum SettingsKey {
    public static let theme = "theme"
    public static let notes = "notes"
    public static let displayOptions = DisplayOptions.key
    public static let accent = "sync-accent"

    /// What the app and the widgets show, in the order they show it.
    public static let shown = [theme, accent, notes, displayOptions]
}

extension UserDefaults {
    /// The app group's suite: never `.standard`, which in an extension is
    /// the extension's own private domain.
    public static let shared: UserDefaults = {
        guard let defaults = UserDefaults(suiteName: appGroupIdentifier) else {
            return UserDefaults.standard
        }
        return defaults
    }()
}

/// Initial values, registered at every launch of every target: they are
/// never written to disk, and an extension does not see what the app
/// registered.
public func registerDefaultSettings() {
    UserDefaults.shared.register(defaults: [
        SettingsKey.theme: "light",
        SettingsKey.accent: "blue",
        SettingsKey.notes: [String](),
    ])
}

/// The notes, as the app and the intent extension add them.
public enum NoteList {
    public static func notes(in defaults: UserDefaults = .shared) -> [String] {
        defaults.stringArray(forKey: SettingsKey.notes) ?? []
    }

    /// Appends `text` and returns the list as it is now.
    @discardableResult
    public static func add(_ text: String, to defaults: UserDefaults = .shared) -> [String] {
        var notes = notes(in: defaults)
        notes.append(text)
        defaults.set(notes, forKey: SettingsKey.notes)
        return notes
    }
}
