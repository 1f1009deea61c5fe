import SimulatedSwiftUI  // was: import SwiftUI — views' bodies left out (no views on Linux)

// Settings as SwiftUI code keeps them: `@AppStorage` properties in the view
// that shows them, the app group's suite made their default store at the
// app's root (`.defaultAppStorage(_:)`), and a widget that reads the same
// suite with `UserDefaults`. The trap: the values in the declarations are
// the view's own; nothing writes or registers them, so the widget reads nil
// for a setting the app shows as "dark" until the user changes it.

enum NoteLayout: String {
    case list
    case grid
}

/// `@main struct NotesApp: App`: `WindowGroup { SettingsView().defaultAppStorage(.groupSuite) }`.
enum NotesApp {
    static func start() {
        // `.defaultAppStorage(_:)` is a view modifier; without views it is the simulation's own call.
        GroupSim.defaultAppStorage(UserDefaults(suiteName: appGroupIdentifier)!)
    }
}

/// `struct SettingsView: View` (its `body`: a picker for each setting, bound to `$theme`, `$layout` …).
struct SettingsView {
    @AppStorage("theme") var theme = "dark"
    @AppStorage("fontSize") var fontSize = 14.0
    @AppStorage("layout") var layout = NoteLayout.list
    @AppStorage("showPreview") var showPreview = true
    @AppStorage("lastOpenedNote") var lastOpenedNote: String?
}

/// The widget's timeline provider: the shared suite, read as widgets read it.
struct ThemeProvider {
    func theme() -> String? {
        UserDefaults(suiteName: appGroupIdentifier)?.string(forKey: "theme")
    }
}

/// The fix on the widget's side: the same declaration, default included.
struct ThemeWidgetView {
    @AppStorage("theme", store: UserDefaults(suiteName: appGroupIdentifier)) var theme = "dark"
}
