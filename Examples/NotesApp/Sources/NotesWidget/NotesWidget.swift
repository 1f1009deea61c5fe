import NotesShared

#if canImport(WidgetKit)
    import WidgetKit
#else
    import SimulatedWidgetKit
#endif
#if canImport(os)
    import os
#else
    import SimulatedOSLog
#endif

// The widget's provider and entry, in the shape of Xcode's Widget Extension
// template (its view and its `Widget` left out: there are no views on Linux).

private let logger = Logger(subsystem: "com.example.notesapp.widget", category: "timeline")

struct Provider: TimelineProvider {
    func placeholder(in context: Context) -> NoteEntry {
        NoteEntry(date: Date(), theme: "light", accent: "blue", noteCount: 1, lastNote: "Buy milk", fontSize: 14)
    }

    func getSnapshot(in context: Context, completion: @escaping (NoteEntry) -> Void) {
        completion(context.isPreview ? placeholder(in: context) : currentEntry())
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<NoteEntry>) -> Void) {
        // One entry, what the app group holds now, and `.never`: the widget
        // changes only when the settings or the notes do, and whoever changes
        // them (the app, AddNoteIntent) reloads it. A time-based policy would
        // spend the daily reload budget on showing the same entry again.
        let entry = currentEntry()
        logger.info("timeline: \(entry.noteCount) notes, theme \(entry.theme, privacy: .public)")
        completion(Timeline(entries: [entry], policy: .never))
    }

    private func currentEntry() -> NoteEntry {
        let defaults = UserDefaults.shared
        let notes = NoteList.notes(in: defaults)
        return NoteEntry(
            date: Date(),
            theme: defaults.string(forKey: SettingsKey.theme) ?? "light",
            accent: defaults.string(forKey: SettingsKey.accent) ?? "blue",
            noteCount: notes.count,
            lastNote: notes.last,
            fontSize: DisplayOptions.load(from: defaults).fontSize)
    }
}

struct NoteEntry: TimelineEntry {
    let date: Date
    let theme: String
    let accent: String
    let noteCount: Int
    let lastNote: String?
    let fontSize: Int
}
