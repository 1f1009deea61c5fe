import SimulatedAppIntents  // was: import AppIntents
import SimulatedWidgetKit  // was: import WidgetKit

// Widget code with the mistakes apps make when a widget, its app and their
// intents share settings (docs/apple-traps.md, "Widgets and their intents";
// each is a scenario under scenarios/).

/// A provider that reads `UserDefaults.standard`: in the widget extension that
/// is the extension's own domain, never the app's writes to the group.
struct StandardNotesProvider: TimelineProvider {
    func placeholder(in context: Context) -> NoteEntry { NoteEntry(date: Date(), lastNote: "Your last note", hour: 0) }

    func getSnapshot(in context: Context, completion: @escaping (NoteEntry) -> Void) { completion(entry()) }

    func getTimeline(in context: Context, completion: @escaping (Timeline<Entry>) -> Void) {
        completion(Timeline(entries: [entry()], policy: .never))
    }

    private func entry() -> NoteEntry {
        NoteEntry(date: Date(), lastNote: UserDefaults.standard.string(forKey: "lastNote") ?? "No notes yet", hour: 0)
    }
}

func saveLastNote(_ text: String) {
    UserDefaults(suiteName: appGroupIdentifier)!.set(text, forKey: "lastNote")
}

/// Saves the note the widget shows, and asks for no reload: a widget whose
/// timeline says `.never` shows the old note until something reloads it.
struct SaveNoteIntent: AppIntent {
    static var title: LocalizedStringResource = "Save Note"

    @Parameter(title: "Text")
    var text: String

    func perform() async throws -> some IntentResult & ProvidesDialog {
        saveLastNote(text)
        return .result(dialog: "Saved \(text).")
    }
}

/// The fix: reload the widget's kind after the write.
struct SaveNoteAndReloadIntent: AppIntent {
    static var title: LocalizedStringResource = "Save Note and Reload"

    @Parameter(title: "Text")
    var text: String

    func perform() async throws -> some IntentResult & ProvidesDialog {
        saveLastNote(text)
        WidgetCenter.shared.reloadTimelines(ofKind: "Notes")
        return .result(dialog: "Saved \(text).")
    }
}

/// The app's background refresh (a `BGAppRefreshTask`'s handler, a silent
/// push): saves what it fetched and reloads the widget, every time.
enum NotesRefresh {
    static func handle(fetched note: String) {
        saveLastNote(note)
        WidgetCenter.shared.reloadTimelines(ofKind: "Notes")
    }
}

struct ThemeEntry: TimelineEntry {
    let date: Date
    let theme: String
    let storedTheme: String?
}

/// A widget that shows the app's theme through its own `@AppStorage`, with
/// its own default: the app's "dark" (NotesSettingsView.swift) is a default
/// the store never holds, so this reads "light" until the app writes one.
struct ThemeWidgetProvider: TimelineProvider {
    @AppStorage("theme", store: UserDefaults(suiteName: appGroupIdentifier)) var theme = "light"

    func placeholder(in context: Context) -> ThemeEntry { ThemeEntry(date: Date(), theme: "light", storedTheme: nil) }

    func getSnapshot(in context: Context, completion: @escaping (ThemeEntry) -> Void) { completion(entry()) }

    func getTimeline(in context: Context, completion: @escaping (Timeline<Entry>) -> Void) {
        completion(Timeline(entries: [entry()], policy: .never))
    }

    private func entry() -> ThemeEntry {
        ThemeEntry(date: Date(), theme: theme, storedTheme: UserDefaults(suiteName: appGroupIdentifier)?.string(forKey: "theme"))
    }
}

/// Where the favorite widget keeps its state. The mistake: `.standard`, which
/// in the widget extension is the extension's own domain; the widget shows
/// the toggle's state, the app never sees it. (`widget-favorite group` runs
/// the fix, the app group's suite.)
enum FavoriteStore {
    static var defaults = UserDefaults.standard
}

struct FavoriteEntry: TimelineEntry {
    let date: Date
    let isFavorite: Bool
}

struct FavoriteProvider: TimelineProvider {
    func placeholder(in context: Context) -> FavoriteEntry { FavoriteEntry(date: Date(), isFavorite: false) }

    func getSnapshot(in context: Context, completion: @escaping (FavoriteEntry) -> Void) { completion(entry()) }

    func getTimeline(in context: Context, completion: @escaping (Timeline<Entry>) -> Void) {
        completion(Timeline(entries: [entry()], policy: .never))
    }

    private func entry() -> FavoriteEntry { FavoriteEntry(date: Date(), isFavorite: FavoriteStore.defaults.bool(forKey: "favorite")) }
}

/// The widget's toggle: `Toggle(isOn: entry.isFavorite, intent: ToggleFavoriteIntent())`.
struct ToggleFavoriteIntent: SetValueIntent {
    static var title: LocalizedStringResource = "Favorite"

    @Parameter(title: "Favorite")
    var value: Bool

    func perform() async throws -> some IntentResult {
        FavoriteStore.defaults.set(value, forKey: "favorite")
        return .result()
    }
}
