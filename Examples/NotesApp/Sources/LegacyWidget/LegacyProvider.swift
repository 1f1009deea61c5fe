import NotesShared

#if canImport(WidgetKit)
    import WidgetKit
#else
    import SimulatedWidgetKit
#endif

// Version 1 of the widget, from before the app had an app group. It reads
// UserDefaults.standard, which in an extension is the extension's own
// domain: it never sees what the app writes, and shows the light theme
// however often the app reloads it.

struct LegacyProvider: TimelineProvider {
    func placeholder(in context: Context) -> LegacyEntry {
        LegacyEntry(date: Date(), theme: "light", noteCount: 0)
    }

    func getSnapshot(in context: Context, completion: @escaping (LegacyEntry) -> Void) {
        completion(currentEntry())
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<LegacyEntry>) -> Void) {
        completion(Timeline(entries: [currentEntry()], policy: .never))
    }

    private func currentEntry() -> LegacyEntry {
        let defaults = UserDefaults.standard  // the mistake; the fix: UserDefaults.shared, the app group's suite
        return LegacyEntry(
            date: Date(),
            theme: defaults.string(forKey: SettingsKey.theme) ?? "light",
            noteCount: defaults.stringArray(forKey: SettingsKey.notes)?.count ?? 0)
    }
}

struct LegacyEntry: TimelineEntry {
    let date: Date
    let theme: String
    let noteCount: Int
}
