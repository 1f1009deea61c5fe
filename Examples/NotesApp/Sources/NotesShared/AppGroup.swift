#if canImport(Darwin)
    import Foundation
#else
    import SimulatedFoundation  // Linux: Foundation with groupsim's UserDefaults
#endif

// What the app's three targets share through their app group: the app
// writes the settings, the widget shows them, the intent adds notes.

/// The app group every target is entitled to (Signing & Capabilities → App Groups).
public let appGroupIdentifier = "group.com.example.notesapp"

/// The widget's kind: its `StaticConfiguration(kind:)`, and what the app and
/// the intent ask `WidgetCenter` to reload.
public let notesWidgetKind = "NotesWidget"

/// The settings' keys, in one place. Keys starting with `sync-` are also kept
/// in iCloud by the app.
public enum SettingsKey {
    public static let theme = "theme"
    public static let accent = "sync-accent"
    public static let notes = "notes"
    public static let displayOptions = DisplayOptions.key
}

extension UserDefaults {
    /// The app group's suite, with its initial values registered: never
    /// `.standard`, which in an extension is the extension's own domain.
    /// `.standard` only when the suite cannot be made, so the app still runs.
    public static let shared: UserDefaults = {
        let defaults = UserDefaults(suiteName: appGroupIdentifier) ?? .standard
        // In every process that uses the suite: registered values are never
        // written to disk, and an extension does not see what the app registered.
        defaults.register(defaults: [
            SettingsKey.theme: "light",
            SettingsKey.accent: "blue",
            SettingsKey.notes: [String](),
        ])
        return defaults
    }()
}

/// The notes, as the app and the intent add them.
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
