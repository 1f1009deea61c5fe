import NotesShared

#if canImport(SwiftUI)
    import SwiftUI
#else
    import SimulatedSwiftUI
#endif

/// The app's settings, as its `SettingsView: View` keeps them (its `body`, a
/// picker bound to `$theme` and a stepper for the font size, left out: there
/// are no views on Linux). Every one is in the app group's suite, where the
/// widget and the intent read it.
struct SettingsView {
    @AppStorage(SettingsKey.theme, store: .shared) var theme = "light"
    @AppStorage(SettingsKey.accent, store: .shared) var accent = "blue"

    /// How notes are shown: Codable, stored as JSON data under one key.
    var displayOptions: DisplayOptions {
        get { DisplayOptions.load(from: .shared) }
        nonmutating set { newValue.save(to: .shared) }
    }

    /// The settings and the notes, as the app's screen shows them.
    var summary: String {
        let notes = NoteList.notes()
        return "theme=\(theme) accent=\(accent) notes=\(notes.count) last=\(notes.last ?? "-") "
            + "fontSize=\(displayOptions.fontSize) preview=\(displayOptions.showsPreview ? "on" : "off")"
    }
}
