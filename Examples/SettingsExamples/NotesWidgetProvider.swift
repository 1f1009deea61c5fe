import SimulatedWidgetKit  // was: import WidgetKit

// The Notes widget's provider, in the shape of Xcode's Widget Extension
// template: five entries an hour apart, from the note the app last saved in
// the app group. Only the import differs from the code on a device.

struct NoteEntry: TimelineEntry {
    let date: Date
    let lastNote: String
    let hour: Int
}

struct NotesProvider: TimelineProvider {
    /// The template says `.atEnd`; the example runs with each policy.
    var policy: (Date) -> TimelineReloadPolicy = { _ in .atEnd }

    func placeholder(in context: Context) -> NoteEntry {
        NoteEntry(date: Date(), lastNote: "Your last note", hour: 0)
    }

    func getSnapshot(in context: Context, completion: @escaping (NoteEntry) -> Void) {
        let entry = NoteEntry(date: Date(), lastNote: context.isPreview ? "Buy milk" : lastNote(), hour: 0)
        completion(entry)
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<Entry>) -> Void) {
        var entries: [NoteEntry] = []

        // Generate a timeline consisting of five entries an hour apart, starting from the current date.
        let currentDate = Date()
        let note = lastNote()
        for hourOffset in 0..<5 {
            let entryDate = Calendar.current.date(byAdding: .hour, value: hourOffset, to: currentDate)!
            entries.append(NoteEntry(date: entryDate, lastNote: note, hour: hourOffset))
        }

        let timeline = Timeline(entries: entries, policy: policy(currentDate))
        completion(timeline)
    }

    private func lastNote() -> String {
        UserDefaults(suiteName: "group.com.example.notes")?.string(forKey: "lastNote") ?? "No notes yet"
    }
}

/// A provider that loads its data and, on one path, forgets to call the
/// completion: the widget keeps what it showed.
struct ForgetfulProvider: TimelineProvider {
    func placeholder(in context: Context) -> NoteEntry { NoteEntry(date: Date(), lastNote: "Your last note", hour: 0) }

    func getSnapshot(in context: Context, completion: @escaping (NoteEntry) -> Void) { completion(placeholder(in: context)) }

    func getTimeline(in context: Context, completion: @escaping (Timeline<Entry>) -> Void) {
        guard let note = UserDefaults(suiteName: "group.com.example.notes")?.string(forKey: "lastNote") else {
            return  // the bug: no timeline when there is no note yet
        }
        completion(Timeline(entries: [NoteEntry(date: Date(), lastNote: note, hour: 0)], policy: .never))
    }
}

/// A provider that answers with what it has cached, then again with fresh
/// data: WidgetKit takes one timeline per request.
struct TwiceProvider: TimelineProvider {
    func placeholder(in context: Context) -> NoteEntry { NoteEntry(date: Date(), lastNote: "Your last note", hour: 0) }

    func getSnapshot(in context: Context, completion: @escaping (NoteEntry) -> Void) { completion(placeholder(in: context)) }

    func getTimeline(in context: Context, completion: @escaping (Timeline<Entry>) -> Void) {
        completion(Timeline(entries: [NoteEntry(date: Date(), lastNote: "cached", hour: 0)], policy: .never))
        completion(Timeline(entries: [NoteEntry(date: Date(), lastNote: "fresh", hour: 0)], policy: .never))
    }
}
